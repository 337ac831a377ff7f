"""Wall time of the `brain` console script: startup, and read commands on the reference brain and on a
larger brain built through the real Writer (medians; no target is set, this tracks regressions).

Usage: python bench/cli_read.py [blocks] [runs]
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from brain.blocks import Block, CanonicalBlock
from brain.brain import Brain

BRAIN_EXE = Path(sys.executable).with_name("brain")
REFERENCE_BRAIN = Path("/work/shared/fixtures/reference-brain")


def build(path: Path, count: int) -> None:
    """A brain of `count` blocks (half canonical, half semantic) in one commit."""
    with Brain.init(path).writer("bench@example.org") as writer:
        for i in range(count):
            if i % 2:
                data = f"source document number {i}\n".encode()
                writer.add(CanonicalBlock(blob=writer.put_blob(data), media_type="text/plain", size=len(data)))
            else:
                writer.add(Block.from_payload("semantic", {"kind": "fact", "label": f"fact {i}", "statement": "s"}))
        writer.commit()


def median_seconds(args: list[str], runs: int) -> float:
    """Median wall time of `brain *args` over `runs` runs (output discarded, must succeed)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([str(BRAIN_EXE), *args], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print one median per measured command."""
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as tmp:
        reference = Path(tmp) / "reference"
        shutil.copytree(REFERENCE_BRAIN, reference)
        large = Path(tmp) / "large"
        build(large, count)
        cases = [
            ("startup (--version)", ["--version"]),
            ("status --json, reference brain", ["--brain", str(reference), "status", "--json"]),
            ("ls --all --json, reference brain", ["--brain", str(reference), "ls", "--all", "--json"]),
            (f"status --json, {count} blocks", ["--brain", str(large), "status", "--json"]),
            (f"ls --json, {count} blocks", ["--brain", str(large), "ls", "--json"]),
            (f"prove <prefix>, {count} blocks", ["--brain", str(large), "prove", Brain.open(large).module(
                next(iter(Brain.open(large).modules()))).block_ids[0].hex[:12]]),
        ]
        for name, args in cases:
            print(f"{name:40s} {median_seconds(args, runs) * 1000:8.0f} ms (median of {runs})")


if __name__ == "__main__":
    main()
