"""Replacing a changed source (§3.7 "replace source"): which canonical blocks an origin currently names.

The ledger is the authority: a canonical member with a `registration` record for origin O that no
supersession or demotion names (§7.2) is a current version of O. When a source registers new bytes under
O, the new block supersedes every current version (one `supersession` record each, no reason).

Derived blocks are not cascaded by §7.2, so facts read from the old bytes would stay accessible next to
the new ones. Our choice: a derived member whose every cited evidence is now superseded is *demoted*
(a `demotion` record with a reason naming the origin and the new block). It stays a member, readable and
provable; `brain ls --all` still shows it. A block that also cites a still-current source is left alone.

The origin map is read once per run, lazily, for the snapshot the run started on: from the sidecar
`boltzmann/origins.json` when it was saved for exactly that snapshot (a cache, local, never published),
else rebuilt from the ledger (reading every provenance block: seconds for a large brain). A run that
registers no new canonical block never reads either. Everything this run registers is kept in an
overlay, so later sources of the same run see it; `save` writes the merged map after each checkpoint.
Demoting needs the ledger's evidence edges, so replacing a source always reads the ledger.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from brain.blocks import MemoryType
from brain.errors import InvalidInputError
from brain.identity import BlockId, OciDigest
from brain.ledger import Ledger
from brain.store.atomic import atomic_write

FORMAT = "brain.origins/1"
SIDECAR = Path("boltzmann") / "origins.json"

_DERIVED = (MemoryType.SEMANTIC, MemoryType.PROCEDURAL, MemoryType.EPISODIC)


class Origins:
    """origin → current canonical blocks, from the run's starting ledger plus what the run registered."""

    def __init__(
        self,
        brain_path: Path,
        start: OciDigest | None,
        load_ledger: Callable[[], Ledger | None],
        is_member: Callable[[MemoryType, BlockId], bool],
    ) -> None:
        self._file = Path(brain_path) / SIDECAR
        self._start = start
        self._load_ledger = load_ledger
        self._is_member = is_member
        self._ledger: Ledger | None = None
        self._ledger_loaded = False
        self._committed: dict[str, set[BlockId]] | None = None
        self._staged: dict[str, set[BlockId]] = {}
        self._superseded: set[BlockId] = set()
        self._demoted: set[BlockId] = set()

    def _load(self) -> Ledger | None:
        if not self._ledger_loaded:
            self._ledger_loaded = True
            self._ledger = self._load_ledger()
        return self._ledger

    def _map(self) -> dict[str, set[BlockId]]:
        if self._committed is None:
            self._committed = self._read_sidecar()
            if self._committed is None:
                self._committed = {}
                ledger = self._load()
                for block_id, record in ledger.registrations.items() if ledger is not None else ():
                    if record.origin is not None and ledger is not None and ledger.is_accessible(block_id):
                        self._committed.setdefault(record.origin, set()).add(block_id)
        return self._committed

    def _read_sidecar(self) -> dict[str, set[BlockId]] | None:
        if self._start is None:
            return {}
        try:
            document = json.loads(self._file.read_bytes())
            if document.get("format") != FORMAT or document.get("snapshot") != str(self._start):
                return None
            return {origin: {BlockId(h) for h in blocks} for origin, blocks in document["origins"].items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError, InvalidInputError):
            return None  # a cache: anything odd means rebuilding from the ledger

    def save(self, snapshot: OciDigest) -> None:
        """Record the map as of `snapshot` (just committed); a no-op if the run never needed it."""
        if self._committed is None and self._staged:
            self._map()  # the run registered sources without asking: the map must include the committed part
        if self._committed is None:
            return
        committed = self._committed
        for origin, blocks in self._staged.items():
            committed[origin] = committed.get(origin, set()) | blocks
        for origin in [o for o, blocks in committed.items() if blocks & self._superseded]:
            committed[origin] = committed[origin] - self._superseded
        origins = {o: sorted(b.hex for b in blocks) for o, blocks in committed.items() if blocks}
        document = {"format": FORMAT, "origins": origins, "snapshot": str(snapshot)}
        atomic_write(self._file, json.dumps(document, separators=(",", ":"), sort_keys=True).encode(), sync=False)
        self._staged = {}
        self._start = snapshot

    def current(self, origin: str, new: BlockId) -> list[BlockId]:
        """The accessible canonical members registered under `origin`, other than `new`, ascending."""
        found = self._map().get(origin, set()) | self._staged.get(origin, set())
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
