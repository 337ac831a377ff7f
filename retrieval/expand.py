"""Associative expansion: spreading activation from the top hits over the brain's typed edges (pure logic).

Each edge kind has a weight (how strongly it suggests relevance); activation is multiplied by the weight
and by `DECAY` per hop, spreads at most `MAX_DEPTH` hops from `MAX_SEEDS` seeds, and each node passes it
to at most `FAN_OUT` neighbours (the strongest kinds first, then by id, so the result is deterministic).
A block keeps the highest activation it receives and remembers the edge and block it came by.

Edge kinds (the inverse of a stored edge is followed too):
`relation:<predicate>` / `relation-from:<predicate>` (semantic relations), `uses` / `used-by`
(`steps[].uses`), `evidence` (a derived block to its source) / `derived` (a source to what was drawn from
it), `shared-evidence` (two blocks drawn from the same source).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

DECAY = 0.5
MAX_DEPTH = 2
MAX_SEEDS = 5
FAN_OUT = 6
MIN_ACTIVATION = 0.02
WEIGHTS = {
    "relation": 0.9,
    "relation-from": 0.8,
    "uses": 0.9,
    "used-by": 0.8,
    "evidence": 0.7,
    "derived": 0.6,
    "shared-evidence": 0.5,
}


@dataclass(frozen=True)
class Neighbour:
    """A block one edge away, and the kind of that edge as seen from the block we stand on."""

    block: str
    edge: str


@dataclass(frozen=True)
class Expansion:
    """A block reached by spreading activation."""

    block: str
    parent: str
    edge: str
    activation: float
    depth: int


def weight(edge: str) -> float:
    """The weight of an edge kind (`relation:generalizes` weighs as `relation`)."""
    return WEIGHTS.get(edge.split(":", 1)[0], 0.3)


def spread(
    seeds: Mapping[str, float], neighbours: Callable[[str], Iterable[Neighbour]]
) -> list[Expansion]:
    """Blocks reached from the strongest `MAX_SEEDS` seeds, by descending activation (seeds excluded)."""
    chosen = sorted(seeds.items(), key=lambda item: (-item[1], item[0]))[:MAX_SEEDS]
    best: dict[str, Expansion] = {}
    frontier = [(block, activation) for block, activation in chosen]
    visited = {block for block, _ in frontier}
    for depth in range(1, MAX_DEPTH + 1):
        following = []
        for block, activation in frontier:
            options = sorted(set(neighbours(block)), key=lambda n: (-weight(n.edge), n.edge, n.block))
            taken = 0
            for option in options:
                if option.block in seeds or option.block == block:
                    continue
                if taken >= FAN_OUT:
                    break
                taken += 1
                value = activation * weight(option.edge) * DECAY
                if value < MIN_ACTIVATION:
                    continue
                current = best.get(option.block)
                if current is None or value > current.activation:
                    best[option.block] = Expansion(option.block, block, option.edge, value, depth)
                if option.block not in visited:
                    visited.add(option.block)
                    following.append((option.block, value))
        frontier = following
    return sorted(best.values(), key=lambda e: (-e.activation, e.block))
