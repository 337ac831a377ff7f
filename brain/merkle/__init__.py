"""The Merkle layout `rfc6962-sorted/1` (§4): roots over sets of block ids and inclusion proofs."""

from brain.merkle.proof import InclusionProof, inclusion_proof, inclusion_proof_of_sorted_hex
from brain.merkle.root import merkle_root
from brain.merkle.tree import (
    EMPTY_ROOT,
    leaf_hash,
    merkle_root_of_sorted_hex,
    merkle_root_of_sorted_raw,
    node_hash,
)

__all__ = [
    "EMPTY_ROOT",
    "InclusionProof",
    "inclusion_proof",
    "inclusion_proof_of_sorted_hex",
    "leaf_hash",
    "merkle_root",
    "merkle_root_of_sorted_hex",
    "merkle_root_of_sorted_raw",
    "node_hash",
]
