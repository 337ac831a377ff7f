"""Checkout benchmark (issue 19): `brain checkout` of a 10,000- and a 100,000-block brain, whole commands in
subprocesses, medians of 5; target ≤ 0.5 s at 100,000 blocks.

A checkout moves pointers (refs.json, head.json, refs.json) and never rewrites a composition, so its cost
should not grow with the brain: the two sizes should time alike. The brains are built through the Writer
(`bench/verify.py`), branch `side` is created at the head and one more commit lands on `main`, then each
timed run switches to the other branch. `brain status` is timed beside it (the floor any command pays:
interpreter, imports, opening the brain), and the in-process cost of `brain.branches.operations.checkout`
without the interpreter's start-up. On a loaded machine compare CPU seconds: wall time there is mostly waiting.

Usage: python bench/checkout.py [blocks ...] [--keep DIR]   (defaults 10000 100000)
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core import median_seconds, report  # bench/core.py, beside this script
from verify import build  # bench/verify.py: a brain of N blocks through the Writer

from brain.blocks import EpisodicBlock
from brain.branches.operations import checkout, create_branch, current_branch
from brain.brain import Brain

BRAIN = [str(Path(sys.executable).with_name("brain"))]
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "BRAIN_ACTOR": "bench@example.org"}
ACTOR = "bench@example.org"
TARGET_SECONDS = 0.5
REPEAT = 5


def prepare(path: Path, blocks: int) -> None:
    """A `blocks`-block brain with branch `side` at the head and one more commit on main."""
    if (path / "boltzmann" / "refs.json").exists():
        return
    start = time.perf_counter()
    build(path, blocks)
    brain = Brain.open(path)
    create_branch(brain, "side", ACTOR)
    with brain.writer(ACTOR) as writer:
        writer.add(EpisodicBlock(summary="one more event on main", occurred_at="2026-11-30T13:32:11Z"))
        writer.commit()
    print(f"built a {blocks}-block brain with two branches in {time.perf_counter() - start:.1f} s")


def bench(path: Path, blocks: int) -> None:
    names = itertools.cycle(["side", "main"] if current_branch(Brain.open(path)) == "main" else ["main", "side"])

    def command() -> None:
        name = next(names)
        done = subprocess.run([*BRAIN, "--brain", str(path), "checkout", name], env=ENV, capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"brain checkout {name} failed ({done.returncode}): {done.stderr.strip()}")

    report(f"brain checkout, {blocks:,} blocks (whole command)", median_seconds(command, REPEAT), TARGET_SECONDS)

    def status() -> None:  # the floor: the interpreter, the imports, opening the brain
        subprocess.run([*BRAIN, "--brain", str(path), "status"], env=ENV, capture_output=True, check=True)

    report(f"brain status, {blocks:,} blocks (for comparison)", median_seconds(status, REPEAT), TARGET_SECONDS)

    def library() -> None:
        checkout(Brain.open(path), next(names), ACTOR)

    report(f"checkout() in process, {blocks:,} blocks", median_seconds(library, REPEAT), TARGET_SECONDS)


def main(argv: list[str]) -> int:
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    sizes = [int(a) for a in argv if a.isdigit()] or [10_000, 100_000]
    with tempfile.TemporaryDirectory() as scratch:
        for blocks in sizes:
            path = (keep or Path(scratch)) / f"checkout-{blocks}"
            prepare(path, blocks)
            bench(path, blocks)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
