"""Planning a redaction (§7.5): which members are tombstoned and which blobs are destroyed.

Derived blocks quote their sources, so redacting a block redacts every member whose evidence reaches it,
transitively, in every module (`only` limits it to the named blocks). Provenance records are refused: they
are the brain's own record. A block that is no longer a member (dropped) but whose bytes are still stored
(older snapshots, packed layers) is destroyed too, without a tombstone (there is no member to list): its
digests join `tombstones.json` like the others (`destroy_only`). A content blob (a canonical block's source
bytes and normalized view, a v2 block's `content`) is destroyed unless a member that stays readable names it
too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from brain.blocks.base import Block
from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.blocks.provenance import Actor, ProvenanceBlock, RemovalMechanism
from brain.errors import LifecycleRefusedError
from brain.identity import BlockId
from brain.lifecycle.cascade import reach
from brain.lifecycle.drop import Members, beyond, module_of
from brain.lifecycle.graph import DependencyGraph
from brain.lifecycle.records import ascending, removal_records


def content_digests(block: Block) -> tuple[str, ...]:
    """Hex digests of the content blobs `block` names (source bytes, normalized view, v2 content)."""
    payload = block.payload()
    holders = [payload.get("content")]
    if block.memory_type is MemoryType.CANONICAL:
        holders += [payload, payload.get("normalized_view")]
    found = [
        h["blob"].removeprefix("sha256:") for h in holders if isinstance(h, dict) and isinstance(h.get("blob"), str)
    ]
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class RedactPlan:
    """The members to tombstone, per module, and the requested ones."""

    requested: tuple[BlockId, ...]
    requested_modules: tuple[MemoryType, ...]
    tombstones: dict[MemoryType, tuple[BlockId, ...]]
    # Stored blocks that are not members any more (dropped): destroyed, never tombstoned.
    destroy_only: tuple[BlockId, ...] = ()

    @property
    def blocks(self) -> tuple[BlockId, ...]:
        return ascending(b for ids in self.tombstones.values() for b in ids)

    @property
    def destroyed(self) -> tuple[BlockId, ...]:
        """Every block whose bytes this redaction destroys (tombstoned or no longer a member)."""
        return ascending((*self.blocks, *self.destroy_only))

    @property
    def cascade(self) -> tuple[BlockId, ...]:
        return beyond(self.requested, self.tombstones)

    def records(self, *, actor: Actor, at: str, reason: str) -> list[ProvenanceBlock]:
        """One removal record (mechanism `tombstone`) per affected module."""
        first = next((b for b in self.requested if b not in self.destroy_only), self.requested[0])
        return removal_records(self.tombstones, self.requested_modules, first, actor=actor, at=at,
                               reason=reason, mechanism=RemovalMechanism.TOMBSTONE)


def plan_redaction(
    requested: Iterable[BlockId],
    members: Members,
    tombstoned: Callable[[BlockId], bool],
    graph: DependencyGraph,
    *,
    only: bool = False,
    stored: Callable[[BlockId], MemoryType | None] = lambda _: None,
) -> RedactPlan:
    """The plan for redacting `requested` (already tombstoned members are left out); raises when refused.

    `stored` tells the memory type of a block that is not a member but whose envelope is stored (None: not held).
    """
    named = ascending(requested)
    placed: dict[BlockId, MemoryType] = {}
    gone: set[BlockId] = set()
    for block in named:
        memory_type = module_of(block, members)
        if memory_type is None and (held := stored(block)) is not None and held is not MemoryType.PROVENANCE:
            gone.add(block)
            continue
        if memory_type is None:
            raise LifecycleRefusedError(
                "not-a-member", str(block), f"block {block} is not a member of any module of the current snapshot",
                "only members can be redacted; check the id with `brain ls --all`",
            )
        if memory_type is MemoryType.PROVENANCE:
            raise LifecycleRefusedError(
                "provenance-record", str(block), f"block {block.short} is a provenance record, the brain's own history",
                "records are never redacted; redact the block the record is about",
            )
        placed[block] = memory_type
    chosen: dict[MemoryType, set[BlockId]] = {}
    for block, memory_type in placed.items():
        chosen.setdefault(memory_type, set()).add(block)
    if not only:
        for block in reach(named, graph.evidence_dependents):
            memory_type = module_of(block, members)
            if memory_type is not None and memory_type is not MemoryType.PROVENANCE:
                chosen.setdefault(memory_type, set()).add(block)
            elif memory_type is None and (held := stored(block)) is not None and held is not MemoryType.PROVENANCE:
                gone.add(block)
    tombstones = {t: ascending(b for b in chosen[t] if not tombstoned(b)) for t in MODULE_ORDER if t in chosen}
    return RedactPlan(
        requested=named,
        requested_modules=tuple(t for t in MODULE_ORDER if t in set(placed.values())),
        tombstones={t: ids for t, ids in tombstones.items() if ids},
        destroy_only=ascending(gone),
    )
