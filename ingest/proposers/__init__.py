"""Proposers: turn a source's normalized text into candidate blocks for the validation gate.

Built in: `heuristic` (default, offline), `exec:COMMAND` (any program speaking JSON on stdin/stdout) and
`openai` (any OpenAI-compatible chat-completions endpoint); third parties register a factory under the
`brain.proposers` entry-point group. `load_proposer` picks one by spec.
"""

from __future__ import annotations

from ingest.proposers.base import (
    ProposalOutcome,
    ProposalResult,
    Proposer,
    ProposerCore,
    SourceText,
    TokenUsage,
    propose_many,
    sum_usage,
)
from ingest.proposers.candidates import (
    CANDIDATES_JSON_SCHEMA,
    Candidate,
    CandidateSet,
    Operation,
    Task,
    parse_candidate_set,
)
from ingest.proposers.errors import ProposerError

__all__ = [
    "CANDIDATES_JSON_SCHEMA",
    "Candidate",
    "CandidateSet",
    "Operation",
    "ProposalOutcome",
    "ProposalResult",
    "Proposer",
    "ProposerCore",
    "ProposerError",
    "SourceText",
    "Task",
    "TokenUsage",
    "parse_candidate_set",
    "propose_many",
    "sum_usage",
]
