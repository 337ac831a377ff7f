"""Judging a proposer's candidates against its task (§7.6): build each block, run every check, accumulate
the issues (no short-circuit), and let blocks validated earlier in the batch count as members for later ones.

Candidates and tasks are read through two small protocols, so ingest's pydantic models and serve's
proposals are judged by the same code without `brain` importing either.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from brain.blocks import Block, MemoryType, Verdict
from brain.blocks.generic import drop_nulls
from brain.errors import InvalidInputError
from brain.gate.checks import content_issues, evidence_issues, relation_issues, semantic_issues
from brain.gate.codes import CHECKS_RUN, EVIDENCE_NOT_IN_TASK, EVIDENCE_TYPES, Issue, verdict_of
from brain.gate.context import ContradictionKey, GateContext, statement_key
from brain.identity import BlockId

_MEMORY_TYPES = {m.value: m for m in MemoryType}


class CandidateLike(Protocol):
    """One proposed block: its memory type (a string, so nonsense reaches the gate), payload and evidence."""

    @property
    def memory_type(self) -> str: ...

    @property
    def payload(self) -> dict[str, Any]: ...

    @property
    def evidence(self) -> tuple[str, ...]: ...


class TaskLike(Protocol):
    """What a task constrains: the memory types it allows and the one source it names (None: an agent's
    proposal, which may cite any canonical member; `evidence-not-in-task` then does not run)."""

    @property
    def allowed_memory_types(self) -> tuple[MemoryType, ...]: ...

    @property
    def source(self) -> BlockId | None: ...


C = TypeVar("C", bound=CandidateLike)


@dataclass(frozen=True)
class ValidatedCandidate(Generic[C]):
    """A candidate that passed every check, with the block to commit."""

    index: int
    candidate: C
    block: Block
    verdict: Verdict = Verdict.VALIDATED
    checks: tuple[str, ...] = CHECKS_RUN


@dataclass(frozen=True)
class RejectedCandidate(Generic[C]):
    """A candidate that is not committed: its verdict, the issues, and the block when one could be built."""

    index: int
    candidate: C
    verdict: Verdict
    issues: tuple[Issue, ...]
    block: Block | None = None
    checks: tuple[str, ...] = CHECKS_RUN

    @property
    def codes(self) -> tuple[str, ...]:
        """The distinct issue codes, sorted."""
        return tuple(sorted({issue.code for issue in self.issues}))


def validate_candidates(
    candidates: Sequence[C], task: TaskLike, context: GateContext
) -> list[ValidatedCandidate[C] | RejectedCandidate[C]]:
    """Judge each candidate in order; blocks validated earlier in the batch count as members for later ones."""
    batch = _Batch(context)
    results: list[ValidatedCandidate[C] | RejectedCandidate[C]] = []
    for index, candidate in enumerate(candidates):
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

    def admit(self, memory_type: MemoryType, block: Block, payload: Mapping[str, Any]) -> None:
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
    candidate: CandidateLike, task: TaskLike, batch: _Batch
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
    issues.extend(evidence_issues(cited, batch.context.members.get(MemoryType.CANONICAL)))
    if block is not None and memory_type is not None and batch.is_member(memory_type, block.block_id):
        issues.append(Issue("duplicate", f"{block.block_id} is already a {memory_type} member"))
    if memory_type is MemoryType.SEMANTIC:
        issues.extend(relation_issues(payload, batch.anywhere))
    issues.extend(content_issues(payload.get("content"), batch.context.blob_size))
    if memory_type is MemoryType.SEMANTIC:
        issues.extend(semantic_issues(payload, block, batch.held))
    return memory_type, payload, block, issues


def _task_issues(
    candidate: CandidateLike, task: TaskLike, memory_type: MemoryType | None, cited: Iterable[str]
) -> list[Issue]:
    """What the task rules out: a type it does not allow, evidence other than its source."""
    issues: list[Issue] = []
    if memory_type not in task.allowed_memory_types:
        allowed = ", ".join(task.allowed_memory_types)
        detail = f"{candidate.memory_type!r} is not allowed (task allows {allowed})"
        issues.append(Issue("memory-type-not-allowed", detail))
    for cited_id in cited if task.source is not None else ():
        if cited_id != str(task.source):
            issues.append(Issue(EVIDENCE_NOT_IN_TASK, f"evidence {cited_id} is not the task's source {task.source}"))
    return issues


def _block_of(
    candidate: CandidateLike, memory_type: MemoryType | None, payload: dict[str, Any], issues: list[Issue]
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


def _id_set(value: Any) -> set[Any] | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return set(value)
