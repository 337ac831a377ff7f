"""What judging needs to know about OUR head's ledger (`OurIndex`), and its implementation over a full
`Ledger` (small brains, tests). The CLI hands in one over the lineage log for large brains, so a merge never
decodes every provenance or semantic block of ours: only incoming blocks are read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from brain.blocks.memory_type import MemoryType
from brain.gate import ContradictionKey, statement_key
from brain.identity import BlockId, OciDigest
from brain.ledger import Ledger

if TYPE_CHECKING:
    from brain.brain import Brain


class OurIndex(Protocol):
    """Edges and facts of our head's ledger; answers may name blocks that are no longer members."""

    def evidence_dependents(self, block: BlockId) -> Iterable[BlockId]:
        """Blocks whose derivation cites `block`."""
        ...

    def structural_dependents(self, block: BlockId) -> Iterable[BlockId]:
        """Semantic blocks relating to `block`, procedural blocks whose steps use it."""
        ...

    def winners(self, loser: BlockId) -> tuple[BlockId, ...]:
        """Every block a supersession record names as superseding `loser`."""
        ...

    def evidence(self, block: BlockId) -> tuple[BlockId, ...]:
        """What a derived block's derivation records cite."""
        ...

    def statements(self, key: ContradictionKey) -> Iterable[tuple[str, BlockId]]:
        """Semantic blocks with this (label, subject, kind), and their statements."""
        ...

    def removed(self, block: BlockId) -> bool:
        """Whether a removal record names `block`."""
        ...

    def origin(self, block: BlockId) -> str | None:
        """The origin our registration record gives source `block` (None: none given, or not ours)."""
        ...


class LedgerIndex:
    """`OurIndex` over a full `Ledger` and every semantic member (reads the whole head once)."""

    def __init__(self, brain: Brain, snapshot: OciDigest) -> None:
        modules = brain.modules(snapshot)
        self.ledger = Ledger.of(modules)
        self._statements: dict[ContradictionKey, list[tuple[str, BlockId]]] = {}
        semantic = modules.get(MemoryType.SEMANTIC)
        if semantic is not None:
            tombstones = semantic.tombstones
            for block_id in semantic.block_ids:
                if block_id in tombstones:
                    continue
                key, statement = statement_key(semantic.read(block_id).payload())
                if key is not None:
                    self._statements.setdefault(key, []).append((statement, block_id))

    def evidence_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return self.ledger.dependents.get(block, ())

    def structural_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return self.ledger.structural_dependents.get(block, ())

    def winners(self, loser: BlockId) -> tuple[BlockId, ...]:
        return self.ledger.winners.get(loser, ())

    def evidence(self, block: BlockId) -> tuple[BlockId, ...]:
        return self.ledger.evidence.get(block, ())

    def statements(self, key: ContradictionKey) -> Iterable[tuple[str, BlockId]]:
        return self._statements.get(key, ())

    def removed(self, block: BlockId) -> bool:
        return block in self.ledger.removed

    def origin(self, block: BlockId) -> str | None:
        registration = self.ledger.registrations.get(block)
        return None if registration is None or registration.origin is None else str(registration.origin)


class EmptyIndex:
    """The index of the empty brain (a merge into an empty head)."""

    def evidence_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return ()

    def structural_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return ()

    def winners(self, loser: BlockId) -> tuple[BlockId, ...]:
        return ()

    def evidence(self, block: BlockId) -> tuple[BlockId, ...]:
        return ()

    def statements(self, key: ContradictionKey) -> Iterable[tuple[str, BlockId]]:
        return ()

    def removed(self, block: BlockId) -> bool:
        return False

    def origin(self, block: BlockId) -> str | None:
        return None
