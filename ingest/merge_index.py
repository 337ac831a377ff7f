"""What a reconciliation (`brain merge`, `brain reconcile`, `sdk.Brain.merge`) asks about our side, answered from
the lineage log (`ingest.lineage_graph`) instead of decoding every provenance block, and the hook that keeps
the log current after it commits."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from brain.errors import BrainError
from brain.identity import BlockId, OciDigest

if TYPE_CHECKING:
    from brain.blocks import Block
    from brain.brain import Brain
    from brain.gate import ContradictionKey
    from brain.reconcile.index import OurIndex
    from ingest.lineage_graph import LineageGraph


class LineageIndex:
    """`brain.reconcile.index.OurIndex` over the lineage log (no decode of every provenance block)."""

    def __init__(self, brain: Brain, snapshot: OciDigest, persist: bool) -> None:
        self.brain, self.snapshot, self.persist = brain, snapshot, persist
        self._graph: LineageGraph | None = None

    @property
    def graph(self) -> LineageGraph:
        """Loaded on the first question: a merge that only adds sources never reads the lineage log."""
        if self._graph is None:
            from ingest.lineage_graph import graph_of

            self._graph = graph_of(self.brain, self.snapshot, persist=self.persist)
        return self._graph

    def evidence_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return self.graph.evidence_dependents(block)

    def structural_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return self.graph.structural_dependents(block)

    def winners(self, loser: BlockId) -> tuple[BlockId, ...]:
        return self.graph.winners(loser)

    def evidence(self, block: BlockId) -> tuple[BlockId, ...]:
        return self.graph.evidence(block)

    def statements(self, key: ContradictionKey) -> Iterable[tuple[str, BlockId]]:
        return [(s, BlockId(h)) for h, s in self.graph.lineage.statements.get(key, {}).items()]

    def origin(self, block: BlockId) -> str | None:
        return self.graph.origin(block)

    def removed(self, block: BlockId) -> bool:
        from brain.blocks.provenance import RemovalRecord
        from brain.ledger import record_of

        for record_hex in self.graph.lineage.records_about.get(block.hex, ()):
            try:
                record = record_of(self.brain.resolve(BlockId(record_hex)))
            except BrainError:
                continue
            if isinstance(record, RemovalRecord) and block in record.blocks:
                return True
        return False


def lineage_hook(brain: Brain) -> Callable[[OciDigest, OciDigest, list[Block]], None]:
    """What keeps the lineage log current after a reconciliation commits (called under the writer lock)."""
    def after(parent: OciDigest, snapshot: OciDigest, added: list[Block]) -> None:
        from ingest.lineage_graph import log_commit

        log_commit(brain, parent, snapshot, added)
    return after


def index_of(brain: Brain, *, persist: bool) -> Any:
    """The index factory the reconciliation asks when it has incoming blocks to judge."""
    def make(snapshot: OciDigest) -> OurIndex:
        return LineageIndex(brain, snapshot, persist)
    return make


__all__ = ["LineageIndex", "index_of", "lineage_hook"]
