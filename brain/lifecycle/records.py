"""The provenance records a lifecycle write adds, exactly as §3.5/§3.7/§7.3 state them.

Optional members are omitted when absent (§1.3): a removal without `--policy` has no `policy`, one for the
requested module has no `cascaded_from`, and `resulting_roots` is never written (as the reference does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import (
    Actor,
    ActorKind,
    DemotionRecord,
    ProvenanceBlock,
    RemovalMechanism,
    RemovalRecord,
    SupersessionRecord,
)
from brain.identity import BlockId


def actor_of(actor_id: str) -> Actor:
    """The `actor` object for a validated id: an address is a person, a namespaced id an agent."""
    return Actor(id=actor_id, kind=ActorKind.HUMAN if "@" in actor_id else ActorKind.AGENT)


def ascending(block_ids: Iterable[BlockId]) -> tuple[BlockId, ...]:
    """Distinct ids sorted ascending by hex (the order §7.3 prescribes for `blocks`)."""
    return tuple(sorted(set(block_ids), key=lambda b: b.hex))


def removal_records(
    removals: Mapping[MemoryType, Iterable[BlockId]],
    requested: Iterable[MemoryType],
    cascaded_from: BlockId,
    *,
    actor: Actor,
    at: str,
    reason: str,
    policy: str | None = None,
    mechanism: RemovalMechanism = RemovalMechanism.DROP,
) -> list[ProvenanceBlock]:
    """One removal record per affected module (§7.3): records of the requested modules carry no
    `cascaded_from`; the others carry `cascaded_from` (the lowest-hex requested block)."""
    own = set(requested)
    records = []
    for memory_type, block_ids in sorted(removals.items(), key=lambda item: item[0].value):
        blocks = ascending(block_ids)
        if not blocks:
            continue
        record = RemovalRecord(
            actor=actor,
            at=at,
            blocks=blocks,
            mechanism=mechanism,
            memory_type=memory_type,
            reason=reason,
            policy=policy,
            cascaded_from=None if memory_type in own else cascaded_from,
        )
        records.append(ProvenanceBlock(record=record))
    return records


def supersession_record(
    winner: BlockId, loser: BlockId, *, actor: Actor, at: str, reason: str | None
) -> ProvenanceBlock:
    """`winner` supersedes `loser` (§3.5)."""
    return ProvenanceBlock(record=SupersessionRecord(actor=actor, at=at, block=winner, supersedes=loser, reason=reason))


def demotion_record(
    block: BlockId, *, actor: Actor, at: str, reason: str | None, policy: str | None = None
) -> ProvenanceBlock:
    """`block` is demoted (§3.5)."""
    return ProvenanceBlock(record=DemotionRecord(actor=actor, at=at, block=block, reason=reason, policy=policy))
