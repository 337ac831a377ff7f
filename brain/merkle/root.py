"""The public entry point for roots over an arbitrary collection of block ids."""

from __future__ import annotations

from collections.abc import Iterable

from brain.identity import BlockId, MerkleRoot
from brain.merkle.parallel import parallel_root_of_hex, worth_forking
from brain.merkle.tree import member_hexes, merkle_root_of_sorted_hex, sorted_distinct


def merkle_root(block_ids: Iterable[BlockId]) -> MerkleRoot:
    """The `rfc6962-sorted/1` root of a set of block ids (any order; duplicates collapse; ∅ → SHA-256(""))."""
    hexes = member_hexes(block_ids)
    if worth_forking(len(hexes)):
        return MerkleRoot.from_raw(parallel_root_of_hex(hexes))
    return merkle_root_of_sorted_hex(sorted_distinct(hexes))
