"""Lifecycle benchmarks (issue 9), whole `brain` commands in subprocesses, medians of 3:

- `drop` of one source with a 100-block cascade in a 100,000-block brain ≤ 2 s (the lineage log is
  current, as after any ingest or lifecycle command; the one-off rebuild of a missing log is shown too);
- `ingest --sync` of 10,000 sources with 100 deleted ≤ 3 s over an unchanged re-ingest;
- `diff` of two 100,000-block snapshots ≤ 2 s;
- `prune` of a 100,000-block brain ≤ 10 s.

Usage: python bench/lifecycle.py [blocks] [--sources N] [--keep DIR]
(defaults 100,000 blocks and 10,000 sources; DIR reuses the built brains)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from core import (  # bench/core.py, beside this script
    ACTOR,
    AT,
    PRODUCER,
    median_seconds,
    report,
)
from verify import CHECKS, build  # bench/verify.py: the 100,000-block brain

from brain.blocks import (
    DerivationRecord,
    ProvenanceBlock,
    Relation,
    SemanticBlock,
    ValidationRecord,
)
from brain.blocks.canonical import CanonicalBlock
from brain.blocks.provenance import RegistrationRecord
from brain.brain import Brain
from brain.identity import OciDigest
from brain.store import write_head

BRAIN = [str(Path(sys.executable).with_name("brain"))]
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "BRAIN_ACTOR": "bench@example.org"}
CASCADE = 100


def run(*args: str) -> None:
    done = subprocess.run([*BRAIN, *args], env=ENV, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"brain {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")


def add_hub(path: Path) -> str:
    """One more source with `CASCADE` semantic blocks drawn from it (every tenth relates to the previous one)."""
    brain = Brain.open(path)
    data = b"the hub source every cascade block cites\n"
    with brain.writer("bench@example.org") as writer:
        source = CanonicalBlock(blob=writer.put_blob(data), media_type="text/plain", size=len(data))
        writer.add(source)
        writer.add(
            ProvenanceBlock(record=RegistrationRecord(actor=ACTOR, at=AT, block=source.block_id, origin="hub.md"))
        )
        previous = None
        for i in range(CASCADE):
            relations = (Relation(predicate="refines", target=previous),) if previous and i % 10 == 0 else None
            fact = SemanticBlock(kind="fact", label=f"hub fact {i}", statement=f"hub statement {i}",
                                 evidence=(source.block_id,), relations=relations)
            writer.add(fact)
            for record in (
                DerivationRecord(actor=ACTOR, at=AT, block=fact.block_id, derived_from=(source.block_id,),
                                 producer=PRODUCER),
                ValidationRecord(actor=ACTOR, at=AT, block=fact.block_id, verdict="validated", checks=CHECKS),
            ):
                writer.add(ProvenanceBlock(record=record))
            previous = fact.block_id
        writer.commit()
    return str(source.block_id)


def restoring(path: Path, command: Callable[[], None], *sidecars: str) -> Callable[[], None]:
    """`command`, after which the head and `sidecars` are put back (so each timed run does the same work)."""
    saved = {name: (path / name).read_bytes() for name in ("boltzmann/head.json", *sidecars) if (path / name).exists()}

    def timed() -> None:
        command()
        for name, data in saved.items():
            (path / name).write_bytes(data)

    return timed


def bench_brain(root: Path, blocks: int) -> None:
    path = root / f"lifecycle-{blocks}"
    if not (path / "boltzmann" / "head.json").exists():
        start = time.perf_counter()
        build(path, blocks)
        hub = add_hub(path)
        (path / "hub.txt").write_text(hub)
        (path / "start.txt").write_text(str(Brain.open(path).snapshot_digest()))
        print(f"built a {blocks}-block brain (+ a {CASCADE}-block cascade) in {time.perf_counter() - start:.1f} s")
    hub = (path / "hub.txt").read_text()
    brain = Brain.open(path)
    start_head = OciDigest.parse((path / "start.txt").read_text())
    if brain.snapshot_digest() != start_head:  # a reused brain: back to the snapshot before the timed drops
        head = brain.head()
        assert head is not None
        write_head(path, head.advance(start_head))
    log = "boltzmann/cache/lineage.log"
    (path / log).unlink(missing_ok=True)
    start = time.perf_counter()
    run("--brain", str(path), "drop", hub, "--reason", "bench", "--allow-canonical", "--dry-run")
    print(f"drop --dry-run on a brain without a lineage log (rebuilt in memory, not written): "
          f"{time.perf_counter() - start:.2f} s")
    # What any ingest or lifecycle command leaves behind: a current log (bench/ingest.py shadows the package
    # here, so the priming runs in a process of its own).
    prime = "from brain.brain import Brain; from ingest.lineage_graph import graph_of; b = Brain.open(%r); "
    subprocess.run([sys.executable, "-c", prime % str(path) + "graph_of(b, b.snapshot_digest())"],
                   cwd=Path(__file__).resolve().parents[1], check=True)
    drop = restoring(path, lambda: run("--brain", str(path), "drop", hub, "--reason", "bench", "--allow-canonical",
                                       "--yes"), log)
    report(f"drop 1 source, {CASCADE}-block cascade, {blocks} blocks", median_seconds(drop), 2.0)
    run("--brain", str(path), "drop", hub, "--reason", "bench", "--allow-canonical", "--yes")
    report(f"diff HEAD~1 HEAD ({blocks}-block snapshots)",
           median_seconds(lambda: run("--brain", str(path), "diff", "HEAD~1", "HEAD", "--json")), 2.0)
    for i in range(200):
        (path / "blobs" / "sha256" / f"{i:064x}").write_bytes(b"unreachable")
    report(f"prune --dry-run, {blocks} blocks", median_seconds(lambda: run("--brain", str(path), "prune", "--dry-run")),
           10.0)
    report(f"prune, {blocks} blocks", median_seconds(lambda: run("--brain", str(path), "prune"), repeat=1), 10.0)


def bench_sync(root: Path, sources: int) -> None:
    path, docs = root / f"sync-{sources}", root / f"docs-{sources}"
    if not (path / "boltzmann" / "head.json").exists():
        shutil.rmtree(docs, ignore_errors=True)
        for i in range(sources):
            folder = docs / f"d{i % 100:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"note{i:05d}.md").write_text(
                f"# Note {i}\n\nThe component c{i} is a cache kept near node {i % 97}.\n"
            )
        run("--brain", str(path), "init")
        start = time.perf_counter()
        run("--brain", str(path), "ingest", str(docs))
        print(f"ingested {sources} sources in {time.perf_counter() - start:.1f} s")
    unchanged = median_seconds(lambda: run("--brain", str(path), "ingest", str(docs)))
    report(f"ingest (unchanged) of {sources} sources", unchanged, float("inf"))
    gone = sorted(docs.rglob("*.md"))[:100]
    texts = {p: p.read_bytes() for p in gone}
    for p in gone:
        p.unlink()
    try:
        sidecars = ("boltzmann/cache/lineage.log", "boltzmann/fingerprints.json")
        synced = median_seconds(restoring(path, lambda: run("--brain", str(path), "ingest", str(docs), "--sync"),
                                          *sidecars))
        report(f"ingest --sync, {sources} sources, 100 deleted", synced, unchanged[0] + 3.0)
        print(f"  --sync over the unchanged re-ingest: +{synced[0] - unchanged[0]:.2f} s (target ≤ +3 s)")
    finally:
        for p, data in texts.items():
            p.write_bytes(data)


def main(argv: list[str]) -> int:
    blocks = int(argv[0]) if argv and argv[0].isdigit() else 100_000
    sources = int(argv[argv.index("--sources") + 1]) if "--sources" in argv else 10_000
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    with tempfile.TemporaryDirectory() as scratch:
        root = keep or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        bench_brain(root, blocks)
        bench_sync(root, sources)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
