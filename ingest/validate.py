"""The validation gate (§7.6): judge every proposed candidate before anything reaches a brain.

Pure logic: the caller supplies what the brain holds (`GateContext`); nothing here reads or writes files.

Every check runs on every candidate and issues accumulate. Besides the nine checks of §7.6 the gate runs
one of its own, `evidence-not-in-task`: a candidate may cite only the canonical source its task named
(a proposer that read one source cannot have seen another). It is an ordinary rejecting code, and since
`checks` in a validation record is "the sorted codes of the checks that ran", `CHECKS_RUN` records all
ten; `SPEC_CHECKS` is the §7.6 default set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from brain.blocks import Block, MemoryType, Verdict
from brain.blocks.generic import drop_nulls
from brain.errors import InvalidInputError
from brain.identity import BlockId, OciDigest, is_digest_string
from ingest.proposers.candidates import Candidate, CandidateSet, Task

SPEC_CHECKS: tuple[str, ...] = (
    "catalog-declaration-not-allowed",
    "content-mismatch",
    "contradiction",
    "duplicate",
    "evidence-mismatch",
    "evidence-not-found",
    "memory-type-not-allowed",
    "relation-target-not-found",
    "schema",
)
EVIDENCE_NOT_IN_TASK = "evidence-not-in-task"
CHECKS_RUN: tuple[str, ...] = tuple(sorted((*SPEC_CHECKS, EVIDENCE_NOT_IN_TASK)))
CONTRADICTION_CODES = frozenset({"contradiction", "catalog-exclusive-conflict", "catalog-scheme-conflict"})
PENDING_REVIEW = "pending-review"
# Types whose newest schema has an `evidence` member, so the candidate's evidence is inserted (§7.6).
EVIDENCE_TYPES = frozenset({MemoryType.EPISODIC, MemoryType.SEMANTIC, MemoryType.PROCEDURAL})
_BARE_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*")
_MEMORY_TYPES = {m.value: m for m in MemoryType}

ContradictionKey = tuple[str, str | None, str]


@dataclass(frozen=True)
class GateContext:
    """What the brain holds, as far as the gate cares."""

    members: Mapping[MemoryType, frozenset[BlockId]]
    """Member ids of every installed module (an uninstalled module is absent)."""
    statements: Mapping[ContradictionKey, tuple[tuple[str, BlockId], ...]] = field(default_factory=dict)
    """Member semantic blocks, superseded and demoted included: (label, subject, kind) → (statement, id)."""
    blob_size: Callable[[OciDigest], int | None] | None = None
    """Size of a stored blob, None when not stored (for v2 `content` checks)."""

    @classmethod
    def build(
        cls,
        members: Mapping[MemoryType, Iterable[BlockId]],
        semantic_blocks: Iterable[Block] = (),
        blob_size: Callable[[OciDigest], int | None] | None = None,
    ) -> GateContext:
        """A context from module members and the member semantic blocks (any schema version)."""
        statements: dict[ContradictionKey, list[tuple[str, BlockId]]] = {}
        for block in semantic_blocks:
            key, statement = statement_key(block.payload())
            if key is not None:
                statements.setdefault(key, []).append((statement, block.block_id))
        return cls(
            members={mt: frozenset(ids) for mt, ids in members.items()},
            statements={key: tuple(held) for key, held in statements.items()},
            blob_size=blob_size,
        )


@dataclass(frozen=True)
class Issue:
    """One failed check: its code and what exactly was wrong."""

    code: str
    detail: str


@dataclass(frozen=True)
class ValidatedCandidate:
    """A candidate that passed every check, with the block to commit."""

    index: int
    candidate: Candidate
    block: Block
    verdict: Verdict = Verdict.VALIDATED
    checks: tuple[str, ...] = CHECKS_RUN


@dataclass(frozen=True)
class RejectedCandidate:
    """A candidate that is not committed: its verdict, the issues, and the block when one could be built."""

    index: int
    candidate: Candidate
    verdict: Verdict
    issues: tuple[Issue, ...]
    block: Block | None = None
    checks: tuple[str, ...] = CHECKS_RUN

    @property
    def codes(self) -> tuple[str, ...]:
        """The distinct issue codes, sorted."""
        return tuple(sorted({issue.code for issue in self.issues}))


def verdict_of(codes: Iterable[str]) -> Verdict:
    """§7.6 verdict rules for a candidate's issue codes."""
    found = set(codes)
    if not found:
        return Verdict.VALIDATED
    if found <= CONTRADICTION_CODES:
        return Verdict.CONTRADICTED
    if found <= CONTRADICTION_CODES | {PENDING_REVIEW}:
        return Verdict.PENDING_REVIEW
    return Verdict.REJECTED


def validate_candidates(
    candidate_set: CandidateSet, task: Task, context: GateContext
) -> list[ValidatedCandidate | RejectedCandidate]:
    """Judge each candidate in order; blocks validated earlier in the batch count as members for later ones."""
    batch = _Batch(context)
    results: list[ValidatedCandidate | RejectedCandidate] = []
    for index, candidate in enumerate(candidate_set.candidates):
        memory_type, payload, block, issues = _judge(candidate, task, batch)
        if not issues and block is not None and memory_type is not None:
            batch.admit(memory_type, block, payload)
            results.append(ValidatedCandidate(index, candidate, block))
        else:
            verdict = verdict_of(issue.code for issue in issues)
            results.append(RejectedCandidate(index, candidate, verdict, tuple(issues), block))
    return results


class _Batch:
    """The context plus what this batch has validated so far."""

    def __init__(self, context: GateContext) -> None:
        self.context = context
        self.added: dict[MemoryType, set[BlockId]] = {}
        self.statements: dict[ContradictionKey, list[tuple[str, BlockId]]] = {}

    def admit(self, memory_type: MemoryType, block: Block, payload: dict[str, Any]) -> None:
        self.added.setdefault(memory_type, set()).add(block.block_id)
        key, statement = statement_key(payload) if memory_type is MemoryType.SEMANTIC else (None, "")
        if key is not None:
            self.statements.setdefault(key, []).append((statement, block.block_id))

    def is_member(self, memory_type: MemoryType, block_id: BlockId) -> bool:
        return block_id in self.context.members.get(memory_type, ()) or block_id in self.added.get(memory_type, ())

    def anywhere(self, block_id: BlockId) -> bool:
        return any(block_id in ids for ids in self.context.members.values()) or any(
            block_id in ids for ids in self.added.values()
        )

    def held(self, key: ContradictionKey) -> list[tuple[str, BlockId]]:
        return [*self.context.statements.get(key, ()), *self.statements.get(key, ())]


def _judge(
    candidate: Candidate, task: Task, batch: _Batch
) -> tuple[MemoryType | None, dict[str, Any], Block | None, list[Issue]]:
    memory_type = _MEMORY_TYPES.get(candidate.memory_type)
    cited = list(dict.fromkeys(candidate.evidence))
    issues = _task_issues(candidate, task, memory_type, cited)

    payload = drop_nulls(candidate.payload)
    if memory_type in EVIDENCE_TYPES and "evidence" not in payload:
        payload["evidence"] = list(candidate.evidence)
    elif "evidence" in payload and _id_set(payload["evidence"]) != set(candidate.evidence):
        issues.append(Issue("evidence-mismatch", "payload evidence differs from the candidate's evidence"))

    block = _block_of(candidate, memory_type, payload, issues)
    issues.extend(_evidence_issues(cited, batch.context.members.get(MemoryType.CANONICAL)))
    if block is not None and memory_type is not None and batch.is_member(memory_type, block.block_id):
        issues.append(Issue("duplicate", f"{block.block_id} is already a {memory_type} member"))
    if memory_type is MemoryType.SEMANTIC:
        issues.extend(_relation_issues(payload, batch))
    issues.extend(_content_issues(payload.get("content"), batch.context.blob_size))
    if memory_type is MemoryType.SEMANTIC:
        issues.extend(_semantic_issues(payload, block, batch))
    return memory_type, payload, block, issues


def _task_issues(candidate: Candidate, task: Task, memory_type: MemoryType | None, cited: list[str]) -> list[Issue]:
    """What the task rules out: a type it does not allow, evidence other than its source."""
    issues: list[Issue] = []
    if memory_type not in task.allowed_memory_types:
        allowed = ", ".join(task.allowed_memory_types)
        detail = f"{candidate.memory_type!r} is not allowed (task allows {allowed})"
        issues.append(Issue("memory-type-not-allowed", detail))
    for cited_id in cited:
        if cited_id != str(task.source):
            issues.append(Issue(EVIDENCE_NOT_IN_TASK, f"evidence {cited_id} is not the task's source {task.source}"))
    return issues


def _block_of(
    candidate: Candidate, memory_type: MemoryType | None, payload: dict[str, Any], issues: list[Issue]
) -> Block | None:
    """The block the payload validates to, or None with a `schema` issue."""
    if memory_type is None:
        issues.append(Issue("schema", f"no schema is registered for memory type {candidate.memory_type!r}"))
        return None
    try:
        return Block.from_payload(memory_type, payload)
    except InvalidInputError as e:
        issues.append(Issue("schema", e.message))
        return None


def _evidence_issues(cited: list[str], canonical: frozenset[BlockId] | None) -> list[Issue]:
    """Cited evidence that is not a canonical member."""
    issues = []
    for cited_id in cited:
        if canonical is None or not is_digest_string(cited_id) or BlockId.parse(cited_id) not in canonical:
            where = "no canonical module is installed" if canonical is None else "not a canonical member"
            issues.append(Issue("evidence-not-found", f"evidence {cited_id}: {where}"))
    return issues


def _relation_issues(payload: dict[str, Any], batch: _Batch) -> list[Issue]:
    """Semantic relations whose target is not a member anywhere."""
    return [
        Issue("relation-target-not-found", f"relation target {target} is not a member of any module")
        for target in _relation_targets(payload)
        if not batch.anywhere(target)
    ]


def _semantic_issues(payload: dict[str, Any], block: Block | None, batch: _Batch) -> list[Issue]:
    """A catalog declaration (never proposable), and statements contradicting held ones."""
    issues = []
    if block is not None and block.schema_version == 3:
        issues.append(Issue("catalog-declaration-not-allowed", "catalog structure (semantic v3) cannot be proposed"))
    key, statement = statement_key(payload)
    for held_statement, held_id in batch.held(key) if key is not None else ():
        if held_statement != statement:
            issues.append(Issue("contradiction", f"conflicts with {held_id}: {held_statement!r}"))
    return issues


def _id_set(value: Any) -> set[Any] | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return set(value)


def _relation_targets(payload: dict[str, Any]) -> list[BlockId]:
    relations = payload.get("relations")
    if not isinstance(relations, list):
        return []
    # Malformed targets are the `schema` check's business.
    targets = [r["target"] for r in relations if isinstance(r, dict) and is_digest_string(r.get("target"))]
    return [BlockId.parse(t) for t in dict.fromkeys(targets)]


def _content_issues(content: Any, blob_size: Callable[[OciDigest], int | None] | None) -> list[Issue]:
    if not isinstance(content, dict):
        return []
    issues = []
    media_type = content.get("media_type")
    if isinstance(media_type, str) and _BARE_MEDIA_TYPE.fullmatch(media_type) is None:
        detail = f"content media type {media_type!r} is not a bare lowercase type/subtype"
        issues.append(Issue("content-mismatch", detail))
    blob, size = content.get("blob"), content.get("size")
    if blob_size is not None and is_digest_string(blob) and isinstance(size, int) and not isinstance(size, bool):
        stored = blob_size(OciDigest.parse(blob))
        if stored is not None and stored != size:
            issues.append(Issue("content-mismatch", f"content {blob} is {stored} bytes, the payload says {size}"))
    return issues


def statement_key(payload: dict[str, Any]) -> tuple[ContradictionKey | None, str]:
    label, kind, statement = payload.get("label"), payload.get("kind"), payload.get("statement")
    subject = payload.get("subject")
    if not (isinstance(label, str) and isinstance(kind, str) and isinstance(statement, str)):
        return None, ""
    return (label, subject if isinstance(subject, str) else None, kind), statement
