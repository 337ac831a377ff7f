"""`rfc6962-sorted/1` roots (§4): leaves are the sorted, distinct raw block-id digests.

Roots are computed level by level, pairing left to right and carrying an odd last node up unchanged;
for a left-balanced tree this is the same tree as the RFC 9162 split (k = largest power of two < n).
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Iterable, Sequence

from brain.identity import BlockId, MerkleRoot

_sha256 = hashlib.sha256
LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
EMPTY_ROOT = MerkleRoot.of(b"")


def leaf_hash(raw: bytes) -> bytes:
    """SHA-256(0x00 ‖ raw digest)."""
    return _sha256(LEAF_PREFIX + raw).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 ‖ left ‖ right)."""
    return _sha256(NODE_PREFIX + left + right).digest()


def member_hexes(block_ids: Iterable[BlockId]) -> list[str]:
    """The hex digests of `block_ids` (parsing strings, refusing other digest kinds), in input order."""
    return [b.hex if type(b) is BlockId else BlockId.parse(b).hex for b in block_ids]


def sorted_distinct(hexes: list[str]) -> list[str]:
    """`hexes` in leaf order: sorted in place (ascending hex = ascending raw bytes), duplicates collapsed."""
    hexes.sort()
    # A cheap adjacent-equality scan; only a list that really has duplicates pays for rebuilding.
    if any(map(operator.eq, hexes, hexes[1:])):
        hexes = [h for i, h in enumerate(hexes) if i == 0 or h != hexes[i - 1]]
    return hexes


def leaf_hashes_of_sorted_hex(hexes: Sequence[str]) -> list[bytes]:
    """Leaf hashes of hex digests already in leaf order."""
    if not hexes:
        return []
    # One fromhex call builds every `0x00 ‖ raw` leaf input back to back.
    packed = bytes.fromhex("00" + "00".join(hexes))
    return [_sha256(packed[i : i + 33]).digest() for i in range(0, len(packed), 33)]


def root_of_nodes(nodes: list[bytes]) -> bytes:
    """Fold one level of subtree hashes into the root; `nodes` must be non-empty."""
    prefix = NODE_PREFIX
    while len(nodes) > 1:
        pairs = iter(nodes)
        parents = [_sha256(prefix + left + right).digest() for left, right in zip(pairs, pairs, strict=False)]
        if len(nodes) % 2:
            parents.append(nodes[-1])
        nodes = parents
    return nodes[0]


def subtree_roots(leaves: Sequence[bytes], width: int) -> list[bytes]:
    """Roots of consecutive `width`-leaf subtrees (a power of two); the last one may be partial."""
    return [root_of_nodes(list(leaves[i : i + width])) for i in range(0, len(leaves), width)]


def merkle_root_of_sorted_raw(raw: Sequence[bytes]) -> MerkleRoot:
    """The root over raw 32-byte digests already ascending and distinct (no check: the fast path)."""
    if not raw:
        return EMPTY_ROOT
    return MerkleRoot.from_raw(root_of_nodes([leaf_hash(r) for r in raw]))


_CHUNK = 4096  # leaves hashed at a time by `merkle_root_of_sorted_hex` (a power of two)


def merkle_root_of_sorted_hex(hexes: Sequence[str]) -> MerkleRoot:
    """The root over hex digests already ascending and distinct (e.g. a decoded composition).

    Folded in runs of `_CHUNK` leaves: a run is a whole subtree (its width a power of two, the last one's
    odd nodes carried up as the whole tree would carry them), so the root is the same as hashing every leaf
    first, without holding ~200 bytes per member at once (a 10^6-member module: ~200 MB)."""
    if not hexes:
        return EMPTY_ROOT
    if len(hexes) <= _CHUNK:
        return MerkleRoot.from_raw(root_of_nodes(leaf_hashes_of_sorted_hex(hexes)))
    runs = [root_of_nodes(leaf_hashes_of_sorted_hex(hexes[i : i + _CHUNK])) for i in range(0, len(hexes), _CHUNK)]
    return MerkleRoot.from_raw(root_of_nodes(runs))
