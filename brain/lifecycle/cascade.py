"""Transitive reach over dependency edges: the shared walk behind `Ledger.closure` (evidence edges) and the
drop cascade (§7.4, evidence and structural edges)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from brain.identity import BlockId


def reach(sources: BlockId | Iterable[BlockId], following: Callable[[BlockId], Iterable[BlockId]]) -> set[BlockId]:
    """Every block reachable from `sources` through `following`, transitively; the sources themselves excluded."""
    start = {sources} if isinstance(sources, BlockId) else set(sources)
    seen: set[BlockId] = set()
    frontier = list(start)
    while frontier:
        current = frontier.pop()
        for nxt in following(current):
            if nxt not in seen and nxt not in start:
                seen.add(nxt)
                frontier.append(nxt)
    return seen
