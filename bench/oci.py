"""OCI benchmarks, one section per script: packing (bench/oci_pack.py) and push/pull (bench/oci_transfer.py).

Each section runs in its own process so that its memory measurements are its own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SECTIONS = ("oci_pack.py", "oci_transfer.py")


def main() -> None:
    """Run every section; exit non-zero if any missed its targets."""
    here = Path(__file__).resolve().parent
    failed = [name for name in SECTIONS if subprocess.run([sys.executable, str(here / name)]).returncode != 0]
    if failed:
        sys.exit(f"missed targets: {', '.join(failed)}")


if __name__ == "__main__":
    main()
