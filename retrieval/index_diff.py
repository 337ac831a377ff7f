"""What changed between the snapshot the index describes and the brain's head: per module, the members (blocks,
or provenance records) that joined and those that left.

The index records the composition and tombstones of every module at its snapshot (`meta.modules`, written by
`modules_of`); moving to a new head reads the two member lists of each module whose reference changed and
subtracts. Nothing is decoded but the compositions. A member whose bytes were destroyed (tombstoned) counts as
gone. When the indexed snapshot's compositions cannot be read, the old side cannot be diffed
(`OldSideUnreadableError`, or None from `indexed_modules`): the caller rebuilds from nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from brain.errors import BrainError
from brain.identity import OciDigest
from brain.snapshot import Snapshot
from brain.store.blobs import BlobStore
from retrieval.documents import SEARCHABLE

MODULES = (*SEARCHABLE, "provenance")
# A module as the index records it: (composition digest hex, sorted tombstone hexes).
Module = tuple[str, list[str]]


class OldSideUnreadableError(Exception):
    """A composition of the snapshot the index describes cannot be read (the index is rebuilt)."""


@dataclass
class Change:
    """The members of one module that joined and left (hex ids, sorted)."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def modules_of(snapshot: Snapshot | None) -> dict[str, Module]:
    """The modules of a snapshot the index follows, as it records them."""
    if snapshot is None:
        return {}
    return {
        name: (ref.composition.hex, sorted(t.hex for t in ref.tombstones or ()))
        for name, ref in snapshot.modules.items()
        if name in MODULES
    }


def indexed_modules(meta: Callable[[str], str | None], blobs: BlobStore) -> dict[str, Module] | None:
    """The indexed snapshot's modules (from the `meta` table), or None if they cannot be diffed."""
    if meta("snapshot") is None:
        return None if meta("built") is None else {}
    value = meta("modules")
    if value is None:
        return None
    decoded = orjson.loads(value)
    modules = {t: (str(c), [str(x) for x in tomb]) for t, (c, tomb) in decoded.items()}
    for composition, _ in modules.values():
        if not blobs.has(OciDigest(composition)):
            return None
    return modules


def changes(blobs: BlobStore, old: dict[str, Module], new: dict[str, Module]) -> dict[str, Change]:
    """Every module's change from `old` to `new`; `OldSideUnreadableError` when the old side cannot be read."""
    return {t: diff(blobs, old.get(t), new.get(t)) for t in MODULES}


def diff(blobs: BlobStore, old: Module | None, new: Module | None) -> Change:
    """The members that joined and left one module."""
    if old == new:
        return Change()
    try:
        before = readable_members(blobs, old)
    except (BrainError, orjson.JSONDecodeError, KeyError, TypeError) as e:
        raise OldSideUnreadableError(str(e)) from None
    after = readable_members(blobs, new)
    return Change(added=sorted(i[7:] for i in after - before), removed=sorted(i[7:] for i in before - after))


def readable_members(blobs: BlobStore, module: Module | None) -> set[str]:
    """The member ids (`sha256:` strings, as stored) whose bytes were not destroyed."""
    if module is None:
        return set()
    composition, tombstones = module
    members = set(orjson.loads(blobs.get(OciDigest(composition)))["block_ids"])
    members.difference_update(f"sha256:{t}" for t in tombstones)
    return members
