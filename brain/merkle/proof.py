"""Inclusion proofs (§4.1): generation over the sorted leaves and the RFC 9162 §2.1.3.2 verifier."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Annotated

from pydantic import Field, StringConstraints

from brain.blocks.fields import WireModel
from brain.errors import NotFoundError
from brain.identity import MAX_SAFE_INTEGER, BlockId, MerkleRoot
from brain.merkle.tree import (
    leaf_hash,
    leaf_hashes_of_sorted_hex,
    member_hexes,
    node_hash,
    root_of_nodes,
    sorted_distinct,
)

HexHash = Annotated[str, StringConstraints(strict=True, pattern=r"^[0-9a-f]{64}$")]


class InclusionProof(WireModel):
    """Proof that `block_id` is leaf `leaf_index` of a `tree_size`-leaf `rfc6962-sorted/1` tree."""

    block_id: BlockId
    leaf_index: Annotated[int, Field(strict=True, ge=0, le=MAX_SAFE_INTEGER)]
    tree_size: Annotated[int, Field(strict=True, ge=1, le=MAX_SAFE_INTEGER)]
    audit_path: tuple[HexHash, ...]

    def verify(self, root: MerkleRoot) -> bool:
        """True iff this proof leads from `block_id` to `root` (§4.1); any other root fails."""
        if self.leaf_index >= self.tree_size:
            return False
        fn, sn = self.leaf_index, self.tree_size - 1
        r = leaf_hash(self.block_id.raw)
        for sibling_hex in self.audit_path:
            if sn == 0:
                return False
            sibling = bytes.fromhex(sibling_hex)
            if fn & 1 or fn == sn:
                r = node_hash(sibling, r)
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
            else:
                r = node_hash(r, sibling)
            fn >>= 1
            sn >>= 1
        return sn == 0 and r == MerkleRoot.parse(root).raw


def inclusion_proof(block_ids: Iterable[BlockId], target: BlockId) -> InclusionProof:
    """The proof for `target` in the set `block_ids`; raises `NotFoundError` if it is not a member."""
    return inclusion_proof_of_sorted_hex(sorted_distinct(member_hexes(block_ids)), BlockId.parse(target))


def inclusion_proof_of_sorted_hex(hexes: Sequence[str], target: BlockId) -> InclusionProof:
    """The proof for `target` among hex digests already in leaf order (e.g. a composition's ids)."""
    index = bisect.bisect_left(hexes, target.hex)
    if index == len(hexes) or hexes[index] != target.hex:
        raise NotFoundError(f"{target} is not a member of the set ({len(hexes)} block ids)")
    path = _audit_path(leaf_hashes_of_sorted_hex(hexes), index)
    return InclusionProof(
        block_id=target, leaf_index=index, tree_size=len(hexes), audit_path=tuple(p.hex() for p in path)
    )


def _audit_path(leaves: list[bytes], index: int) -> list[bytes]:
    # PATH(m, D[0:n]) of RFC 9162 §2.1.3.1, iteratively: descend, collecting siblings top-down, then reverse.
    siblings: list[bytes] = []
    lo, hi = 0, len(leaves)
    while hi - lo > 1:
        k = _split(hi - lo)
        if index - lo < k:
            siblings.append(root_of_nodes(leaves[lo + k : hi]))
            hi = lo + k
        else:
            siblings.append(root_of_nodes(leaves[lo : lo + k]))
            lo += k
    siblings.reverse()
    return siblings


def _split(n: int) -> int:
    """The largest power of two strictly less than `n` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)
