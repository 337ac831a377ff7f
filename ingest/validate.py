"""The validation gate (§7.6) for proposer candidates: `brain.gate` judges, this module keeps ingest's names.

The checks are pure and live in `brain.gate` (serve's proposals and reconciliation judge with them too);
`validate_candidates` here takes ingest's `CandidateSet`.
"""

from __future__ import annotations

from brain.gate import (
    CHECKS_RUN,
    CONTRADICTION_CODES,
    EVIDENCE_NOT_IN_TASK,
    EVIDENCE_TYPES,
    PENDING_REVIEW,
    SPEC_CHECKS,
    ContradictionKey,
    GateContext,
    Issue,
    RejectedCandidate,
    ValidatedCandidate,
    statement_key,
    verdict_of,
)
from brain.gate import validate_candidates as _validate
from ingest.proposers.candidates import Candidate, CandidateSet, Task

__all__ = [
    "CHECKS_RUN",
    "CONTRADICTION_CODES",
    "EVIDENCE_NOT_IN_TASK",
    "EVIDENCE_TYPES",
    "PENDING_REVIEW",
    "SPEC_CHECKS",
    "ContradictionKey",
    "GateContext",
    "Issue",
    "RejectedCandidate",
    "ValidatedCandidate",
    "statement_key",
    "validate_candidates",
    "verdict_of",
]


def validate_candidates(
    candidate_set: CandidateSet, task: Task, context: GateContext
) -> list[ValidatedCandidate[Candidate] | RejectedCandidate[Candidate]]:
    """Judge each candidate of the answer in order (see `brain.gate.validate_candidates`)."""
    return _validate(candidate_set.candidates, task, context)
