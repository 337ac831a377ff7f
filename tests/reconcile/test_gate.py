"""`brain.gate`: the §7.6 checks judge any candidate-shaped object (serve's proposals, not only ingest's
models), and `ingest.validate` is the same gate under ingest's names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ingest.validate
from brain import gate
from brain.blocks import Block, MemoryType, Verdict
from brain.identity import BlockId

SOURCE = Block.from_payload("canonical", {"blob": "sha256:" + "1" * 64, "media_type": "text/markdown", "size": 10})
HELD = Block.from_payload(
    "semantic", {"kind": "concept", "label": "FFT", "statement": "FFT is fast.", "evidence": [str(SOURCE.block_id)]}
)


@dataclass(frozen=True)
class Proposal:
    memory_type: str
    payload: dict[str, Any]
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Ask:
    allowed_memory_types: tuple[MemoryType, ...]
    source: BlockId


def _context() -> gate.GateContext:
    members = {MemoryType.CANONICAL: [SOURCE.block_id], MemoryType.SEMANTIC: [HELD.block_id]}
    return gate.GateContext.build(members, [HELD])


def test_plain_objects_are_judged_with_every_check() -> None:
    cited = (str(SOURCE.block_id),)
    proposals = [
        Proposal("semantic", {"kind": "concept", "label": "DFT", "statement": "A transform."}, cited),
        Proposal("semantic", {"kind": "concept", "label": "FFT", "statement": "FFT is slow."}, cited),
        Proposal("semantic", {"kind": "concept", "label": "X", "statement": "x", "relations": [
            {"kind": "related_to", "target": "sha256:" + "7" * 64}]}, ("sha256:" + "8" * 64,)),
    ]
    ok, contradicted, rejected = gate.validate_candidates(
        proposals, Ask((MemoryType.SEMANTIC,), SOURCE.block_id), _context()
    )
    assert isinstance(ok, gate.ValidatedCandidate) and ok.candidate is proposals[0]
    assert isinstance(contradicted, gate.RejectedCandidate) and contradicted.verdict is Verdict.CONTRADICTED
    assert contradicted.codes == ("contradiction",)
    assert isinstance(rejected, gate.RejectedCandidate) and rejected.verdict is Verdict.REJECTED
    assert set(rejected.codes) >= {"evidence-not-found", "evidence-not-in-task"}


def test_ingest_validate_reexports_the_same_gate() -> None:
    for name in ("GateContext", "RejectedCandidate", "ValidatedCandidate", "CHECKS_RUN", "statement_key", "verdict_of"):
        assert getattr(ingest.validate, name) is getattr(gate, name)


def test_single_checks_are_pure_functions() -> None:
    assert gate.evidence_issues(["sha256:" + "2" * 64], {SOURCE.block_id})[0].code == "evidence-not-found"
    assert gate.evidence_issues([str(SOURCE.block_id)], {SOURCE.block_id}) == []
    assert [i.code for i in gate.content_issues({"media_type": "Text/Plain"}, None)] == ["content-mismatch"]
    held = lambda key: [("old", HELD.block_id)] if key == ("FFT", None, "concept") else []  # noqa: E731
    payload = {"kind": "concept", "label": "FFT", "statement": "new"}
    assert [i.code for i in gate.semantic_issues(payload, None, held)] == ["contradiction"]
    assert gate.verdict_of(["contradiction", "pending-review"]) is Verdict.PENDING_REVIEW
