"""Core protocol benchmarks: Merkle roots and block decoding (medians of 3 runs, printed with their targets).

Usage: python bench/core.py [ids] [blocks]   (defaults 1,000,000 ids and 100,000 blocks)

1. `merkle_root` over 1,000,000 block ids in random order            target ≤ 1.5 s
2. read + `Block.decode` (§1.5, incl. re-hash) of 100,000 block files   target ≤ 10 s
3. open a 100k-block brain and `status`                               target ≤ 1 s   (see the marked place below)
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from brain.blocks import (
    Actor,
    Block,
    CanonicalBlock,
    DerivationRecord,
    EpisodicBlock,
    ProceduralBlock,
    Producer,
    ProvenanceBlock,
    RegistrationRecord,
    SemanticBlock,
    Step,
    ValidationRecord,
)
from brain.identity import BlockId, OciDigest
from brain.merkle import merkle_root

AT = "2026-11-30T13:32:11Z"
ACTOR = Actor(id="curator@example.org", kind="human")
PRODUCER = Producer(id="acme/extractor", kind="model", version="2026-11")


def _cpu_seconds() -> float:
    times = os.times()  # includes waited-for children (the Merkle split forks one)
    return times.user + times.system + times.children_user + times.children_system


def median_seconds(run: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    """The median wall time and median CPU time of `repeat` runs of `run`."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), _cpu_seconds()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(_cpu_seconds() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def report(label: str, seconds: tuple[float, float], target: float) -> None:
    """One result line: label, median wall (and CPU, which a loaded machine inflates less), target, verdict."""
    wall, cpu = seconds
    verdict = "ok" if wall <= target else "OVER TARGET"
    print(f"{label:<52} median {wall:7.3f} s wall, {cpu:7.3f} s CPU  (target ≤ {target:g} s)  {verdict}")


def realistic_block(i: int, rnd: random.Random) -> Block:
    """One block of the mix a real brain holds: sources, derived knowledge and twice as many ledger records."""
    evidence = (BlockId.of(f"source {i % 997}".encode()),)
    target = BlockId.of(f"block {i}".encode())
    kind = i % 10
    if kind == 0:
        return CanonicalBlock(
            blob=OciDigest.of(f"bytes {i}".encode()), media_type="text/markdown", size=rnd.randrange(10**6)
        )
    if kind in (1, 2):
        return SemanticBlock(
            kind="fact",
            label=f"fact {i}",
            statement=f"Statement {i}: the Fourier transform of a Gaussian is a Gaussian (variant {rnd.random()}).",
            subject="signals",
            evidence=evidence,
            aliases=(f"alias {i}",),
        )
    if kind == 3:
        return ProceduralBlock(
            label=f"procedure {i}",
            goal="obtain the frequency content of a signal",
            steps=(Step(action="sample the signal"), Step(action=f"apply the FFT {i}", alternatives=("apply a DFT",))),
            evidence=evidence,
        )
    if kind == 4:
        return EpisodicBlock(
            summary=f"Seminar {i} derived the heat equation", occurred_at=AT, participants=("alex",), evidence=evidence
        )
    if kind in (5, 6):
        return ProvenanceBlock(record=RegistrationRecord(actor=ACTOR, at=AT, block=target, license="CC-BY-4.0"))
    if kind in (7, 8):
        return ProvenanceBlock(
            record=DerivationRecord(
                actor=ACTOR, at=AT, block=target, derived_from=evidence, producer=PRODUCER, locator=f"L{i}"
            )
        )
    return ProvenanceBlock(
        record=ValidationRecord(
            actor=ACTOR, at=AT, block=target, verdict="validated", checks=("evidence-found", "schema")
        )
    )


def bench_merkle(count: int) -> None:
    """Merkle root over `count` distinct ids handed over in random order."""
    ids = [BlockId.of(i.to_bytes(8, "big")) for i in range(count)]
    random.Random(1).shuffle(ids)
    report(f"merkle_root over {count:,} block ids", median_seconds(lambda: merkle_root(ids)), 1.5 * count / 1_000_000)


def bench_decode(count: int) -> None:
    """Read `count` block files named by their ids, decode and re-hash each."""
    rnd = random.Random(2)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for i in range(count):
            block = realistic_block(i, rnd)
            (directory / block.block_id.hex).write_bytes(block.canonical_bytes())
        names = sorted(p.name for p in directory.iterdir())

        def decode_all() -> None:
            for name in names:
                Block.decode((directory / name).read_bytes(), BlockId(name))

        report(
            f"read + Block.decode + re-hash of {len(names):,} blocks",
            median_seconds(decode_all),
            10.0 * count / 100_000,
        )


# ==== 3. open a 100k-block brain + status (owner: store/Brain engineer) ====================================
# The brain is built once through the real Writer (one commit) and cached in the temp directory, because
# creating and deleting 100,000 files dominates the run on slow filesystems; it is rebuilt if incomplete.
STATUS_CODE = (
    "import sys; from brain.brain import Brain; b = Brain.open(sys.argv[1]); s = b.snapshot(); "
    "print(sum(m.ref.block_count for m in b.modules(s).values()))"
)


def large_brain(count: int) -> Path:
    """A cached brain of `count` blocks (canonical + semantic), written by `brain.writer` in one commit."""
    from brain.brain import Brain
    from brain.errors import BrainError

    path = Path(tempfile.gettempdir()) / f"brain-bench-open-{count}"
    try:
        if sum(m.ref.block_count for m in Brain.open(path).modules().values()) == count:
            return path
    except BrainError:
        pass
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    start = time.perf_counter()
    brain = Brain.init(path)
    with brain.writer("bench@example.org") as writer:
        for n in range(count):
            data = f"source {n}".encode()
            if n % 2:
                writer.add(SemanticBlock(kind="fact", label=f"fact {n}", statement=f"statement {n}"))
            else:
                writer.add(CanonicalBlock(blob=OciDigest.of(data), media_type="text/plain", size=len(data)))
        writer.commit()
    print(f"(built a {count:,}-block brain in {time.perf_counter() - start:.1f} s, cached at {path})")
    return path


def bench_open_status(count: int) -> None:
    """Brain.open + status (snapshot, module roots and counts): in process, and as a fresh process."""
    import subprocess

    from brain.brain import Brain

    path = large_brain(count)

    def status() -> None:
        brain = Brain.open(path)
        assert sum(m.ref.block_count for m in brain.modules(brain.snapshot()).values()) == count

    report(f"open + status of a {count:,}-block brain (in process)", median_seconds(status, 7), 1.0)
    fresh = [sys.executable, "-c", STATUS_CODE, str(path)]
    report(
        f"open + status of a {count:,}-block brain (fresh python)",
        median_seconds(lambda: subprocess.run(fresh, check=True, capture_output=True), 5),
        1.0,
    )
    report(
        f"open + load and verify every composition ({count:,} ids)",
        median_seconds(lambda: [len(m) for m in Brain.open(path).modules().values()]),
        3.0 * count / 100_000,
    )


# ==== end of section 3 ===================================================================================


def main() -> None:
    ids = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    bench_merkle(ids)
    bench_decode(blocks)
    bench_open_status(blocks)  # section 3 (store/Brain engineer)


if __name__ == "__main__":
    main()
