"""The semantic statements the gate compares a proposal with (`contradiction`, §7.6), kept across proposals.

Reading every semantic block for every proposal would cost a read per member; instead the statements of the
last semantic composition seen are kept, and a new one is reached by reading only the blocks it added (the
set difference of the two member sets) and forgetting the ones it lost. A block whose bytes were redacted
states nothing anyone can read, so it contributes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from typing import Any, TypeVar

from brain.brain import Brain
from brain.blocks import MemoryType
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError
from brain.gate import ContradictionKey, statement_key
from brain.identity import BlockId, OciDigest
from brain.module import read_block


_T = TypeVar("_T")
_MISSING: Any = object()


class StatementCache:
    """(label, subject, kind) → ((statement, id), ...) of one semantic composition, updated incrementally."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._composition: OciDigest | None = None
        self._ids: frozenset[BlockId] = frozenset()
        self._keys: dict[BlockId, tuple[ContradictionKey, str]] = {}
        self._by_key: dict[ContradictionKey, dict[BlockId, str]] = {}
        self._statements: dict[ContradictionKey, tuple[tuple[str, BlockId], ...]] = {}

    def at(
        self, brain: Brain, ref: ModuleRef | None, members: frozenset[BlockId]
    ) -> dict[ContradictionKey, tuple[tuple[str, BlockId], ...]]:
        """The statements of the semantic module `ref` (whose members are `members`)."""
        with self._lock:
            if ref is None:
                return {}
            if ref.composition != self._composition:
                self._move(brain, members)
                self._composition = ref.composition
            return self._statements

    def _move(self, brain: Brain, members: frozenset[BlockId]) -> None:
        gone, added = self._ids - members, members - self._ids
        touched: set[ContradictionKey] = set()
        for block_id in gone:
            found = self._keys.pop(block_id, None)
            if found is not None:
                touched.add(found[0])
                self._by_key.get(found[0], {}).pop(block_id, None)
        for block_id in added:
            try:
                payload = read_block(brain.blobs, block_id).payload()
            except BrainError:
                continue  # redacted or missing: verify reports it; it states nothing readable
            key, statement = statement_key(payload)
            if key is not None:
                self._keys[block_id] = (key, statement)
                self._by_key.setdefault(key, {})[block_id] = statement
                touched.add(key)
        self._ids = members
        statements = dict(self._statements) if touched else self._statements
        for key in touched:
            held = self._by_key.get(key)
            if held:
                statements[key] = tuple((statement, block_id) for block_id, statement in held.items())
            else:
                statements.pop(key, None)
                self._by_key.pop(key, None)
        # A new dict when anything changed: a gate still judging with the old one sees a consistent view.
        self._statements = statements


class ServingBrain(Brain):
    """A long-lived `Brain` for a server: its verified compositions are kept, the `limit` most recently used.

    A proposal reads every module of its branch; the modules it did not touch are the same compositions as
    last time, so they are neither decoded nor re-hashed again; the ones it rewrites are kept as its writer
    built them (`built`), and the least recently used let go instead of accumulating for the life of the server.
    """

    def __init__(self, path: Path, limit: int = 12, *, trees: bool = False) -> None:
        super().__init__(path)
        self.limit = limit
        self.trees = trees
        self._members: dict[OciDigest, frozenset[BlockId]] = {}

    def _decoded(self, composition: Composition) -> None:
        """With `trees`, every composition read keeps its Merkle levels (the root check then reads them), so
        a commit that adds a few members to it re-hashes only part of the tree (`Composition.of_sorted`)."""
        if self.trees:
            composition.keep_tree()

    def built(
        self, composition: Composition, members: Callable[[], frozenset[BlockId]], replaced: OciDigest | None = None
    ) -> None:
        """Keep a composition this process's writer just built (its root computed from the very ids), so the
        next proposal on the branch neither reads, re-hashes nor decodes it, nor rebuilds its member set.

        The composition it replaces on that branch is next to be let go (unless the head's snapshot names it:
        every agent's first proposal starts from the served modules): with twenty agents taking turns, the
        superseded versions would otherwise push out the current ones, and every proposal would read, decode
        and re-hash its branch's modules again (measured: 250 ms of CPU a proposal instead of 65 at 10^5
        blocks)."""
        digest = composition.digest
        composition.drop_bytes()  # stored already: a 10^5-member document is megabytes
        self._compositions.pop(digest, None)
        self._compositions[digest] = composition
        self._members.pop(digest, None)
        self._members[digest] = members()
        if replaced is not None and replaced != digest and replaced not in self._served():
            _next_to_go(self._compositions, replaced)
            _next_to_go(self._members, replaced)
        self._evict()

    def _served(self) -> frozenset[OciDigest]:
        """The compositions the head's snapshot names."""
        snapshot = self.snapshot()
        return frozenset() if snapshot is None else frozenset(ref.composition for ref in snapshot.modules.values())

    def composition(self, ref: ModuleRef) -> Composition:
        """`Brain.composition`, with least-recently-used eviction."""
        cached = self._compositions.pop(ref.composition, None)
        if cached is not None:
            self._compositions[ref.composition] = cached
            return cached
        composition = super().composition(ref)
        self._evict()
        return composition

    def _evict(self) -> None:
        while len(self._compositions) > self.limit:
            del self._compositions[next(iter(self._compositions))]
        while len(self._members) > self.limit:
            del self._members[next(iter(self._members))]

    def member_set(self, ref: ModuleRef) -> frozenset[BlockId]:
        """The members of the composition `ref` names, as a set (kept beside the composition)."""
        found = self._members.pop(ref.composition, None)
        if found is None:
            found = frozenset(self.composition(ref).block_ids)
        self._members[ref.composition] = found
        self._evict()
        return found


def _next_to_go(cache: dict[OciDigest, _T], key: OciDigest) -> None:
    """Move `key` to the least recently used end of `cache` (insertion order), if it is there."""
    found = cache.pop(key, _MISSING)
    if found is not _MISSING:
        items = list(cache.items())
        cache.clear()
        cache[key] = found
        cache.update(items)


class LazyMembers(Mapping[MemoryType, frozenset[BlockId]]):
    """The gate's member sets of a snapshot's modules, each built when the gate first asks for it (it needs the
    canonical module and the candidates' own; every module only when a relation names a target). A redacted
    canonical member is left out: a destroyed source cannot be cited as evidence."""

    def __init__(self, brain: ServingBrain, refs: Mapping[MemoryType, ModuleRef]) -> None:
        self._brain = brain
        self._refs = dict(refs)
        self._sets: dict[MemoryType, frozenset[BlockId]] = {}

    def __getitem__(self, memory_type: MemoryType) -> frozenset[BlockId]:
        found = self._sets.get(memory_type)
        if found is None:
            ref = self._refs[memory_type]
            found = self._brain.member_set(ref)
            if memory_type is MemoryType.CANONICAL and ref.tombstones:
                found = found - frozenset(ref.tombstones)
            self._sets[memory_type] = found
        return found

    def __iter__(self) -> Iterator[MemoryType]:
        return iter(self._refs)

    def __len__(self) -> int:
        return len(self._refs)
