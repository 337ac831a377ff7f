"""`brain ingest --sync` through the CLI on real files: a deleted file leaves the brain with its cascade; a
source whose cascade reaches an episode is demoted with it; without --sync it is reported as missing."""

from __future__ import annotations

import shutil
from pathlib import Path

from brain.blocks import EpisodicBlock, MemoryType, ProvenanceBlock
from brain.blocks.provenance import (
    Actor,
    ActorKind,
    DerivationRecord,
    Producer,
    ValidationRecord,
)
from brain.brain import Brain
from tests.cli.conftest import BrainRunner

ACTOR = "tester@example.org"
DOCS = sorted(p for p in Path("/usr/share/doc").glob("*/README*") if p.is_file() and p.stat().st_size > 200)[:12]


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, source in enumerate(DOCS):
        shutil.copyfile(source, docs / f"{i:02d}-{source.name}")
    (docs / "notes.md").write_text("# Heat\n\nThe heat equation describes diffusion.\n\nA seminar met on Monday.\n")
    return docs


def _ingest(brain: BrainRunner, path: Path, docs: Path, *extra: str):
    run = brain("--brain", str(path), "--actor", ACTOR, "ingest", str(docs), "--json", *extra, cwd=docs.parent)
    assert run.code == 0, run
    return run.json()


def test_a_deleted_file_is_missing_then_dropped_with_its_cascade(brain: BrainRunner, tmp_path: Path):
    docs, path = _docs(tmp_path), tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    first = _ingest(brain, path, docs)
    gone = next(o for o in first["outcomes"] if o["validated"] > 0)
    (docs / gone["relpath"]).unlink()
    second = _ingest(brain, path, docs)
    assert [(m["origin"], m["action"]) for m in second["missing"]] == [(gone["origin"], "missing")]
    b = Brain.open(path)
    assert b.snapshot_digest() == Brain.open(path).snapshot_digest()
    before = b.snapshot_digest()
    synced = _ingest(brain, path, docs, "--sync")
    (row,) = synced["missing"]
    assert row["action"] == "dropped" and row["block"] == gone["block"]
    assert row["dropped"]["canonical"] == 1 and sum(row["dropped"].values()) == 1 + gone["validated"]
    assert b.snapshot().first_parent == before
    canonical = b.module(MemoryType.CANONICAL)
    assert gone["block"] not in {str(i) for i in canonical.block_ids}
    removal = [r for r in _records(b, before) if r["record_type"] == "removal"]
    assert {r["memory_type"] for r in removal} >= {"canonical"}
    assert all(r["reason"] == f"source deleted: {gone['origin']}" for r in removal)
    assert brain("--brain", str(path), "verify").code == 0
    again = _ingest(brain, path, docs, "--sync")
    assert again["missing"] == [] and b.snapshot_digest() == Brain.open(path).snapshot_digest()


def test_a_source_reaching_an_episode_is_demoted_with_it(brain: BrainRunner, tmp_path: Path):
    docs, path = _docs(tmp_path), tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    first = _ingest(brain, path, docs)
    notes = next(o for o in first["outcomes"] if o["validated"] > 0)
    b = Brain.open(path)
    source = next(i for i in b.module(MemoryType.CANONICAL).block_ids if str(i) == notes["block"])
    episode = EpisodicBlock(summary="seminar on the heat equation", occurred_at="2026-01-05T10:00:00Z",
                            evidence=(source,))
    actor, at = Actor(id=ACTOR, kind=ActorKind.HUMAN), "2026-01-05T12:00:00Z"
    with b.writer(ACTOR) as writer:
        writer.add(episode)
        writer.add(
            ProvenanceBlock(
                record=DerivationRecord(
                    actor=actor, at=at, block=episode.block_id, derived_from=(source,),
                    producer=Producer(kind="actor", id=ACTOR),
                )
            )
        )
        writer.add(ProvenanceBlock(record=ValidationRecord(actor=actor, at=at, block=episode.block_id,
                                                           verdict="validated", checks=("unrecorded",))))
        writer.commit()
    before = b.snapshot_digest()
    (docs / notes["relpath"]).unlink()
    synced = _ingest(brain, path, docs, "--sync")
    (row,) = synced["missing"]
    assert row["action"] == "demoted" and row["demoted"] == 2
    assert sum(row["dropped"].values()) == notes["validated"] > 0  # the facts drawn from it are dropped
    ledger = b.ledger()
    assert source in b.module(MemoryType.CANONICAL) and episode.block_id in b.module(MemoryType.EPISODIC)
    assert not ledger.is_accessible(source) and not ledger.is_accessible(episode.block_id)
    demotions = [r for r in _records(b, before) if r["record_type"] == "demotion"]
    assert sorted(r["block"] for r in demotions) == sorted([str(source), str(episode.block_id)])
    for removal in (r for r in _records(b, before) if r["record_type"] == "removal"):
        assert removal["cascaded_from"] == str(source) and removal["memory_type"] != "episodic"
    assert brain("--brain", str(path), "verify").code == 0
    text = brain("--brain", str(path), "ingest", str(docs), "--sync", cwd=docs.parent)
    assert text.code == 0 and "missing" not in text.stdout


def _records(b: Brain, before) -> list[dict]:
    old = set(b.module(MemoryType.PROVENANCE, before).block_ids)
    return [b.resolve(i).payload()["record"] for i in b.module(MemoryType.PROVENANCE).block_ids if i not in old]


def test_a_deleted_file_that_was_replaced_takes_every_version_with_it(brain: BrainRunner, tmp_path: Path):
    docs, path = _docs(tmp_path), tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    _ingest(brain, path, docs)
    notes = docs / "notes.md"
    notes.write_text(notes.read_text() + "\nThe seminar met again on Friday.\n")
    replaced = _ingest(brain, path, docs)
    (row,) = [o for o in replaced["outcomes"] if o["relpath"] == "notes.md"]
    assert row["status"] == "replaced" and len(row["replaces"]) == 1
    notes.unlink()
    synced = _ingest(brain, path, docs, "--sync")
    assert sorted(m["block"] for m in synced["missing"]) == sorted([row["block"], *row["replaces"]])
    listed = {m["block_id"] for m in brain("--brain", str(path), "ls", "--all", "--json").json()}
    assert row["block"] not in listed and row["replaces"][0] not in listed
    assert brain("--brain", str(path), "verify").code == 0
