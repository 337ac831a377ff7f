"""Replacing a changed source (§3.7 "replace source"): which canonical blocks an origin currently names.

The ledger is the authority: a canonical member with a `registration` record for origin O that no
supersession or demotion names (§7.2) is a current version of O. When a source registers new bytes under
O, the new block supersedes every current version (one `supersession` record each, no reason).

Derived blocks are not cascaded by §7.2, so facts read from the old bytes would stay accessible next to
the new ones. Our choice: a derived member whose every cited evidence is now superseded is *demoted*
(a `demotion` record with a reason naming the origin and the new block). It stays a member, readable and
provable; `brain ls --all` still shows it. A block that also cites a still-current source is left alone.

The origin map is built once per run, lazily, from the snapshot the run started on: a run that registers
no new canonical block, or that started on a brain with no canonical member, never reads the provenance
module. Everything this run registers is kept in an overlay, so later sources of the same run see it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from brain.blocks import MemoryType
from brain.identity import BlockId
from brain.ledger import Ledger

_DERIVED = (MemoryType.SEMANTIC, MemoryType.PROCEDURAL, MemoryType.EPISODIC)


class Origins:
    """origin → current canonical blocks, from the run's starting ledger plus what the run registered."""

    def __init__(self, load_ledger: Callable[[], Ledger | None], is_member: Callable[[MemoryType, BlockId], bool]):
        self._load_ledger = load_ledger
        self._is_member = is_member
        self._ledger: Ledger | None = None
        self._loaded = False
        self._committed: dict[str, set[BlockId]] = {}
        self._staged: dict[str, set[BlockId]] = {}
        self._superseded: set[BlockId] = set()
        self._demoted: set[BlockId] = set()

    def _load(self) -> Ledger | None:
        if not self._loaded:
            self._loaded = True
            self._ledger = self._load_ledger()
            if self._ledger is not None:
                for block_id, record in self._ledger.registrations.items():
                    if record.origin is not None and self._ledger.is_accessible(block_id):
                        self._committed.setdefault(record.origin, set()).add(block_id)
        return self._ledger

    def current(self, origin: str, new: BlockId) -> list[BlockId]:
        """The accessible canonical members registered under `origin`, other than `new`, ascending."""
        self._load()
        found = self._committed.get(origin, set()) | self._staged.get(origin, set())
        return sorted(
            (b for b in found if b != new and b not in self._superseded and self._is_member(MemoryType.CANONICAL, b)),
            key=lambda b: b.hex,
        )

    def superseded_by(self, block: BlockId) -> list[BlockId]:
        """The blocks that supersede `block` in the run's starting ledger, ascending; [] if none does."""
        ledger = self._load()
        return sorted(ledger.superseded_by.get(block, ()) if ledger is not None else (), key=lambda b: b.hex)

    def registered(self, origin: str, block: BlockId, superseded: Iterable[BlockId]) -> None:
        """Record that this run registered `block` under `origin`, superseding `superseded`."""
        self._staged.setdefault(origin, set()).add(block)
        self._superseded.update(superseded)

    def stale_dependents(self, superseded: Iterable[BlockId]) -> list[BlockId]:
        """Accessible derived members whose every cited evidence is now superseded, ascending."""
        ledger = self._load()
        if ledger is None:
            return []
        stale: set[BlockId] = set()
        for source in superseded:
            for block in ledger.dependents.get(source, ()):
                if block in self._demoted or not ledger.is_accessible(block):
                    continue
                if not any(self._is_member(t, block) for t in _DERIVED):
                    continue
                if all(e in self._superseded or not ledger.is_accessible(e) for e in ledger.evidence.get(block, ())):
                    stale.add(block)
        self._demoted |= stale
        return sorted(stale, key=lambda b: b.hex)
