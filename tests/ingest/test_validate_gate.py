"""The validation gate (§7.6): every check, accumulation, batch effects and the verdict rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.blocks import Block, MemoryType, Verdict
from brain.identity import BlockId
from ingest.proposers.candidates import Candidate, CandidateSet, Task
from ingest.validate import (
    CHECKS_RUN,
    SPEC_CHECKS,
    GateContext,
    RejectedCandidate,
    ValidatedCandidate,
    validate_candidates,
    verdict_of,
)

SOURCE = Block.from_payload("canonical", {"blob": "sha256:" + "1" * 64, "media_type": "text/markdown", "size": 10})
OTHER_SOURCE = Block.from_payload("canonical", {"blob": "sha256:" + "2" * 64, "media_type": "text/plain", "size": 3})
HELD = Block.from_payload(
    "semantic", {"kind": "concept", "label": "FFT", "statement": "FFT is fast.", "subject": "signals",
                 "evidence": [str(SOURCE.block_id)]}
)
PROVENANCE_ID = BlockId("9" * 64)
ALL_TYPES = ("episodic", "procedural", "semantic")


def _task(*types: str, source: Block = SOURCE) -> Task:
    return Task(source=source.block_id, allowed_memory_types=types or ALL_TYPES, task_id="t-1")


def _context(**extra: Any) -> GateContext:
    members = {
        MemoryType.CANONICAL: [SOURCE.block_id, OTHER_SOURCE.block_id],
        MemoryType.SEMANTIC: [HELD.block_id],
        MemoryType.PROVENANCE: [PROVENANCE_ID],
    }
    return GateContext.build(members, [HELD], **extra)


def _semantic(**payload: Any) -> dict[str, Any]:
    return {"kind": "concept", "label": "DFT", "statement": "The DFT is a transform."} | payload


def _candidate(
    payload: dict[str, Any], memory_type: str = "semantic", evidence: tuple[str, ...] | None = None
) -> Candidate:
    return Candidate(memory_type=memory_type, payload=payload, evidence=evidence or (str(SOURCE.block_id),))


def _run(*candidates: Candidate, task: Task | None = None, context: GateContext | None = None) -> list:
    return validate_candidates(CandidateSet(candidates=candidates), task or _task(), context or _context())


def _codes(result: ValidatedCandidate | RejectedCandidate) -> list[str]:
    return [] if isinstance(result, ValidatedCandidate) else [i.code for i in result.issues]


def test_checks_run_is_the_spec_list_plus_evidence_not_in_task() -> None:
    assert list(SPEC_CHECKS) == [
        "catalog-declaration-not-allowed", "content-mismatch", "contradiction", "duplicate", "evidence-mismatch",
        "evidence-not-found", "memory-type-not-allowed", "relation-target-not-found", "schema",
    ]
    assert list(CHECKS_RUN) == sorted([*SPEC_CHECKS, "evidence-not-in-task"])


def test_valid_candidate_gets_evidence_inserted_and_v1() -> None:
    [result] = _run(_candidate(_semantic()))
    assert isinstance(result, ValidatedCandidate) and result.verdict is Verdict.VALIDATED
    assert result.block.schema_version == 1
    assert result.block.payload()["evidence"] == [str(SOURCE.block_id)]
    assert result.checks == CHECKS_RUN


def test_content_member_selects_v2_oldest_that_fits() -> None:
    content = {"blob": "sha256:" + "3" * 64, "media_type": "text/plain", "size": 5}
    [result] = _run(_candidate(_semantic(content=content)), context=_context(blob_size=lambda d: 5))
    assert isinstance(result, ValidatedCandidate) and result.block.schema_version == 2


@pytest.mark.parametrize(
    ("memory_type", "payload", "code"),
    [
        ("canonical", {"blob": "sha256:" + "4" * 64, "media_type": "text/plain", "size": 1}, "memory-type-not-allowed"),
        ("provenance", {"record": {}}, "memory-type-not-allowed"),
        ("bogus", {}, "memory-type-not-allowed"),
        ("semantic", {"kind": "concept", "label": "x"}, "schema"),
        ("semantic", _semantic(statement=1.5), "schema"),
        ("semantic", _semantic(extra="no"), "schema"),
        ("episodic", {"summary": "s", "occurred_at": "2026-01-01 00:00:00"}, "schema"),
    ],
)
def test_rejections(memory_type: str, payload: dict[str, Any], code: str) -> None:
    [result] = _run(_candidate(payload, memory_type))
    assert isinstance(result, RejectedCandidate) and result.verdict is Verdict.REJECTED
    assert code in _codes(result)


def test_memory_type_allowed_by_kind_but_not_by_task() -> None:
    [result] = _run(
        _candidate({"summary": "s", "occurred_at": "2026-01-01T00:00:00Z"}, "episodic"), task=_task("semantic")
    )
    assert _codes(result) == ["memory-type-not-allowed"]


def test_evidence_mismatch_and_not_found_one_issue_per_missing_id() -> None:
    missing_a, missing_b = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    payload = _semantic(evidence=[str(SOURCE.block_id)])
    [result] = _run(_candidate(payload, evidence=(str(SOURCE.block_id), missing_a, missing_b)))
    codes = _codes(result)
    assert codes.count("evidence-not-found") == 2 and "evidence-mismatch" in codes
    assert codes.count("evidence-not-in-task") == 2


def test_citing_a_semantic_block_is_not_found_and_not_in_task() -> None:
    [result] = _run(_candidate(_semantic(), evidence=(str(HELD.block_id),)))
    assert sorted(_codes(result)) == ["evidence-not-found", "evidence-not-in-task"]


def test_evidence_of_another_canonical_member_is_only_not_in_task() -> None:
    [result] = _run(_candidate(_semantic(), evidence=(str(OTHER_SOURCE.block_id),)))
    assert _codes(result) == ["evidence-not-in-task"]


def test_no_canonical_module_installed() -> None:
    context = GateContext.build({MemoryType.SEMANTIC: []})
    [result] = _run(_candidate(_semantic()), context=context)
    assert _codes(result) == ["evidence-not-found"] and "no canonical module" in result.issues[0].detail


def test_duplicate_of_member_and_within_batch() -> None:
    held_payload = {k: v for k, v in HELD.payload().items() if k != "evidence"}
    first, second, third = _run(_candidate(held_payload), _candidate(_semantic()), _candidate(_semantic()))
    assert _codes(first) == ["duplicate"]
    assert isinstance(second, ValidatedCandidate)
    assert _codes(third) == ["duplicate"]


def test_relation_targets_any_module_or_earlier_in_batch() -> None:
    dft = _run(_candidate(_semantic()))[0].block.block_id
    relations = [{"predicate": "uses", "target": str(t)} for t in (PROVENANCE_ID, SOURCE.block_id, HELD.block_id)]
    missing = {"predicate": "uses", "target": "sha256:" + "c" * 64}
    ok, bad, later = _run(
        _candidate(_semantic(label="A", relations=relations)),
        _candidate(_semantic(label="B", relations=[missing])),
        _candidate(_semantic(label="C", relations=[{"predicate": "refines", "target": str(dft)}])),
    )
    assert isinstance(ok, ValidatedCandidate)
    assert _codes(bad) == ["relation-target-not-found"]
    # "DFT" itself was not in this batch, so C's target is missing...
    assert _codes(later) == ["relation-target-not-found"]
    first, second = _run(
        _candidate(_semantic()), _candidate(_semantic(label="C", relations=[{"predicate": "p", "target": str(dft)}]))
    )
    # ...but once validated earlier in the same batch, it is a valid target.
    assert isinstance(first, ValidatedCandidate) and isinstance(second, ValidatedCandidate)


def test_content_mismatch_media_type_and_size() -> None:
    content = {"blob": "sha256:" + "3" * 64, "media_type": "Text/Plain", "size": 5}
    [result] = _run(_candidate(_semantic(content=content)), context=_context(blob_size=lambda d: 6))
    assert _codes(result) == ["content-mismatch", "content-mismatch"]
    [unstored] = _run(_candidate(_semantic(content=content | {"media_type": "text/plain"})),
                      context=_context(blob_size=lambda d: None))
    assert isinstance(unstored, ValidatedCandidate)


def test_catalog_declarations() -> None:
    classified = {"kind": "relation", "relations": [{"predicate": "classified_as", "target": str(HELD.block_id)}]}
    [edge] = _run(_candidate(classified))
    assert _codes(edge) == ["catalog-declaration-not-allowed"]
    [scheme] = _run(_candidate({"kind": "scheme", "scheme": "topics", "exclusive": True}))
    assert "schema" in _codes(scheme)


def test_contradiction_verdicts() -> None:
    same_key = {"kind": "concept", "label": "FFT", "statement": "FFT is slow.", "subject": "signals"}
    [contradicted] = _run(_candidate(same_key))
    assert contradicted.verdict is Verdict.CONTRADICTED and _codes(contradicted) == ["contradiction"]
    assert str(HELD.block_id) in contradicted.issues[0].detail
    [other_subject] = _run(_candidate(same_key | {"subject": "audio"}))
    assert isinstance(other_subject, ValidatedCandidate)
    [no_subject] = _run(_candidate({k: v for k, v in same_key.items() if k != "subject"}))
    assert isinstance(no_subject, ValidatedCandidate)
    missing = "sha256:" + "d" * 64
    [mixed] = _run(_candidate(same_key, evidence=(str(SOURCE.block_id), missing)))
    assert mixed.verdict is Verdict.REJECTED


def test_contradiction_within_batch() -> None:
    first, second = _run(_candidate(_semantic()), _candidate(_semantic(statement="The DFT is slow.")))
    assert isinstance(first, ValidatedCandidate) and second.verdict is Verdict.CONTRADICTED


def test_issues_accumulate_without_short_circuit() -> None:
    payload = {"kind": "concept", "label": "FFT", "statement": "other", "subject": "signals", "evidence": []}
    [result] = _run(_candidate(payload, "semantic", evidence=("nonsense",)), task=_task("episodic"))
    assert set(_codes(result)) >= {
        "memory-type-not-allowed", "evidence-mismatch", "evidence-not-found", "evidence-not-in-task", "contradiction",
    }


def test_null_members_count_as_absent() -> None:
    [result] = _run(_candidate(_semantic(subject=None, evidence=None)))
    assert isinstance(result, ValidatedCandidate) and "subject" not in result.block.payload()


def test_verdict_rules() -> None:
    assert verdict_of([]) is Verdict.VALIDATED
    assert verdict_of(["contradiction", "catalog-scheme-conflict"]) is Verdict.CONTRADICTED
    assert verdict_of(["contradiction", "pending-review"]) is Verdict.PENDING_REVIEW
    assert verdict_of(["contradiction", "duplicate"]) is Verdict.REJECTED


def test_context_build_indexes_statements() -> None:
    context = _context()
    assert context.statements[("FFT", "signals", "concept")] == (("FFT is fast.", HELD.block_id),)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.floats(allow_nan=False) | st.text(max_size=5)
    | st.sampled_from([str(SOURCE.block_id), str(HELD.block_id), "concept", "relation", "scheme"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["kind", "label", "statement", "subject", "evidence", "relations", "target", "predicate",
                         "content", "blob", "media_type", "size", "summary", "occurred_at", "steps", "goal"]),
        inner, max_size=5),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["semantic", "procedural", "episodic", "canonical", "x"]),
    st.dictionaries(st.sampled_from(["kind", "label", "statement", "subject", "evidence", "relations", "content",
                                     "summary", "occurred_at", "steps", "goal", "scheme"]), _JSON, max_size=6),
)
def test_gate_never_crashes_on_any_payload(memory_type: str, payload: dict[str, Any]) -> None:
    [result] = _run(_candidate(payload, memory_type), context=_context(blob_size=lambda d: 1))
    assert isinstance(result, ValidatedCandidate) or result.issues
