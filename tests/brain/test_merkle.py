"""`rfc6962-sorted/1` (§4): the worked example, proofs, an independent recursive MTH, and properties."""

from __future__ import annotations

import hashlib
import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.errors import InvalidInputError, NotFoundError
from brain.identity import BlockId, MerkleRoot, OciDigest
from brain.merkle import (
    EMPTY_ROOT,
    InclusionProof,
    inclusion_proof,
    merkle_root,
    merkle_root_of_sorted_hex,
    merkle_root_of_sorted_raw,
)
from brain.merkle.parallel import FORK_THRESHOLD, parallel_root_of_hex, worth_forking

A = BlockId.parse("sha256:d85afe5c73c486e72f945e53bb0c1e6690c9e3afc935e3ff38a0ec1790a335bc")
B = BlockId.parse("sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea")
C = BlockId.parse("sha256:97713c45ff49b143ab04d8218b72c9d3443c4ca651831a57de596e35dc1ff841")
L0 = "cf64ffd5d31c9c1fe9dedb3556f9d723ca55d8f9047ac019a99836634a911c88"
L1 = "4db6a848cb0ba65ae2803b40c591877cd70c2eb31f268113fafd38d4414dee1e"
L2 = "633b52d4c45f73aa909c08565e26769557849ad66bce405647e67a5eaf1cb05d"
N = "f2faf00cd5a7c65af5756e29e2ef4925a0b39dad01b45a2ed60e9cf157b2f361"
ROOT = MerkleRoot.parse("sha256:d3623701e36e62fe9f0f4466f0029db073562c921375d82f0c7f5a17379d6a2c")


def _ids(count: int, seed: int = 0) -> list[BlockId]:
    return [BlockId.of(f"{seed}:{i}".encode()) for i in range(count)]


def _mth(leaves: list[bytes]) -> bytes:
    """RFC 9162 §2.1.1 written recursively, independent of the implementation under test."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + _mth(leaves[:k]) + _mth(leaves[k:])).digest()


def test_worked_example_root_in_any_order() -> None:
    assert merkle_root([A, B, C]) == ROOT
    assert merkle_root([C, A, B, A]) == ROOT
    assert merkle_root([str(A), str(B), str(C)]) == ROOT  # type: ignore[list-item]


def test_worked_example_single_leaf_and_empty() -> None:
    assert merkle_root([A]) == MerkleRoot(L2)
    assert (
        merkle_root([]) == EMPTY_ROOT == MerkleRoot("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    )
    assert merkle_root_of_sorted_raw([]) == EMPTY_ROOT


@pytest.mark.parametrize(("target", "index", "path"), [(B, 0, [L1, L2]), (C, 1, [L0, L2]), (A, 2, [N])])
def test_worked_example_proofs(target: BlockId, index: int, path: list[str]) -> None:
    proof = inclusion_proof([A, B, C], target)
    assert proof == InclusionProof(block_id=target, leaf_index=index, tree_size=3, audit_path=tuple(path))
    assert proof.verify(ROOT)
    assert not proof.verify(MerkleRoot(L2))


def test_proof_json_round_trip() -> None:
    proof = inclusion_proof([A, B, C], A)
    assert proof.to_json() == {"block_id": str(A), "leaf_index": 2, "tree_size": 3, "audit_path": [N]}
    assert InclusionProof.model_validate_json(proof.model_dump_json()) == proof
    assert InclusionProof.model_validate(proof.to_json()).verify(ROOT)


def test_identity_levels_are_not_interchangeable() -> None:
    with pytest.raises(InvalidInputError):
        merkle_root([OciDigest(A.hex)])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        merkle_root(["sha256:" + "A" * 64])  # type: ignore[list-item]


def test_non_member_is_not_found() -> None:
    with pytest.raises(NotFoundError):
        inclusion_proof([A, B], C)
    with pytest.raises(NotFoundError):
        inclusion_proof([], C)


@pytest.mark.parametrize(
    "tamper",
    [
        {"leaf_index": 1},
        {"leaf_index": 3},  # index ≥ size
        {"tree_size": 4},
        {"tree_size": 2},
        {"audit_path": (N, N)},  # too long
        {"audit_path": ()},
        {"audit_path": (L0,)},
        {"block_id": B},
    ],
)
def test_tampered_proofs_fail(tamper: dict) -> None:
    proof = inclusion_proof([A, B, C], A).model_copy(update=tamper)
    assert not proof.verify(ROOT)


def test_proof_model_refuses_malformed_fields() -> None:
    with pytest.raises(ValueError):
        InclusionProof(block_id=A, leaf_index=-1, tree_size=3, audit_path=())
    with pytest.raises(ValueError):
        InclusionProof(block_id=A, leaf_index=0, tree_size=0, audit_path=())
    with pytest.raises(ValueError):
        InclusionProof(block_id=A, leaf_index=0, tree_size=1, audit_path=("sha256:" + N,))
    with pytest.raises(ValueError):
        InclusionProof(block_id=A, leaf_index="0", tree_size=1, audit_path=())


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 100, 255, 256, 257])
def test_roots_match_recursive_mth(size: int) -> None:
    ids = _ids(size)
    raw = sorted(i.raw for i in ids)
    assert merkle_root(ids).raw == _mth(raw)
    assert merkle_root_of_sorted_raw(raw).raw == _mth(raw)


def test_every_leaf_proves_at_every_size_up_to_300() -> None:
    # Every size 1..40 exhaustively, then a sample of larger sizes (keeps the test fast).
    pool = _ids(300, seed=1)
    sizes = list(range(1, 41)) + random.Random(7).sample(range(41, 301), 25) + [300]
    for size in sizes:
        members = pool[:size]
        root = merkle_root(members)
        other = merkle_root([*members, BlockId.of(b"outsider")])
        for target in members:
            proof = inclusion_proof(members, target)
            assert proof.tree_size == size
            assert proof.verify(root), (size, target)
            assert not proof.verify(other)


@pytest.mark.parametrize("size", [1, 2, 5, 16_384, 16_385, 40_000])
def test_parallel_split_equals_single_process(size: int) -> None:
    ids = _ids(size, seed=2)
    hexes = [i.hex for i in ids] + [ids[0].hex]  # a duplicate must collapse in the split too
    assert parallel_root_of_hex(hexes) == _mth(sorted(i.raw for i in ids))


def test_parallel_split_with_a_lopsided_set() -> None:
    ids = [i for i in _ids(3000, seed=3) if i.hex < "4"]  # everything lands on the child's side
    assert parallel_root_of_hex([i.hex for i in ids]) == merkle_root(ids).raw
    high = [i for i in _ids(3000, seed=3) if i.hex >= "8"]  # nothing on the child's side
    assert parallel_root_of_hex([i.hex for i in high]) == merkle_root(high).raw


digests = st.binary(min_size=32, max_size=32).map(lambda raw: BlockId(raw.hex()))


@settings(max_examples=60, deadline=None)
@given(st.lists(digests, max_size=40), st.randoms())
def test_root_is_a_function_of_the_set(ids: list[BlockId], rnd: random.Random) -> None:
    shuffled = ids + ids[: len(ids) // 2]
    rnd.shuffle(shuffled)
    assert merkle_root(shuffled) == merkle_root(ids) == merkle_root(set(ids))
    assert merkle_root(ids).raw == _mth(sorted({i.raw for i in ids}))


@settings(max_examples=40, deadline=None)
@given(st.lists(digests, min_size=1, max_size=60, unique=True), st.data())
def test_any_member_proves_and_fails_elsewhere(ids: list[BlockId], data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(ids))
    proof = inclusion_proof(ids, target)
    assert proof.verify(merkle_root(ids))
    outsider = data.draw(digests.filter(lambda d: d not in ids))
    assert not proof.verify(merkle_root([*ids, outsider]))


def test_forking_only_for_large_sets_in_a_single_threaded_process() -> None:
    assert not worth_forking(FORK_THRESHOLD - 1)
    release = threading.Event()
    helper = threading.Thread(target=release.wait)
    helper.start()
    try:
        assert not worth_forking(10 * FORK_THRESHOLD)  # another thread could hold a lock the child needs
    finally:
        release.set()
        helper.join()


@pytest.mark.parametrize("count", [4095, 4096, 4097, 8192, 8193, 12289])
def test_root_of_sorted_hex_folded_in_runs_is_the_whole_trees(count: int) -> None:
    """`merkle_root_of_sorted_hex` hashes runs of 4,096 leaves at a time: the same root as RFC 9162's MTH over
    all of them, on both sides of a run boundary and with a partial last run."""

    hexes = sorted(b.hex for b in _ids(count, seed=count))
    assert merkle_root_of_sorted_hex(hexes).raw == _mth([bytes.fromhex(h) for h in hexes])
