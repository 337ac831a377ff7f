"""The lineage log as the lifecycle use cases' `Lineage` (`brain.lifecycle.usecases`): plans read their edges
from `boltzmann/cache/lineage.log` (rebuilt once when stale) and each commit is appended to it."""

from __future__ import annotations

from collections.abc import Iterable

from brain.blocks import Block
from brain.brain import Brain
from brain.identity import OciDigest
from ingest.lineage_graph import LineageGraph, graph_of, log_commit


class LogLineage:
    """`brain.lifecycle.usecases.Lineage` over the lineage log."""

    def graph(self, brain: Brain, snapshot: OciDigest, *, persist: bool = True) -> LineageGraph:
        return graph_of(brain, snapshot, persist=persist)

    def committed(self, brain: Brain, parent: OciDigest, snapshot: OciDigest, added: Iterable[Block]) -> None:
        log_commit(brain, parent, snapshot, added)


LOG_LINEAGE = LogLineage()

__all__ = ["LOG_LINEAGE", "LogLineage"]
