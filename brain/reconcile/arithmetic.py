"""Per-module arithmetic (§10.4): M = (B ∪ ⋃Xᵢ) \\ ⋃(B \\ Xᵢ), on the compositions' member hex digests
(hash-checked, §5.1-checked, no block-id objects and no Merkle root: a root is checked where a module
reference is adopted verbatim); no block is decoded.

Sides are our head first, then theirs. A module a side does not hold is no removal: that side does not take
part. A module only one side holds is adopted verbatim (its module reference included). A composition that
is not stored (ours, theirs or the ancestor's) is a refusal naming what to fetch (§10.4, ours), and an
exclusion in the episodic module is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError, IntegrityError, NotFoundError, RefusedError
from brain.identity import OciDigest
from brain.snapshot import Snapshot

if TYPE_CHECKING:
    from brain.brain import Brain


@dataclass(frozen=True)
class Side:
    """One head taking part: its digest, snapshot, and a short name for messages ("ours", "theirs 1")."""

    digest: OciDigest
    snapshot: Snapshot
    name: str


@dataclass(frozen=True)
class ModuleMerge:
    """One module's arithmetic: what each side added to and removed from the ancestor, and the result."""

    memory_type: MemoryType
    base: frozenset[str]
    ours: frozenset[str] | None
    theirs: tuple[frozenset[str] | None, ...]
    added: tuple[frozenset[str], ...]
    """Per side (ours first): members it has that the ancestor has not."""
    removed: tuple[frozenset[str], ...]
    """Per side (ours first): ancestor members it no longer has (the exclusions)."""
    result: frozenset[str]
    verbatim: ModuleRef | None
    """The side's module reference to adopt unchanged, when exactly one side takes part."""

    @property
    def excluded(self) -> frozenset[str]:
        return frozenset().union(*self.removed)

    @property
    def incoming(self) -> frozenset[str]:
        """Members of M that are not ours."""
        return self.result - (self.ours or frozenset())


def _members(brain: Brain, ref: ModuleRef, whose: str, digest: OciDigest) -> frozenset[str]:
    try:
        # `blobs.get` re-hashes the bytes against their name: no second hash.
        memory_type, hexes = Composition.member_hexes(brain.blobs.get(ref.composition))
        if memory_type is not ref.memory_type or len(hexes) != ref.block_count:
            raise IntegrityError(f"it is a {memory_type} composition of {len(hexes)} members, the snapshot says "
                                 f"{ref.memory_type} of {ref.block_count}")
        return frozenset(hexes)
    except NotFoundError:
        raise NotFoundError(
            f"the {ref.memory_type} composition {ref.composition.short} of {whose} snapshot {digest.short} is not held",
            hint=f"fetch it first (`brain fetch REF` for {digest.short}), then merge again",
        ) from None
    except BrainError as e:
        raise NotFoundError(
            f"the {ref.memory_type} composition {ref.composition.short} of {whose} snapshot {digest.short} "
            f"is not held or unreadable: {e.message}",
            hint=f"fetch it first (`brain fetch REF` for {digest.short}), then merge again",
        ) from e


def module_merges(brain: Brain, base: Snapshot | None, base_digest: OciDigest | None,
                  sides: Sequence[Side]) -> list[ModuleMerge]:
    """Every module any side or the ancestor holds, in module order."""
    names = set(base.modules if base is not None else ())
    for side in sides:
        names |= set(side.snapshot.modules)
    merges = []
    for memory_type in MODULE_ORDER:
        if memory_type.value not in names:
            continue
        merges.append(_one(brain, memory_type, base, base_digest, sides))
    return merges


def _one(brain: Brain, memory_type: MemoryType, base: Snapshot | None, base_digest: OciDigest | None,
         sides: Sequence[Side]) -> ModuleMerge:
    key = memory_type.value
    base_ids: frozenset[str] = frozenset()
    if base is not None and base_digest is not None and key in base.modules:
        base_ids = _members(brain, base.modules[key], "the ancestor", base_digest)
    held: list[frozenset[str] | None] = []
    for side in sides:
        ref = side.snapshot.modules.get(key)
        held.append(None if ref is None else _members(brain, ref, side.name, side.digest))
    taking = [ids for ids in held if ids is not None]
    added = tuple(ids - base_ids if ids is not None else frozenset() for ids in held)
    removed = tuple(base_ids - ids if ids is not None else frozenset() for ids in held)
    excluded = frozenset().union(*removed)
    if memory_type is MemoryType.EPISODIC and excluded:
        first = min(excluded)
        who = next(side.name for side, gone in zip(sides, removed, strict=True) if first in gone)
        raise RefusedError(
            f"{who} dropped episodic block sha256:{first[:12]}, which no conforming history can do (§10.4)",
            hint="episodes are append-only: that history is not mergeable; demote instead of dropping",
        )
    result = (base_ids.union(*taking)) - excluded if taking else base_ids
    verbatim = None
    holders = [side for side, ids in zip(sides, held, strict=True) if ids is not None]
    if len(holders) == 1:
        ref = holders[0].snapshot.modules[key]
        if frozenset(held[sides.index(holders[0])] or ()) == result:
            verbatim = ref
    elif holders:
        for side, ids in zip(sides, held, strict=True):
            if ids is not None and ids == result:
                verbatim = side.snapshot.modules[key]
                break
    return ModuleMerge(memory_type, base_ids, held[0], tuple(held[1:]), added, removed, result, verbatim)
