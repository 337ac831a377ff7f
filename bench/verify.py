"""`brain verify` benchmark: a 100,000-block brain verifies in ≤ 30 s (median of 3), and `--jobs` scales.

Usage: python bench/verify.py [blocks] [--keep DIR]   (default 100,000 blocks; the brain is built once
through the Writer API and reused from DIR when given)

The brain is a realistic mix: one fifth canonical sources (each with its source blob), one fifth semantic
blocks citing them, and three fifths ledger records (registration, derivation, validation), committed in
five snapshots so the history walk and the §7.7 transitions run too. It must verify clean.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from brain.blocks import (
    CanonicalBlock,
    DerivationRecord,
    ProvenanceBlock,
    RegistrationRecord,
    SemanticBlock,
    ValidationRecord,
)
from brain.brain import Brain
from brain.verify import verify_brain
from core import ACTOR, AT, PRODUCER, median_seconds, report  # bench/core.py, beside this script

CHECKS = ("evidence-not-found", "schema")
TARGET_SECONDS = 30.0
COMMITS = 5


def build(path: Path, blocks: int, brain: Brain | None = None) -> None:
    """A brain of `blocks` member blocks (sources × 5), written through the Writer in `COMMITS` commits
    (into `brain` when given: e.g. a governed one whose genesis is already written)."""
    sources = blocks // 5
    brain = brain or Brain.init(path)
    per_commit = -(-sources // COMMITS)
    with brain.writer("bench@example.org") as writer:
        for i in range(sources):
            data = f"source document {i}\n".encode()
            blob = writer.put_blob(data)
            source = CanonicalBlock(blob=blob, media_type="text/plain", size=len(data))
            fact = SemanticBlock(
                kind="fact", label=f"fact {i}", statement=f"statement {i}", evidence=(source.block_id,)
            )
            records = (
                RegistrationRecord(actor=ACTOR, at=AT, block=source.block_id),
                DerivationRecord(
                    actor=ACTOR, at=AT, block=fact.block_id, derived_from=(source.block_id,), producer=PRODUCER
                ),
                ValidationRecord(actor=ACTOR, at=AT, block=fact.block_id, verdict="validated", checks=CHECKS),
            )
            for block in (source, fact, *(ProvenanceBlock(record=r) for r in records)):
                writer.add(block)
            if (i + 1) % per_commit == 0 or i + 1 == sources:
                writer.commit()


def main(argv: list[str]) -> int:
    """Build (or reuse) the brain, then time verification with 1 worker and with all cores."""
    blocks = int(argv[0]) if argv and argv[0].isdigit() else 100_000
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    with tempfile.TemporaryDirectory() as scratch:
        path = (keep or Path(scratch)) / f"verify-{blocks}"
        if not (path / "boltzmann" / "head.json").exists():
            start = time.perf_counter()
            build(path, blocks)
            print(f"built a {blocks}-block brain in {time.perf_counter() - start:.1f} s at {path}")
        first = verify_brain(path)
        members = sum(m.block_count for m in first.modules.values())
        assert first.ok and not first.problems, first.problems[:5]
        print(f"verified clean: {members} member blocks, {first.snapshots_checked} snapshots")
        cores = os.cpu_count() or 1
        results = {}
        for jobs in sorted({1, cores}):
            results[jobs] = median_seconds(lambda jobs=jobs: verify_brain(path, jobs=jobs))
            report(f"verify {blocks} blocks, --jobs {jobs}", results[jobs], TARGET_SECONDS)
        if cores > 1:
            print(f"speed-up with {cores} workers: {results[1][0] / results[cores][0]:.2f}x wall")
            # Wall time on a shared machine is noisy; where the CPU time goes shows the split itself.
            before = os.times()
            verify_brain(path, jobs=cores)
            after = os.times()
            parent = after.user + after.system - before.user - before.system
            workers = after.children_user + after.children_system - before.children_user - before.children_system
            print(f"--jobs {cores}: {parent:.2f} s CPU in the parent, {workers:.2f} s CPU in the workers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
