"""What lifecycle planning needs to know about a snapshot, as a protocol with two implementations: this
module's `LedgerGraph` (a full `Ledger`, read from every provenance block) and the lineage-log index the
CLI composes from `ingest` (the same answers from one local file, for large brains)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from brain.blocks.provenance import Producer
from brain.identity import BlockId
from brain.ledger import Ledger


class DependencyGraph(Protocol):
    """Edges and facts of one snapshot's ledger; answers may name blocks that are no longer members."""

    def evidence_dependents(self, block: BlockId) -> Iterable[BlockId]:
        """Blocks whose derivation cites `block`."""
        ...

    def structural_dependents(self, block: BlockId) -> Iterable[BlockId]:
        """Semantic blocks relating to `block`, procedural blocks whose steps use it."""
        ...

    def made_by(self, producer: Producer) -> set[BlockId]:
        """Blocks whose derivation names `producer` (kind + id, and version when it gives one)."""
        ...

    def winners(self, loser: BlockId) -> tuple[BlockId, ...]:
        """Every block a supersession record names as superseding `loser`, in record order."""
        ...

    def is_demoted(self, block: BlockId) -> bool:
        """Whether a demotion record names `block`."""
        ...

    def origin(self, block: BlockId) -> str | None:
        """The origin a registration record gives a canonical block."""
        ...

    def evidence(self, block: BlockId) -> tuple[BlockId, ...]:
        """What a derived block's derivation records cite."""
        ...


class LedgerGraph:
    """`DependencyGraph` over a full `Ledger` (small brains, tests, and the oracle for the lineage index)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def evidence_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return self.ledger.dependents.get(block, ())

    def structural_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return self.ledger.structural_dependents.get(block, ())

    def made_by(self, producer: Producer) -> set[BlockId]:
        return self.ledger.made_by(producer)

    def winners(self, loser: BlockId) -> tuple[BlockId, ...]:
        return self.ledger.winners.get(loser, ())

    def is_demoted(self, block: BlockId) -> bool:
        return block in self.ledger.demoted

    def origin(self, block: BlockId) -> str | None:
        registration = self.ledger.registrations.get(block)
        return None if registration is None else registration.origin

    def evidence(self, block: BlockId) -> tuple[BlockId, ...]:
        return self.ledger.evidence.get(block, ())
