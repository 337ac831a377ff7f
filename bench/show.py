"""`brain show` in a 100,000-block brain (bench/verify.py's brain plus bench/lifecycle.py's hub source with
its 100-fact cascade), whole commands in subprocesses, medians of 5:

- `show FACT` and `show hub.md` (by origin) with a current lineage log (what any ingest or lifecycle
  command leaves): read from the log and the few provenance records about the block;
- the same without the log: the full-ledger fallback, i.e. what every `show` cost before.

Usage: python bench/show.py [blocks] [--keep DIR]   (DIR reuses a built brain)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core import median_seconds, report  # bench/core.py, beside this script
from lifecycle import (  # bench/lifecycle.py: the hub source and how commands are run
    add_hub,
    run,
)
from verify import build  # bench/verify.py: the 100,000-block brain

LOG = "boltzmann/cache/lineage.log"


def bench_show(path: Path, blocks: int) -> None:
    if not (path / "hub.txt").exists():
        start = time.perf_counter()
        build(path, blocks)
        (path / "hub.txt").write_text(add_hub(path))
        print(f"built a {blocks}-block brain in {time.perf_counter() - start:.1f} s")
    hub = (path / "hub.txt").read_text().strip()
    # One fact of the hub's cascade (its ledger: derivation, validation, the hub's registration).
    pick = (f"from brain.brain import Brain; b = Brain.open({str(path)!r}); "
            f"print(b.ledger().closure(b.resolve_prefix({hub!r})).pop())")
    listing = subprocess.run([sys.executable, "-c", pick], capture_output=True, text=True, check=True,
                             cwd=Path(__file__).resolve().parents[1])
    fact = listing.stdout.strip()
    prime = "from brain.brain import Brain; from ingest.lineage_graph import graph_of; b = Brain.open(%r); "
    for targets, label in (
        ([fact], "show FACT"), (["hub.md"], "show ORIGIN (hub.md)"), ([fact, "--json"], "show FACT --json"),
    ):
        subprocess.run([sys.executable, "-c", prime % str(path) + "graph_of(b, b.snapshot_digest())"],
                       cwd=Path(__file__).resolve().parents[1], check=True)
        def show(targets: list[str] = targets) -> None:
            run("--brain", str(path), "show", *targets)

        report(f"{label}, lineage log current, {blocks} blocks", median_seconds(show, repeat=5), 1.0)
        (path / LOG).unlink()
        report(f"{label}, no lineage log (full ledger), {blocks} blocks", median_seconds(show, repeat=5), 5.0)


def main(argv: list[str]) -> int:
    blocks = int(argv[0]) if argv and argv[0].isdigit() else 100_000
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    with tempfile.TemporaryDirectory() as scratch:
        root = keep or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        bench_show(root / f"show-{blocks}", blocks)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
