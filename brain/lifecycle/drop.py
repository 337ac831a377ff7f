"""Planning a drop (§7.3, §7.4): check every refusal, compute the cascade per module, build the records.

Nothing here writes. `plan_drop` raises `LifecycleRefusedError` for the first refusal in a fixed order
(non-member, episodic, canonical without permission, a cascade reaching an episode), so a dry run and the
real run refuse identically; `DropPlan.records` gives the exact removal records.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass

from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.blocks.provenance import Actor, ProvenanceBlock
from brain.errors import LifecycleRefusedError
from brain.identity import BlockId
from brain.lifecycle.cascade import reach
from brain.lifecycle.graph import DependencyGraph
from brain.lifecycle.records import ascending, removal_records

Members = Mapping[MemoryType, Container[BlockId]]
_EXPLAINING = frozenset({"registration", "normalization", "derivation"})  # what `brain verify` requires of a member


@dataclass(frozen=True)
class DropPlan:
    """What a drop removes: the requested blocks, and every member of every module the cascade reaches."""

    requested: tuple[BlockId, ...]
    requested_modules: tuple[MemoryType, ...]
    removals: dict[MemoryType, tuple[BlockId, ...]]

    @property
    def cascaded_from(self) -> BlockId:
        """The lowest-hex requested block: what other modules' records name in `cascaded_from` (§7.3)."""
        return self.requested[0]

    @property
    def cascade(self) -> tuple[BlockId, ...]:
        """The removed blocks beyond the requested ones, ascending."""
        return beyond(self.requested, self.removals)

    @property
    def count(self) -> int:
        return sum(len(ids) for ids in self.removals.values())

    def records(self, *, actor: Actor, at: str, reason: str, policy: str | None) -> list[ProvenanceBlock]:
        """The removal records, one per affected module, as §7.3 states them."""
        return removal_records(
            self.removals, self.requested_modules, self.cascaded_from, actor=actor, at=at, reason=reason, policy=policy
        )


def beyond(requested: Iterable[BlockId], per_module: Mapping[MemoryType, Iterable[BlockId]]) -> tuple[BlockId, ...]:
    """The blocks of a plan's modules other than the requested ones, ascending: what its cascade adds."""
    named = set(requested)
    return ascending(b for ids in per_module.values() for b in ids if b not in named)


def module_of(block: BlockId, members: Members) -> MemoryType | None:
    """The module `block` is a member of (None: of none)."""
    return next((t for t in MODULE_ORDER if t in members and block in members[t]), None)


def drop_cascade(graph: DependencyGraph, blocks: Iterable[BlockId]) -> set[BlockId]:
    """Dependents of `blocks` over evidence and structural edges, transitively, the blocks excluded (§7.4)."""
    return reach(blocks, lambda b: (*graph.evidence_dependents(b), *graph.structural_dependents(b)))


def plan_drop(  # noqa: C901 - one refusal per §7.4 rule, checked in the order the messages promise
    requested: Iterable[BlockId],
    members: Members,
    graph: DependencyGraph,
    *,
    allow_canonical: bool = False,
    describe: Mapping[BlockId, str] | None = None,
    explains: Callable[[BlockId], tuple[str, BlockId] | None] | None = None,
) -> DropPlan:
    """The plan for dropping `requested`, or `LifecycleRefusedError` naming the first block that forbids it.

    `describe` (optional) gives a short title per block for the messages. `explains` (optional) tells what
    a provenance record is about (`(record_type, block)`): a record a remaining member needs to verify (its
    registration, normalization or derivation) is refused, so a drop never leaves a head that fails verify.
    """
    named = ascending(requested)
    if not named:
        raise ValueError("a drop names at least one block")

    def said(block: BlockId) -> str:
        title = describe.get(block) if describe is not None else None
        return f"{block.short} ({title})" if title else str(block.short)

    placed: dict[BlockId, MemoryType] = {}
    for block in named:
        memory_type = module_of(block, members)
        if memory_type is None:
            raise LifecycleRefusedError(
                "not-a-member", str(block), f"block {block} is not a member of any module of the current snapshot",
                "check the id with `brain ls --all` (a dropped block is gone from the head already)",
            )
        placed[block] = memory_type
    for block in named:
        if placed[block] is MemoryType.EPISODIC:
            raise LifecycleRefusedError(
                "episodic-append-only", str(block),
                f"block {said(block)} is episodic, and episodes are never dropped (§7.4)",
                f"demote it instead: `brain demote {block.short} --reason ...`",
            )
    for block in named:
        if placed[block] is MemoryType.CANONICAL and not allow_canonical:
            raise LifecycleRefusedError(
                "canonical-not-allowed", str(block), f"block {said(block)} is canonical: dropping a source cascades to "
                "everything drawn from it", "pass --allow-canonical to drop it (see --dry-run for the cascade)",
            )
    removals: dict[MemoryType, set[BlockId]] = {}
    for block in named:
        removals.setdefault(placed[block], set()).add(block)
    reached = drop_cascade(graph, named)
    for block in sorted(reached, key=lambda b: b.hex):
        memory_type = module_of(block, members)
        if memory_type is None or memory_type is MemoryType.PROVENANCE:
            continue  # no longer a member; provenance records are never cascaded (§7.4)
        if memory_type is MemoryType.EPISODIC:
            source = _first_cause(block, named, graph)
            raise LifecycleRefusedError(
                "cascade-reaches-episodic", str(source),
                f"dropping {said(source)} would cascade to episodic block {said(block)}, "
                "and episodes are never dropped",
                f"demote is the removal path: `brain demote {block.short} --reason ...` (or drop the blocks that "
                "do not reach the episode)",
            )
        if memory_type is MemoryType.CANONICAL and not allow_canonical:
            raise LifecycleRefusedError(
                "canonical-not-allowed", str(block), f"the cascade reaches canonical block {said(block)}",
                "pass --allow-canonical to drop it too",
            )
        removals.setdefault(memory_type, set()).add(block)
    if explains is not None:
        leaving = {b for ids in removals.values() for b in ids}
        for block in named:
            about = explains(block) if placed[block] is MemoryType.PROVENANCE else None
            needed = about is not None and about[0] in _EXPLAINING and about[1] not in leaving
            if about is not None and needed and module_of(about[1], members) is not None:
                raise LifecycleRefusedError(
                    "record-explains-member", str(block),
                    f"provenance record {block.short} is the {about[0]} record of member {said(about[1])}, which "
                    "would no longer verify", f"drop {about[1].short} instead (its records stay as history)",
                )
    return DropPlan(
        requested=named,
        requested_modules=tuple(t for t in MODULE_ORDER if t in set(placed.values())),
        removals={t: ascending(removals[t]) for t in MODULE_ORDER if t in removals},
    )


def _first_cause(target: BlockId, named: tuple[BlockId, ...], graph: DependencyGraph) -> BlockId:
    """The lowest-hex requested block whose cascade reaches `target` (what a refusal names)."""
    return next((b for b in named if target in drop_cascade(graph, [b])), named[0])
