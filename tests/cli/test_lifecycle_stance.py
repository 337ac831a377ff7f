"""`brain supersede` and `brain demote` through the CLI: exact records, accessibility (§7.2, including a
loser whose winner was dropped), refusals, and the precedence-conflict view and verify warning."""

from __future__ import annotations

from pathlib import Path

from brain.blocks import MemoryType, ProvenanceBlock, SupersessionRecord
from brain.blocks.provenance import Actor, ActorKind
from brain.brain import Brain
from brain.identity import BlockId
from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.cli.test_lifecycle_reference import ACTOR, AT, HEAD, _ids

SERIES_ID = "d603dc5dea69"  # superseded by "Fourier expansion" in the reference brain


def _run(brain: BrainRunner, path: Path, *args: str):
    return brain("--brain", str(path), "--actor", ACTOR, *args)


def _accessible(brain: BrainRunner, path: Path) -> set[str]:
    return {m["block_id"] for m in _run(brain, path, "ls", "--json").json()}


def test_supersede_writes_one_exact_record_and_hides_the_loser(brain: BrainRunner, reference_brain: Path):
    b = Brain.open(reference_brain)
    ids = _ids(b)
    laplace, expansion = ids["Laplace transform"], ids["Fourier expansion"]
    run = _run(brain, reference_brain, "supersede", laplace.hex[:8], str(expansion), "--reason", "merged", "--json")
    assert run.code == 0, run
    assert run.json()["blocks"] == [str(laplace), str(expansion)] and run.json()["refused"] is None
    old = set(b.module(MemoryType.PROVENANCE, HEAD).block_ids)
    (new,) = [x for x in b.module(MemoryType.PROVENANCE).block_ids if x not in old]
    assert b.resolve(new).payload()["record"] == {
        "actor": {"id": ACTOR, "kind": "human"}, "at": AT, "block": str(expansion), "reason": "merged",
        "record_type": "supersession", "supersedes": str(laplace),
    }
    assert str(laplace) not in _accessible(brain, reference_brain)
    assert laplace in b.module(MemoryType.SEMANTIC)  # still a member
    again = _run(brain, reference_brain, "supersede", str(laplace), str(expansion), "--json")
    assert again.code == 0 and again.json()["snapshot"] is None  # already recorded: nothing written
    assert brain("--brain", str(reference_brain), "verify").code == 0


def test_a_loser_whose_winner_is_dropped_is_accessible_again(brain: BrainRunner, reference_brain: Path):
    b = Brain.open(reference_brain)
    ids = _ids(b)
    series, expansion = ids["Fourier series"], ids["Fourier expansion"]
    assert series.short == SERIES_ID and str(series) not in _accessible(brain, reference_brain)
    assert b.ledger().superseded_by[series] == expansion
    assert _run(brain, reference_brain, "drop", str(expansion), "--reason", "retracted").code == 0
    assert str(series) in _accessible(brain, reference_brain)
    assert b.ledger().is_accessible(series)
    assert brain("--brain", str(reference_brain), "verify").code == 0


def test_demote_writes_exact_records_and_is_idempotent(brain: BrainRunner, reference_brain: Path):
    b = Brain.open(reference_brain)
    procedure = _ids(b)["compute a spectrum"]
    run = _run(
        brain, reference_brain, "demote", procedure.hex[:6], "--reason", "outdated", "--policy", "review", "--json"
    )
    assert run.code == 0 and run.json()["blocks"] == [str(procedure)]
    old = set(b.module(MemoryType.PROVENANCE, HEAD).block_ids)
    (new,) = [x for x in b.module(MemoryType.PROVENANCE).block_ids if x not in old]
    assert b.resolve(new).payload()["record"] == {
        "actor": {"id": ACTOR, "kind": "human"}, "at": AT, "block": str(procedure), "policy": "review",
        "reason": "outdated", "record_type": "demotion",
    }
    assert str(procedure) not in _accessible(brain, reference_brain)
    again = _run(brain, reference_brain, "demote", str(procedure), "--json")
    assert again.code == 0 and again.json()["snapshot"] is None


def test_refusals_are_one_line_and_write_nothing(brain: BrainRunner, reference_brain: Path):
    b = Brain.open(reference_brain)
    ids = _ids(b)
    series, expansion, laplace = ids["Fourier series"], ids["Fourier expansion"], ids["Laplace transform"]
    record = b.module(MemoryType.PROVENANCE).block_ids[0]
    cases = {
        "modules-differ": ("supersede", str(series), str(ids["compute a spectrum"])),
        "self-supersession": ("supersede", str(series), str(series)),
        "second-winner": ("supersede", str(series), str(laplace)),
        "supersession-cycle": ("supersede", str(expansion), str(series)),
        "provenance-record": ("demote", str(record)),
        "not-a-member": ("demote", str(BlockId.of(b"no such block"))),
    }
    for code, args in cases.items():
        run = _run(brain, reference_brain, *args, "--json")
        assert run.code == 5 and run.json()["refused"]["code"] == code, (code, run)
        assert_one_line_error(_run(brain, reference_brain, *args), 5)
    assert b.snapshot_digest() == HEAD


def test_a_precedence_conflict_is_a_view_and_a_verify_warning(brain: BrainRunner, reference_brain: Path):
    b = Brain.open(reference_brain)
    ids = _ids(b)
    series, laplace = ids["Fourier series"], ids["Laplace transform"]
    actor = Actor(id=ACTOR, kind=ActorKind.HUMAN)
    with b.writer(ACTOR) as writer:  # another implementation could have written this
        writer.add(
            ProvenanceBlock(
                record=SupersessionRecord(actor=actor, at="2026-12-01T00:00:00Z", block=laplace, supersedes=series)
            )
        )
        writer.commit()
    ledger = b.ledger()
    assert set(ledger.precedence_conflicts[series]) == {ids["Fourier expansion"], laplace}
    assert ledger.superseded_by[series] == laplace  # the latest record's winner
    report = brain("--brain", str(reference_brain), "verify", "--json").json()
    warnings = [p for p in report["problems"] if p["code"] == "precedence-conflict"]
    assert len(warnings) == 1 and warnings[0]["severity"] == "warning" and report["ok"] is True


def test_the_lineage_log_follows_lifecycle_commits_exactly(brain: BrainRunner, reference_brain: Path):
    from ingest.lineage import LineageLog, read_lineage
    from ingest.lineage_graph import readable_members

    b = Brain.open(reference_brain)
    ids = _ids(b)
    steps = [
        ("supersede", str(ids["Laplace transform"]), str(ids["Fourier expansion"]), "--reason", "merged"),
        ("demote", str(ids["compute a spectrum"]), "--reason", "old"),
        ("drop", str(ids["Fourier expansion"]), "--reason", "wrong", "--yes"),
    ]
    for step in steps:
        assert _run(brain, reference_brain, *step).code == 0, step
        head = b.snapshot_digest()
        logged = LineageLog(reference_brain).load(head)
        assert logged is not None, step  # appended, not left stale
        provenance = readable_members(b, head, [MemoryType.PROVENANCE])
        derived = readable_members(b, head, [MemoryType.SEMANTIC, MemoryType.PROCEDURAL])
        rebuilt = read_lineage(reference_brain, provenance, derived)[0]
        # Facts are only ever added (readers intersect them with membership): a dropped block's statement
        # and structural links stay in the log, so compare what members say.
        members = {b.hex for b in derived}
        for lineage in (logged, rebuilt):
            lineage.statements = {k: v for k, v in (
                (k, {h: t for h, t in held.items() if h in members}) for k, held in lineage.statements.items()) if v}
            lineage.linked = {
                k: v for k, v in ((k, {d for d in ds if d in members}) for k, ds in lineage.linked.items()) if v
            }
        assert logged == rebuilt, step
