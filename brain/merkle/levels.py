"""Every level of an `rfc6962-sorted/1` tree, kept so that a few inserted or removed leaves re-hash only part of it.

A long-lived writer (a server committing proposals) rewrites the same 10^5-member module many times, each
time adding a handful of ids. Recomputing the root hashes every leaf and every node again; instead the
levels of the previous version are kept and the new tree copies what it shares with them.

What is shared: the leaves between two edits are the old leaves shifted by `s` places (the edits before
them). A node one level up is then an old node too when both of its children lie in one such run and `s` is
even (the pairs line up): it is the old node `s/2` places back, so the run continues a level up with shift
`s/2`. Nodes outside every aligned run are hashed; a carried odd last node is copied. The result is the very
tree `tree.root_of_nodes` folds (pinned by tests against it), at about a third of its hashes for a few edits.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence

from brain.merkle.tree import NODE_PREFIX, leaf_hashes_of_sorted_hex

Levels = list[list[bytes]]
"""levels[0] are the leaf hashes, levels[-1] holds the root alone (an empty tree: one empty level)."""

_sha256 = hashlib.sha256


def levels_of_sorted_hex(hexes: Sequence[str]) -> Levels:
    """All levels of the tree over hex digests already in leaf order (ascending, distinct)."""
    nodes = leaf_hashes_of_sorted_hex(hexes)
    levels = [nodes]
    while len(nodes) > 1:
        nodes = _parents(nodes, 0, (len(nodes) + 1) // 2)
        levels.append(nodes)
    return levels


def top(levels: Levels) -> bytes | None:
    """The root hash, or None for the empty tree."""
    return levels[-1][0] if levels[-1] else None


def updated_levels(
    old: Levels, old_hexes: Sequence[str], new_hexes: Sequence[str], added: Sequence[str], removed: Sequence[str]
) -> Levels:
    """The levels over `new_hexes`, which are `old_hexes` (the leaves of `old`) without `removed` and with
    `added` (both given as hex digests; `added` not in `old_hexes`, `removed` all in it)."""
    adds = sorted(bisect.bisect_left(new_hexes, h) for h in added)
    rems = sorted(bisect.bisect_left(old_hexes, h) for h in removed)
    runs = _runs(adds, rems, len(new_hexes), len(old_hexes))
    old_leaves = old[0]
    leaves: list[bytes] = []
    at = 0
    for start, end, shift in runs:
        leaves += leaf_hashes_of_sorted_hex(new_hexes[at:start])
        leaves += old_leaves[start - shift : end - shift]
        at = end
    leaves += leaf_hashes_of_sorted_hex(new_hexes[at:])
    levels = [leaves]
    nodes, level = leaves, 0
    while len(nodes) > 1:
        count = (len(nodes) + 1) // 2
        old_parents = old[level + 1] if level + 1 < len(old) else []
        parents: list[bytes] = []
        lifted: list[tuple[int, int, int]] = []
        at = 0
        for start, end, shift in runs:
            first, stop = (start + 1) // 2, end // 2  # parents with both children inside the run
            if shift % 2 or first >= stop or not old_parents:
                continue
            parents += _parents(nodes, at, first)
            parents += old_parents[first - shift // 2 : stop - shift // 2]
            lifted.append((first, stop, shift // 2))
            at = stop
        parents += _parents(nodes, at, count)
        levels.append(parents)
        nodes, runs, level = parents, lifted, level + 1
    return levels


def _parents(nodes: list[bytes], first: int, stop: int) -> list[bytes]:
    """The parents `first`..`stop-1` of one level (the last one carried up alone when the level is odd)."""
    if first >= stop:
        return []
    prefix, n = NODE_PREFIX, len(nodes)
    pairs = iter(nodes[2 * first : 2 * stop])
    parents = [_sha256(prefix + left + right).digest() for left, right in zip(pairs, pairs, strict=False)]
    if 2 * stop > n:  # the odd last node
        parents.append(nodes[n - 1])
    return parents


def _runs(adds: list[int], rems: list[int], new_count: int, old_count: int) -> list[tuple[int, int, int]]:
    """Maximal (start, end, shift) with new[i] == old[i - shift] for start <= i < end, from the positions of
    the added leaves in the new list and of the removed ones in the old."""
    runs = []
    i = j = a = r = 0
    while i < new_count and j < old_count:
        if a < len(adds) and adds[a] == i:
            i, a = i + 1, a + 1
            continue
        if r < len(rems) and rems[r] == j:
            j, r = j + 1, r + 1
            continue
        length = min((adds[a] if a < len(adds) else new_count) - i, (rems[r] if r < len(rems) else old_count) - j)
        runs.append((i, i + length, i - j))
        i, j = i + length, j + length
    return runs
