"""The validation gate (§7.6) as pure checks, shared by ingest (proposer candidates), serve (proposals) and
reconciliation (incoming blocks, §10.5). Nothing here reads or writes files: callers supply what the brain
holds as a `GateContext`.

| module | job |
|---|---|
| `codes.py` | the check codes, `Issue`, and the §7.6 verdict rules |
| `context.py` | `GateContext` (members, statements, blob sizes) and the contradiction key |
| `checks.py` | the per-block checks: evidence, relation targets, content, catalog, contradiction |
| `candidates.py` | judging a proposer's candidates against a task, batch by batch |
"""

from brain.gate.candidates import (
    CandidateLike,
    RejectedCandidate,
    TaskLike,
    ValidatedCandidate,
    validate_candidates,
)
from brain.gate.checks import (
    content_issues,
    evidence_issues,
    relation_issues,
    relation_targets,
    semantic_issues,
)
from brain.gate.codes import (
    CHECKS_RUN,
    CONTRADICTION_CODES,
    EVIDENCE_NOT_IN_TASK,
    EVIDENCE_TYPES,
    PENDING_REVIEW,
    SPEC_CHECKS,
    Issue,
    verdict_of,
)
from brain.gate.context import ContradictionKey, GateContext, statement_key

__all__ = [
    "CHECKS_RUN",
    "CONTRADICTION_CODES",
    "EVIDENCE_NOT_IN_TASK",
    "EVIDENCE_TYPES",
    "PENDING_REVIEW",
    "SPEC_CHECKS",
    "CandidateLike",
    "ContradictionKey",
    "GateContext",
    "Issue",
    "RejectedCandidate",
    "TaskLike",
    "ValidatedCandidate",
    "content_issues",
    "evidence_issues",
    "relation_issues",
    "relation_targets",
    "semantic_issues",
    "statement_key",
    "validate_candidates",
    "verdict_of",
]
