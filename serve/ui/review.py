"""What merging a branch would bring, judged by the same gate as ingest and proposals (for the branch page).

The merge plan (`brain merge BRANCH --plan --json`, engineer "merge"'s review) says how the histories join
and what would be withdrawn; for the incoming blocks themselves (a fast-forward included, whose plan judges
nothing) each added proposable block is re-judged here against the *served* head with `brain.gate`: is its
evidence still a live canonical member, is it a duplicate, does it contradict what is served.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brain.blocks import Block, MemoryType
from brain.errors import BrainError
from brain.gate import GateContext, RejectedCandidate, validate_candidates
from brain.identity import BlockId, OciDigest
from brain.module import read_block
from serve.proposals import PROPOSABLE
from serve.proposals_context import LazyMembers, ServingBrain, StatementCache
from serve.ui.diff import member_changes

MAX_SHOWN = 200


@dataclass(frozen=True)
class Incoming:
    """One block the branch adds over the ancestor, with the gate's verdict against the served head."""

    block_id: BlockId
    memory_type: MemoryType
    payload: dict[str, Any] | None
    verdict: str
    codes: tuple[str, ...]
    details: tuple[str, ...]


@dataclass(frozen=True)
class _Judged:
    """A stored block presented to the gate as a candidate (its payload, its own evidence list)."""

    memory_type: str
    payload: dict[str, Any]
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class _ReviewTask:
    allowed_memory_types: tuple[MemoryType, ...] = PROPOSABLE
    source: BlockId | None = None


def incoming_blocks(
    brain: ServingBrain, served: OciDigest, branch: OciDigest, base: OciDigest | None, statements: StatementCache
) -> tuple[list[Incoming], int]:
    """The proposable blocks `branch` adds over `base` (default: the served head), judged; and their count."""
    base_modules = brain.modules(base if base is not None else served)
    added: list[tuple[MemoryType, BlockId]] = []
    for memory_type, module in brain.modules(branch).items():
        if memory_type not in PROPOSABLE:
            continue
        before = base_modules.get(memory_type)
        if before is not None and before.ref.composition == module.ref.composition:
            continue
        added += [(memory_type, b) for b in member_changes(brain, None if before is None else before.ref,
                                                              module.ref)[0]]
    shown = added[:MAX_SHOWN]
    blocks: list[tuple[MemoryType, BlockId, Block | None]] = []
    for memory_type, block_id in shown:
        try:
            blocks.append((memory_type, block_id, read_block(brain.blobs, block_id)))
        except BrainError:
            blocks.append((memory_type, block_id, None))
    readable = [(t, i, b) for t, i, b in blocks if b is not None]
    candidates = [_candidate(b) for _, _, b in readable]
    verdicts = validate_candidates(candidates, _ReviewTask(), _served_context(brain, served, statements))
    judged = {i: v for (_, i, _), v in zip(readable, verdicts, strict=True)}
    result = []
    for memory_type, block_id, block in blocks:
        verdict = judged.get(block_id)
        if block is None or verdict is None:
            result.append(Incoming(block_id, memory_type, None, "unreadable", ("unreadable",),
                                   ("the block's bytes are not stored or do not hash to its id",)))
        elif isinstance(verdict, RejectedCandidate):
            result.append(Incoming(block_id, memory_type, block.payload(), str(verdict.verdict), verdict.codes,
                                   tuple(i.detail for i in verdict.issues)))
        else:
            result.append(Incoming(block_id, memory_type, block.payload(), "validated", (), ()))
    return result, len(added)


def _candidate(block: Block) -> _Judged:
    payload = dict(block.payload())
    evidence = payload.get("evidence")
    cited = tuple(e for e in evidence if isinstance(e, str)) if isinstance(evidence, list) else ()
    return _Judged(str(block.memory_type), payload, cited or ("(none)",))


def _served_context(brain: ServingBrain, served: OciDigest, statements: StatementCache) -> GateContext:
    """The gate's view of the served head: member sets built only for the modules the gate asks about."""
    snapshot = brain.snapshot(served)
    refs = {} if snapshot is None else {MemoryType(k): v for k, v in snapshot.modules.items()}
    members = LazyMembers(brain, refs)
    semantic = refs.get(MemoryType.SEMANTIC)
    held = statements.at(brain, semantic, frozenset() if semantic is None else members[MemoryType.SEMANTIC])
    return GateContext(members=members, statements=held)


def warm(brain: ServingBrain, statements: StatementCache) -> None:
    """Read what the first review of a branch needs of the served head (its canonical members, its semantic
    statements), so that review costs what the branch adds."""
    served = brain.snapshot_digest()
    if served is not None:
        context = _served_context(brain, served, statements)
        context.members.get(MemoryType.CANONICAL)
