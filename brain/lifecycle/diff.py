"""What changed between two snapshots (`brain diff`, `brain log`): per module, the members added and removed
(from the two compositions' sorted id lists, never decoding a block), and what the provenance records added
in between say about them (removal mechanism and reason, supersessions, demotions), plus redactions (the
module references' `tombstones`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.blocks.provenance import (
    DemotionRecord,
    Record,
    RemovalRecord,
    SupersessionRecord,
)
from brain.composition import ModuleRef
from brain.identity import BlockId


@dataclass
class ModuleChange:
    """One module's changes; `removed_by` says which record removed each removed block (when known)."""

    added: tuple[BlockId, ...] = ()
    removed: tuple[BlockId, ...] = ()
    superseded: dict[BlockId, BlockId] = field(default_factory=dict)  # loser → winner
    demoted: dict[BlockId, str | None] = field(default_factory=dict)  # block → reason
    redacted: tuple[BlockId, ...] = ()
    removed_by: dict[BlockId, RemovalRecord] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.superseded or self.demoted or self.redacted)


def member_changes(
    before: Sequence[BlockId], after: Sequence[BlockId]
) -> tuple[tuple[BlockId, ...], tuple[BlockId, ...]]:
    """(added, removed) between two ascending member lists, ascending."""
    old, new = set(before), set(after)
    return tuple(b for b in after if b not in old), tuple(b for b in before if b not in new)


def module_changes(
    before: Mapping[MemoryType, ModuleRef],
    after: Mapping[MemoryType, ModuleRef],
    members: Callable[[ModuleRef], Sequence[BlockId]],
    *,
    pair: Callable[[ModuleRef | None, ModuleRef | None], tuple[tuple[BlockId, ...], tuple[BlockId, ...]]]
    | None = None,
) -> dict[MemoryType, ModuleChange]:
    """Added/removed members and new tombstones per module; a module whose composition and tombstones are
    unchanged is not read at all. `pair(old, new)`, when given, finds a changed module's (added, removed)
    itself (e.g. by comparing the two stored documents) instead of `member_changes` over `members`."""
    changes: dict[MemoryType, ModuleChange] = {}
    for memory_type in MODULE_ORDER:
        old, new = before.get(memory_type), after.get(memory_type)
        if old is None and new is None:
            continue
        change = ModuleChange()
        if old is None or new is None or old.composition != new.composition:
            change.added, change.removed = pair(old, new) if pair is not None else member_changes(
                () if old is None else members(old), () if new is None else members(new)
            )
        old_tombs = set(() if old is None else old.tombstones or ())
        change.redacted = tuple(t for t in (() if new is None else new.tombstones or ()) if t not in old_tombs)
        changes[memory_type] = change
    return changes


def apply_records(
    changes: dict[MemoryType, ModuleChange], records: Iterable[Record],
    module_of: Callable[[BlockId], MemoryType | None]
) -> None:
    """Attach what the records added between the snapshots say: removals, supersessions, demotions."""
    for record in records:
        if isinstance(record, RemovalRecord):
            change = changes.get(record.memory_type)
            if change is not None:
                removed = set(change.removed)
                for block in record.blocks:
                    if block in removed:
                        change.removed_by[block] = record
        elif isinstance(record, SupersessionRecord):
            memory_type = module_of(record.supersedes)
            if memory_type is not None and memory_type in changes:
                changes[memory_type].superseded[record.supersedes] = record.block
        elif isinstance(record, DemotionRecord):
            memory_type = module_of(record.block)
            if memory_type is not None and memory_type in changes:
                changes[memory_type].demoted[record.block] = record.reason


def summary_line(changes: Mapping[MemoryType, ModuleChange]) -> str:
    """`+12 semantic, -3 procedural (drop: source deleted)`: counts per module, then the removal reasons."""
    parts: list[str] = []
    reasons: dict[str, None] = {}
    for memory_type, change in changes.items():
        if memory_type is MemoryType.PROVENANCE:
            continue
        if change.added:
            parts.append(f"+{len(change.added)} {memory_type}")
        if change.removed:
            parts.append(f"-{len(change.removed)} {memory_type}")
        if change.superseded:
            parts.append(f"{len(change.superseded)} {memory_type} superseded")
        if change.demoted:
            parts.append(f"{len(change.demoted)} {memory_type} demoted")
        if change.redacted:
            parts.append(f"{len(change.redacted)} {memory_type} redacted")
        for record in change.removed_by.values():
            reasons[f"{record.mechanism}: {record.reason}"] = None
    provenance = changes.get(MemoryType.PROVENANCE)
    if provenance is not None:
        for record in provenance.removed_by.values():
            reasons[f"{record.mechanism}: {record.reason}"] = None
        if provenance.removed:
            parts.append(f"-{len(provenance.removed)} provenance")
    text = ", ".join(parts) or "no member changes"
    if reasons:
        shown = list(reasons)
        text += " (" + "; ".join(shown[:2]) + (f"; +{len(shown) - 2} more" if len(shown) > 2 else "") + ")"
    return text
