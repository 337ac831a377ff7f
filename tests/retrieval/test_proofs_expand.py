"""Cached Merkle levels give the protocol's proofs; spreading activation follows its documented rules."""

from __future__ import annotations

import hashlib

from brain.identity import BlockId, MerkleRoot
from brain.merkle import inclusion_proof, merkle_root
from retrieval.expand import DECAY, FAN_OUT, MAX_DEPTH, Neighbour, spread, weight
from retrieval.proofs import MerkleLevels


def _ids(n: int) -> list[BlockId]:
    return sorted((BlockId(hashlib.sha256(str(i).encode()).hexdigest()) for i in range(n)), key=lambda b: b.hex)


def test_levels_prove_exactly_what_brain_merkle_proves_for_every_leaf_of_many_sizes() -> None:
    for n in [*range(1, 34), 63, 64, 65, 100]:
        ids = _ids(n)
        levels = MerkleLevels.of_sorted_hex([b.hex for b in ids])
        root = merkle_root(ids)
        assert levels.root == root.raw
        for block_id in ids:
            proof = levels.prove(block_id)
            assert proof == inclusion_proof(ids, block_id)
            assert proof is not None and proof.verify(root)


def test_a_non_member_has_no_proof_and_a_proof_fails_against_another_root() -> None:
    ids = _ids(10)
    levels = MerkleLevels.of_sorted_hex([b.hex for b in ids])
    assert levels.prove(BlockId("0" * 64)) is None
    proof = levels.prove(ids[3])
    assert proof is not None
    assert not proof.verify(MerkleRoot(hashlib.sha256(b"other").hexdigest()))


def _graph(edges: dict[str, list[tuple[str, str]]]):
    def neighbours(block: str):
        return [Neighbour(target, kind) for kind, target in edges.get(block, [])]

    return neighbours


def test_activation_decays_per_hop_and_remembers_the_edge_and_parent() -> None:
    graph = _graph({"hit": [("relation:generalizes", "a")], "a": [("uses", "b")], "b": [("uses", "c")]})
    reached = {e.block: e for e in spread({"hit": 1.0}, graph)}
    assert reached["a"].edge == "relation:generalizes" and reached["a"].parent == "hit"
    assert reached["a"].activation == weight("relation:generalizes") * DECAY
    assert reached["b"].parent == "a" and reached["b"].depth == 2
    assert reached["b"].activation < reached["a"].activation
    assert "c" not in reached and MAX_DEPTH == 2  # bounded depth


def test_fan_out_is_capped_and_strongest_edges_go_first() -> None:
    many = [("shared-evidence", f"s{i}") for i in range(20)] + [("relation:part-of", "r")]
    reached = [e.block for e in spread({"hit": 1.0}, _graph({"hit": many}))]
    assert len(reached) == FAN_OUT
    assert reached[0] == "r"


def test_seeds_are_never_added_and_keep_their_own_rank() -> None:
    graph = _graph({"a": [("uses", "b")], "b": [("used-by", "a")]})
    assert [e.block for e in spread({"a": 1.0, "b": 0.5}, graph)] == []
