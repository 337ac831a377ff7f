"""Reconciliation benchmark (issue #19): `brain merge --plan` and `brain merge` of two branches that each
added 1,000 sources to a brain of N blocks, timed as whole `brain` processes, medians of 3.

Usage: python bench/reconcile.py [blocks ...] [--semantic]   (default: 10,000 and 100,000 blocks)

Targets at 100,000 blocks: `merge --plan` ≤ 3 s, `merge` ≤ 5 s; the cost should follow what changed since
the ancestor (2 × 1,000 sources), not the brain's size: compare the 10k and 100k figures.

The brain is built with the real writer: each source is a canonical block with its bytes and a registration
record (2 blocks); with `--semantic` each source also gets a semantic fact with its derivation and
validation records (5 blocks per source), and the lineage log is primed as ingest leaves it. Branch `x` is
created at the base; `main` and `x` then each add 1,000 sources. Between timed merges the head pointer and
refs are restored (the merge's blobs stay: the next run writes the same compositions again).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, bench/ is sys.path[0], and bench/ingest.py would shadow the `ingest` package.
sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from brain.blocks import Block, CanonicalBlock
from brain.blocks.provenance import (
    Actor,
    ActorKind,
    DerivationRecord,
    Producer,
    ProducerKind,
    ProvenanceBlock,
    RegistrationRecord,
    ValidationRecord,
    Verdict,
)
from brain.branches.operations import create_branch, resolve_branch
from brain.brain import Brain
from brain.identity import OciDigest

ACTOR = "bench@example.org"
WHO = Actor(id=ACTOR, kind=ActorKind.HUMAN)
AT = "2026-12-01T12:00:00Z"
BRAIN_EXE = Path(sys.executable).with_name("brain")
REPEAT = 3
ADDED = 1_000
TARGETS = {"plan": 3.0, "merge": 5.0}


def _source(brain_writer, tag: str, i: int, semantic: bool) -> None:  # type: ignore[no-untyped-def]
    data = f"source {tag} {i}: some text about item {i} of {tag}\n".encode()
    brain_writer.put_blob(data)
    source = CanonicalBlock(blob=OciDigest.of(data), media_type="text/plain", size=len(data))
    brain_writer.add(source)
    brain_writer.add(ProvenanceBlock(record=RegistrationRecord(actor=WHO, at=AT, block=source.block_id,
                                                               origin=f"file:{tag}/{i}.txt")))
    if semantic:
        fact = Block.from_payload("semantic", {"kind": "fact", "label": f"{tag} item {i}", "statement": f"item {i}",
                                               "evidence": [str(source.block_id)]})
        brain_writer.add(fact)
        producer = Producer(kind=ProducerKind.PIPELINE, id="bench/derive")
        brain_writer.add(ProvenanceBlock(record=DerivationRecord(actor=WHO, at=AT, block=fact.block_id,
                                                                 derived_from=(source.block_id,), producer=producer)))
        brain_writer.add(ProvenanceBlock(record=ValidationRecord(actor=WHO, at=AT, block=fact.block_id,
                                                                 verdict=Verdict.VALIDATED, checks=("schema",))))


def build(path: Path, blocks: int, semantic: bool) -> Path:
    brain = Brain.init(path)
    per = 5 if semantic else 2
    with brain.writer(ACTOR) as writer:
        for i in range(max(1, blocks // per - 2 * ADDED)):
            _source(writer, "base", i, semantic)
        writer.commit()
    create_branch(brain, "x", ACTOR)
    for tag, branch in (("main", None), ("x", "x")):
        with brain.writer(ACTOR, branch=branch) as writer:
            for i in range(ADDED):
                _source(writer, tag, i, semantic)
            writer.commit()
    if semantic:  # ingest keeps the lineage log current; prime it as a run of ingest would have
        from ingest.lineage_graph import graph_of

        head = brain.snapshot_digest()
        assert head is not None
        graph_of(brain, head)
    return path


def _pointers(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (path / "boltzmann").iterdir()
            if p.name in ("head.json", "refs.json", "history.jsonl")}


def _restore(path: Path, saved: dict[str, bytes]) -> None:
    for name in ("head.json", "refs.json", "history.jsonl", "reconcile.json"):
        target = path / "boltzmann" / name
        if name in saved:
            target.write_bytes(saved[name])
        elif target.exists():
            target.unlink()


def timed(path: Path, *args: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one `brain` process; CPU moves less with the machine's load."""
    env = {**os.environ, "BRAIN_ACTOR": ACTOR}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [str(BRAIN_EXE), "--brain", str(path), "-q", *args], env=env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"brain {' '.join(args)} failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    semantic = "--semantic" in sys.argv
    sizes = [int(a.replace("_", "")) for a in sys.argv[1:] if not a.startswith("--")] or [10_000, 100_000]
    with tempfile.TemporaryDirectory(prefix="bench-reconcile-") as tmp:
        for size in sizes:
            path = Path(tmp) / f"b{size}"
            started = time.perf_counter()
            build(path, size, semantic)
            opened = Brain.open(path)
            heads = [opened.snapshot_digest(), resolve_branch(opened, "x")]
            blocks = len({b for head in heads for m in opened.modules(head).values() for b in m.block_ids})
            print(f"built {blocks:,} blocks in {time.perf_counter() - started:.1f} s "
                  f"({'sources + facts' if semantic else 'sources'}; each branch added {ADDED:,} sources)")
            saved = _pointers(path)
            status = _median([timed(path, "status") for _ in range(REPEAT)])
            print(
                f"  {size:>7,} blocks  status (the CLI's floor now)  median {status[0]:5.2f} s wall, "
                f"{status[1]:5.2f} s CPU"
            )
            plan = _median([timed(path, "merge", "x", "--plan", "--json") for _ in range(REPEAT)])
            merges = []
            for _ in range(REPEAT):
                merges.append(timed(path, "merge", "x", "--reason", "bench"))
                _restore(path, saved)
            merge = _median(merges)
            for label, (wall, cpu) in (("plan", plan), ("merge", merge)):
                verdict = "ok" if wall <= TARGETS[label] else "OVER"
                print(
                    f"  {size:>7,} blocks  merge {'--plan' if label == 'plan' else '      '}  "
                    f"median {wall:5.2f} s wall, "
                    f"{cpu:5.2f} s CPU   target ≤ {TARGETS[label]:.0f} s at 100k  {verdict}"
                )
            shutil.rmtree(path)


if __name__ == "__main__":
    main()
