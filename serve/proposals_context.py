"""The semantic statements the gate compares a proposal with (`contradiction`, §7.6), kept across proposals.

Reading every semantic block for every proposal would cost a read per member; instead the statements of the
last semantic composition seen are kept, and a new one is reached by reading only the blocks it added (the
set difference of the two member sets) and forgetting the ones it lost. A block whose bytes were redacted
states nothing anyone can read, so it contributes nothing.
"""

from __future__ import annotations

import threading

from brain.brain import Brain
from brain.composition import ModuleRef
from brain.errors import BrainError
from brain.gate import ContradictionKey, statement_key
from brain.identity import BlockId, OciDigest
from brain.module import read_block


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
