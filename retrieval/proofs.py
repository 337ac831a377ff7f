"""Inclusion proofs for many members of one composition, and checking a hit against its snapshot.

`brain.merkle.inclusion_proof` rebuilds the tree for every proof (O(n)); a search proves a handful of
members of the same module per query, so the tree's levels are kept per composition (built once, O(n),
then O(log n) per proof). The tree is the same one (`rfc6962-sorted/1` is left-balanced: pairing left to
right and carrying an odd last node up gives the RFC 9162 split), and every proof handed out is checked
with `InclusionProof.verify` against the root named by the snapshot, never assumed.
"""

from __future__ import annotations

import bisect
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

import orjson

from brain.brain import Brain
from brain.composition import ModuleRef
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.merkle import InclusionProof
from brain.merkle.tree import NODE_PREFIX, leaf_hashes_of_sorted_hex

_sha256 = hashlib.sha256
_CACHED_TREES = 8


@dataclass(frozen=True)
class MerkleLevels:
    """Every level of a module's tree, leaves first, and the sorted leaf hexes."""

    hexes: list[str]
    levels: list[list[bytes]]

    @classmethod
    def of_sorted_hex(cls, hexes: list[str]) -> MerkleLevels:
        """The levels over hex ids already in leaf order."""
        level = leaf_hashes_of_sorted_hex(hexes)
        levels = [level]
        while len(level) > 1:
            pairs = iter(level)
            parents = [_sha256(NODE_PREFIX + a + b).digest() for a, b in zip(pairs, pairs, strict=False)]
            if len(level) % 2:
                parents.append(level[-1])
            levels.append(parents)
            level = parents
        return cls(hexes, levels)

    @property
    def root(self) -> bytes | None:
        """The raw root (None for an empty module)."""
        return self.levels[-1][0] if self.levels and self.levels[-1] else None

    def prove(self, block_id: BlockId) -> InclusionProof | None:
        """The proof of a member, or None when it is not one."""
        index = bisect.bisect_left(self.hexes, block_id.hex)
        if index == len(self.hexes) or self.hexes[index] != block_id.hex:
            return None
        path: list[str] = []
        position = index
        for level in self.levels[:-1]:
            sibling = position ^ 1
            if sibling < len(level):
                path.append(level[sibling].hex())
            position >>= 1
        return InclusionProof(block_id=block_id, leaf_index=index, tree_size=len(self.hexes), audit_path=tuple(path))


class Prover:
    """Proofs against the modules of a snapshot, with the last few compositions' trees kept in memory."""

    def __init__(self, brain: Brain) -> None:
        self.brain = brain
        self._trees: OrderedDict[OciDigest, MerkleLevels] = OrderedDict()
        self._lock = threading.Lock()  # shared by a server's worker threads

    def levels(self, ref: ModuleRef) -> MerkleLevels:
        """The tree of the composition `ref` names (read from the store, re-hashed, once)."""
        with self._lock:
            tree = self._trees.get(ref.composition)
            if tree is not None:
                self._trees.move_to_end(ref.composition)
                return tree
            data = self.brain.blobs.get(ref.composition)
            tree = MerkleLevels.of_sorted_hex([i[7:] for i in orjson.loads(data)["block_ids"]])
            self._trees[ref.composition] = tree
            while len(self._trees) > _CACHED_TREES:
                self._trees.popitem(last=False)
            return tree

    def prove(self, ref: ModuleRef, block_id: BlockId) -> InclusionProof | None:
        """A proof of `block_id` in `ref`'s composition, or None when it is not a member or unreadable."""
        try:
            return self.levels(ref).prove(block_id)
        except (BrainError, orjson.JSONDecodeError, KeyError, TypeError):
            return None
