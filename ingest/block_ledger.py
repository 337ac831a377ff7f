"""The ledger as far as a few blocks are concerned, from the records the lineage log says are about them, so
that `brain show` (and `brain serve`, which runs it per request) decodes a handful of provenance blocks
instead of every one.

`LedgerReader.about(blocks)` is a `Ledger` built from the current provenance members that name `blocks`
(as subject or as evidence), plus those about the blocks they cite (their registrations give citations
their origins). Its views of `blocks` are the full ledger's: each view of a block is filed from exactly
the records naming it, records keep the ledger's order, accessibility consults the same membership, and
structural dependents are the log's edges intersected with the snapshot's readable members. When the log
does not describe the snapshot (another tool moved the head, a brain that was pulled), the reader is
the full ledger, as before; it never writes the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

from brain.blocks import MemoryType
from brain.blocks.provenance import Record
from brain.brain import Brain
from brain.identity import BlockId, OciDigest
from brain.ledger import Ledger, membership, record_of
from brain.module import Module
from ingest.lineage import Lineage, LineageLog

_LINKED = (MemoryType.SEMANTIC, MemoryType.PROCEDURAL)


class LedgerReader:
    """Ledgers of one snapshot, each exact for the blocks it was asked about."""

    def __init__(self, brain: Brain, snapshot: OciDigest | None = None) -> None:
        self.brain = brain
        self.snapshot = snapshot or brain.snapshot_digest()

    @cached_property
    def modules(self) -> dict[MemoryType, Module]:
        return dict(self.brain.modules(self.snapshot)) if self.snapshot is not None else {}

    @cached_property
    def lineage(self) -> Lineage | None:
        """The log's lineage if it describes exactly this snapshot (read on first use)."""
        return None if self.snapshot is None else LineageLog(self.brain.path).load(self.snapshot)

    @cached_property
    def full(self) -> Ledger:
        """The whole ledger (the fallback, and what a stale log leaves)."""
        return Ledger.of(self.modules)

    def about(self, blocks: Iterable[BlockId]) -> Ledger:
        """A ledger whose views of `blocks` are the full ledger's."""
        lineage = self.lineage
        if lineage is None:
            return self.full
        wanted = {b.hex for b in blocks}
        records = self._records(wanted, lineage, citing=True)
        cited = {e.hex for _, record in records for e in getattr(record, "derived_from", ())}
        records += self._records(cited - wanted, lineage, citing=False)
        ledger = Ledger.from_records(records, self._structural(wanted, lineage))
        ledger.is_member = membership(self.modules)
        return ledger

    def about_origin(self, origin: str) -> Ledger:
        """A ledger holding every current registration under `origin`, exact for the blocks they register."""
        lineage = self.lineage
        if lineage is None:
            return self.full
        return self.about(BlockId(b) for b in lineage.origins.get(origin, ()))

    def _records(self, hexes: set[str], lineage: Lineage, *, citing: bool) -> list[tuple[BlockId, Record]]:
        provenance = self.modules.get(MemoryType.PROVENANCE)
        if provenance is None:
            return []
        named: set[str] = set()
        for block in hexes:
            named.update(lineage.records_about.get(block, ()))
            if citing:
                named.update(lineage.records_citing.get(block, ()))
        found: list[tuple[BlockId, Record]] = []
        for record_id in sorted(map(BlockId, named)):
            if record_id in provenance and record_id not in provenance.tombstones:
                record = record_of(provenance.read(record_id))
                if record is not None:
                    found.append((record_id, record))
        return found

    def _structural(self, hexes: set[str], lineage: Lineage) -> list[tuple[BlockId, BlockId]]:
        readable = [m for t, m in self.modules.items() if t in _LINKED]
        return [
            (BlockId(target), dependent)
            for target in sorted(hexes)
            for dependent in map(BlockId, sorted(lineage.linked.get(target, ())))
            if any(dependent in m and dependent not in m.tombstones for m in readable)
        ]
