"""§7.4 on the reference brain (another implementation's): every row of the cascade table, through the CLI,
with the exact removal records; and the reference's own drop reproduced byte for byte."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.blocks.provenance import Actor, ActorKind
from brain.brain import Brain
from brain.identity import BlockId, OciDigest
from brain.lifecycle.drop import plan_drop
from brain.lifecycle.graph import LedgerGraph
from tests.cli.conftest import BrainRunner, assert_one_line_error

V1 = OciDigest.parse("sha256:100ea8f01da426a5a2020ddc90f28d49169b57793541cdbb266c2387ef549839")
HEAD = OciDigest.parse("sha256:095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904")
AT = "2026-01-01T00:00:00Z"  # SOURCE_DATE_EPOCH=1767225600, pinned by the runner
ACTOR = "curator@example.org"
# The reference's drop (its v2): one semantic block, no cascade, no policy.
REFERENCE_DROP = BlockId.parse("sha256:0c013254cd3df4a861aa6df26d86890e0d5ccfde043dc252dac395a53f313ebb")
DROPPED = BlockId.parse("sha256:85753ad9c7d593b4a6f1a86a0de7e1fe0712704b863e52e23ac9de612eb3cd61")


def _at_head(path: Path) -> Brain:
    """The reference brain at its head (v2: after its own drop; the state §7.4's table was observed on)."""
    brain = Brain.open(path)
    assert brain.snapshot_digest() == HEAD
    return brain


def _ids(brain: Brain, snapshot: OciDigest | None = None) -> dict[str, BlockId]:
    """Title → block id of every non-provenance member (labels, summaries, media types are distinct here)."""
    found = {}
    for memory_type, module in brain.modules(snapshot).items():
        if memory_type is MemoryType.PROVENANCE:
            continue
        for block in module.blocks():
            payload = block.payload()
            found[payload.get("label") or payload.get("summary") or payload["media_type"]] = block.block_id
    return found


def _new_records(brain: Brain, before: OciDigest) -> list[dict]:
    old = set(brain.module(MemoryType.PROVENANCE, before).block_ids)
    new = [b for b in brain.module(MemoryType.PROVENANCE).block_ids if b not in old]
    return sorted((brain.resolve(b).payload()["record"] for b in new), key=lambda r: r["memory_type"])


def _removal(memory_type: str, blocks: list[BlockId], reason: str, cascaded_from: BlockId | None = None) -> dict:
    record = {
        "actor": {"id": ACTOR, "kind": "human"},
        "at": AT,
        "blocks": sorted(str(b) for b in blocks),
        "mechanism": "drop",
        "memory_type": memory_type,
        "reason": reason,
        "record_type": "removal",
    }
    if cascaded_from is not None:
        record["cascaded_from"] = str(cascaded_from)
    return record


def _drop(brain: BrainRunner, path: Path, *args: str):
    return brain("--brain", str(path), "--actor", ACTOR, "drop", *args, "--json")


def _verifies(brain: BrainRunner, path: Path) -> None:
    run = brain("--brain", str(path), "verify", "--json")
    assert run.code == 0, run.stdout[-2000:]


def test_drop_semantic_fourier_series_cascades_to_laplace_in_one_record(brain: BrainRunner, reference_brain: Path):
    b = _at_head(reference_brain)
    ids = _ids(b)
    run = _drop(brain, reference_brain, str(ids["Fourier series"]), "--reason", "wrong")
    assert run.code == 0, run
    laplace, series = ids["Laplace transform"], ids["Fourier series"]
    assert run.json() == {
        "dry_run": False,
        "snapshot": str(b.snapshot_digest()),
        "removals": {"semantic": sorted([str(laplace), str(series)])},
        "refused": None,
    }
    assert _new_records(b, HEAD) == [_removal("semantic", [series, laplace], "wrong")]
    assert series not in b.module(MemoryType.SEMANTIC) and laplace not in b.module(MemoryType.SEMANTIC)
    assert b.snapshot().first_parent == HEAD
    _verifies(brain, reference_brain)


def test_drop_canonical_fourier_source_cascades_to_semantic_and_procedural(brain: BrainRunner, reference_brain: Path):
    b = _at_head(reference_brain)
    ids = _ids(b)
    source = ids["text/markdown"]
    refused = _drop(brain, reference_brain, str(source), "--reason", "gone")
    assert refused.code == 5 and refused.json()["refused"]["code"] == "canonical-not-allowed"
    assert b.snapshot_digest() == HEAD
    run = _drop(brain, reference_brain, str(source)[:12], "--reason", "gone", "--allow-canonical", "--policy", "p1")
    assert run.code == 0, run
    semantic = [ids["Fourier series"], ids["Fourier expansion"], ids["Laplace transform"]]
    expected = [
        {**_removal("canonical", [source], "gone"), "policy": "p1"},
        {**_removal("procedural", [ids["compute a spectrum"]], "gone", source), "policy": "p1"},
        {**_removal("semantic", semantic, "gone", source), "policy": "p1"},
    ]
    assert _new_records(b, HEAD) == expected
    assert run.json()["removals"] == {
        "canonical": [str(source)],
        "semantic": sorted(map(str, semantic)),
        "procedural": [str(ids["compute a spectrum"])],
    }
    _verifies(brain, reference_brain)


def test_drop_canonical_pdf_cascades_to_laplace(brain: BrainRunner, reference_brain: Path):
    b = _at_head(reference_brain)
    ids = _ids(b)
    pdf = ids["application/pdf"]
    dry = _drop(brain, reference_brain, str(pdf), "--reason", "r", "--allow-canonical", "--dry-run")
    assert dry.json() == {
        "dry_run": True, "snapshot": None, "refused": None,
        "removals": {"canonical": [str(pdf)], "semantic": [str(ids["Laplace transform"])]},
    }
    assert b.snapshot_digest() == HEAD
    assert _drop(brain, reference_brain, str(pdf), "--reason", "r", "--allow-canonical").code == 0
    assert _new_records(b, HEAD) == [
        _removal("canonical", [pdf], "r"),
        _removal("semantic", [ids["Laplace transform"]], "r", pdf),
    ]
    _verifies(brain, reference_brain)


def test_drop_canonical_seminar_notes_is_refused_naming_the_episode(brain: BrainRunner, reference_brain: Path):
    b = _at_head(reference_brain)
    ids = _ids(b)
    notes, episode = ids["text/plain"], ids["seminar derived the heat equation"]
    run = _drop(brain, reference_brain, str(notes), "--reason", "r", "--allow-canonical")
    assert run.code == 5
    assert run.json() == {
        "dry_run": False, "snapshot": None, "removals": {},
        "refused": {"code": "cascade-reaches-episodic", "block": str(notes), "detail": run.json()["refused"]["detail"]},
    }
    assert episode.short in run.stderr and "demote" in run.stderr and len(run.stderr.splitlines()) == 1
    assert b.snapshot_digest() == HEAD


def test_drop_episodic_is_refused(brain: BrainRunner, reference_brain: Path):
    b = _at_head(reference_brain)
    episode = _ids(b)["seminar derived the heat equation"]
    run = brain("--brain", str(reference_brain), "drop", str(episode), "--reason", "r")
    assert_one_line_error(run, 5)
    assert episode.short in run.stderr and "brain demote" in run.stderr
    assert b.snapshot_digest() == HEAD


def test_drop_a_provenance_record_writes_a_provenance_removal(brain: BrainRunner, reference_brain: Path):
    b = _at_head(reference_brain)
    record = b.module(MemoryType.PROVENANCE).block_ids[0]
    assert b.resolve(record).payload()["record"]["record_type"] == "validation"  # not needed to verify
    run = _drop(brain, reference_brain, str(record), "--reason", "r")
    assert run.code == 0, run
    assert run.json()["removals"] == {"provenance": [str(record)]}
    assert _new_records(b, HEAD) == [_removal("provenance", [record], "r")]
    assert record not in b.module(MemoryType.PROVENANCE)
    _verifies(brain, reference_brain)


def test_drop_of_a_record_a_member_needs_is_refused(brain: BrainRunner, reference_brain: Path):
    b = _at_head(reference_brain)
    ledger = b.ledger()
    laplace = _ids(b)["Laplace transform"]
    derivation = next(i for i, r in ledger.records if r.record_type == "derivation" and r.block == laplace)
    run = _drop(brain, reference_brain, str(derivation), "--reason", "r")
    assert run.code == 5 and run.json()["refused"]["code"] == "record-explains-member"
    assert laplace.short in run.stderr and b.snapshot_digest() == HEAD


def test_drop_a_non_member_is_refused(brain: BrainRunner, reference_brain: Path):
    _at_head(reference_brain)
    run = _drop(brain, reference_brain, str(DROPPED.__class__.of(b"nothing")), "--reason", "r")
    assert run.code == 5 and run.json()["refused"]["code"] == "not-a-member"


def test_the_reference_drop_is_reproduced_byte_for_byte(reference_brain: Path):
    """The snapshot before the reference's drop, dropped here: the same record block and composition."""
    b = Brain.open(reference_brain)
    history = b.history()
    child, parent = next(
        (c, p)
        for (c, _), (p, _) in itertools.pairwise(history)
        if REFERENCE_DROP in b.module(MemoryType.PROVENANCE, c)
        and REFERENCE_DROP not in b.module(MemoryType.PROVENANCE, p)
    )
    members = {t: m.members for t, m in b.modules(parent).items()}
    plan = plan_drop([DROPPED], members, LedgerGraph(b.ledger(parent)))
    (record,) = plan.records(actor=Actor(id=ACTOR, kind=ActorKind.HUMAN), at="2026-11-30T13:32:11Z",
                             reason="unsupported claim", policy=None)
    assert record.block_id == REFERENCE_DROP
    assert record.canonical_bytes() == b.blobs.get(REFERENCE_DROP)
    after = {t: m for t, m in b.modules(child).items()}
    kept = [i for i in b.module(MemoryType.SEMANTIC, parent).block_ids if i not in plan.removals[MemoryType.SEMANTIC]]
    assert tuple(kept) == after[MemoryType.SEMANTIC].block_ids


def test_the_reference_v2_verifies_and_reads(brain: BrainRunner, reference_brain: Path):
    _verifies(brain, reference_brain)
    listed = brain("--brain", str(reference_brain), "ls", "--all", "--json").json()
    assert DROPPED not in {m["block_id"] for m in listed}


@pytest.mark.parametrize("prefix_length", [4])
def test_an_ambiguous_prefix_lists_the_candidates(brain: BrainRunner, twin_brain, prefix_length: int):
    path, twins = twin_brain
    run = brain("--brain", str(path), "drop", twins[0].hex[:prefix_length], "--reason", "r")
    assert run.code == 4 and all(t.short in run.stderr for t in twins)
