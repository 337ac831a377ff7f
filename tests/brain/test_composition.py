"""Composition documents (§5.1) and module references (§5.2)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from brain.blocks import MemoryType
from brain.composition import Composition, CompositionDecodeError, ModuleRef, member_changes_of_documents
from brain.errors import IntegrityError, NotFoundError
from brain.identity import BlockId, MerkleRoot, OciDigest, canonicalize
from brain.merkle import EMPTY_ROOT

A = BlockId.parse("sha256:d85afe5c73c486e72f945e53bb0c1e6690c9e3afc935e3ff38a0ec1790a335bc")
B = BlockId.parse("sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea")
C = BlockId.parse("sha256:97713c45ff49b143ab04d8218b72c9d3443c4ca651831a57de596e35dc1ff841")
SPEC_BYTES = (
    b'{"block_ids":["sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea",'
    b'"sha256:97713c45ff49b143ab04d8218b72c9d3443c4ca651831a57de596e35dc1ff841",'
    b'"sha256:d85afe5c73c486e72f945e53bb0c1e6690c9e3afc935e3ff38a0ec1790a335bc"],'
    b'"boltzmann":1,"layout":"rfc6962-sorted/1","memory_type":"canonical"}'
)
SPEC_DIGEST = OciDigest.parse("sha256:15158afc748ba46e8700223a2be7c1e15a8b9b8abae91725eef325406eba870f")
SPEC_ROOT = MerkleRoot.parse("sha256:d3623701e36e62fe9f0f4466f0029db073562c921375d82f0c7f5a17379d6a2c")


def test_spec_composition_bytes_digest_and_root() -> None:
    composition = Composition.of("canonical", [A, C, B, A])
    assert composition.block_ids == (B, C, A)
    assert composition.to_bytes() == SPEC_BYTES
    assert composition.digest == SPEC_DIGEST
    assert composition.root == SPEC_ROOT
    assert Composition.decode(SPEC_BYTES, SPEC_DIGEST) == composition


@pytest.mark.parametrize("memory_type", list(MemoryType))
@pytest.mark.parametrize("ids", [[], [A], [A, B, C]])
def test_hand_built_bytes_equal_the_jcs_serializer(memory_type: MemoryType, ids: list[BlockId]) -> None:
    composition = Composition.of(memory_type, ids)
    assert composition.to_bytes() == canonicalize(
        composition.to_json() | {"boltzmann": 1, "layout": "rfc6962-sorted/1"}
    )
    assert Composition(memory_type=memory_type, block_ids=composition.block_ids) == composition


def test_empty_composition() -> None:
    empty = Composition.of(MemoryType.SEMANTIC, [])
    assert empty.to_bytes() == b'{"block_ids":[],"boltzmann":1,"layout":"rfc6962-sorted/1","memory_type":"semantic"}'
    assert empty.root == EMPTY_ROOT and len(empty) == 0


def test_construction_refuses_unsorted_or_duplicate_ids() -> None:
    with pytest.raises(ValidationError, match="strictly ascending"):
        Composition(memory_type="canonical", block_ids=(A, B))
    with pytest.raises(ValidationError, match="strictly ascending"):
        Composition(memory_type="canonical", block_ids=(B, B))
    with pytest.raises(ValidationError):
        Composition(memory_type="canonical", block_ids=(OciDigest(B.hex),))


def test_prove_and_module_ref() -> None:
    composition = Composition.of("canonical", [A, B, C])
    assert composition.prove(A).verify(SPEC_ROOT)
    with pytest.raises(NotFoundError):
        composition.prove(BlockId.of(b"x"))
    ref = composition.module_ref()
    assert ref.to_json() == {
        "block_count": 3,
        "composition": str(SPEC_DIGEST),
        "layout": "rfc6962-sorted/1",
        "memory_type": "canonical",
        "root": str(SPEC_ROOT),
    }


def _spec_with(old: bytes, new: bytes) -> bytes:
    assert old in SPEC_BYTES
    return SPEC_BYTES.replace(old, new, 1)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (SPEC_BYTES[:-1], "not strict JSON"),
        (_spec_with(b'"boltzmann":1', b'"boltzmann":1,"boltzmann":1'), "duplicate key"),
        (b"[]", "JSON object"),
        (_spec_with(b'"boltzmann":1', b'"boltzmann":2'), "boltzmann must be 1"),
        (_spec_with(b'"memory_type":"canonical"', b'"memory_type":"canon"'), "unknown memory_type"),
        (_spec_with(b"rfc6962-sorted/1", b"rfc6962/1"), "layout"),
        (_spec_with(b'"sha256:4c6d', b'"sha256:4C6D'), "malformed id"),
        (_spec_with(b'"sha256:4c6d', b'"sha512:4c6d'), "malformed id"),
        (_spec_with(b'"sha256:4c6d5c10', b'"sha256:4c6d5c1'), "malformed id"),
        (_spec_with(b'"block_ids":[', b'"block_ids":[1,'), "malformed id"),
        (
            _spec_with(
                b'"block_ids":["sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea",',
                b'"block_ids":[',
            ),
            None,
        ),
        (
            _spec_with(
                b'"sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea",',
                b'"sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea",' * 2,
            ),
            "strictly ascending",
        ),
        (
            _spec_with(
                b'"sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea",',
                b'"sha256:f' + b"0" * 63 + b'",',
            ),
            "strictly ascending",
        ),
        (_spec_with(b'"block_ids":', b'"zz":1,"block_ids":'), "unexpected: \\['zz'\\]"),
        (b'{"boltzmann":1,"layout":"rfc6962-sorted/1","memory_type":"canonical"}', "missing: \\['block_ids'\\]"),
        (SPEC_BYTES + b"\n", "canonical jcs/1 form"),
        (_spec_with(b'"boltzmann":1', b'"boltzmann": 1'), "canonical jcs/1 form"),
        (_spec_with(b"rfc6962-sorted/1", b"rfc6962-sorted\\/1"), "canonical jcs/1 form"),
    ],
)
def test_decode_refusals(data: bytes, message: str | None) -> None:
    if message is None:
        assert len(Composition.decode(data)) == 2
        return
    with pytest.raises(CompositionDecodeError, match=message):
        Composition.decode(data)


def test_decode_checks_the_hash_first() -> None:
    with pytest.raises(CompositionDecodeError, match="hashes to"):
        Composition.decode(SPEC_BYTES, OciDigest.of(b"other"))
    assert issubclass(CompositionDecodeError, IntegrityError)


def test_large_composition_round_trips() -> None:
    ids = [BlockId.of(str(i).encode()) for i in range(5000)]
    composition = Composition.of("provenance", ids)
    decoded = Composition.decode(composition.to_bytes(), composition.digest)
    assert decoded.block_ids == composition.block_ids and decoded.root == composition.root


def test_module_ref_rules() -> None:
    base = {"memory_type": "canonical", "root": str(SPEC_ROOT), "composition": str(SPEC_DIGEST), "block_count": 3}
    assert ModuleRef(**base).layout == "rfc6962-sorted/1"
    with pytest.raises(ValidationError, match="embedding_model"):
        ModuleRef(**base, index_digest=str(SPEC_DIGEST))
    assert ModuleRef(**base, embedding_model="acme/embed", index_digest=str(SPEC_DIGEST)).index_digest == SPEC_DIGEST
    with pytest.raises(ValidationError, match="tombstones"):
        ModuleRef(**base, tombstones=(A, B))
    assert ModuleRef(**base, tombstones=(B, A)).to_json()["tombstones"] == [str(B), str(A)]
    for bad in ({"layout": "other"}, {"block_count": -1}, {"root": str(SPEC_DIGEST).upper()}, {"extra": 1}):
        with pytest.raises(ValidationError):
            ModuleRef(**(base | bad))
    with pytest.raises(ValidationError):
        ModuleRef(
            **(base | {"root": MerkleRoot.parse(str(SPEC_ROOT)), "composition": MerkleRoot.parse(str(SPEC_ROOT))})
        )


def test_model_copy_recomputes_bytes_digest_and_root() -> None:
    composition = Composition.of("canonical", [A, B, C])
    assert composition.root == SPEC_ROOT and composition.digest == SPEC_DIGEST
    smaller = composition.model_copy(update={"block_ids": (B, C)})
    assert smaller.root == Composition.of("canonical", [B, C]).root != SPEC_ROOT
    assert smaller.digest == Composition.of("canonical", [B, C]).digest


@settings(max_examples=200, deadline=None)
@given(
    old=st.sets(st.integers(0, 3000), max_size=400),
    added=st.sets(st.integers(3001, 6000), max_size=60),
    drop=st.sets(st.integers(0, 3000), max_size=60),
)
def test_member_changes_of_documents_are_the_set_differences(old: set[int], added: set[int], drop: set[int]) -> None:
    def ids(numbers: set[int]) -> list[BlockId]:
        return [BlockId.parse("sha256:" + hashlib.sha256(n.to_bytes(4, "big")).hexdigest()) for n in numbers]

    before = Composition.of(MemoryType.SEMANTIC, ids(old))
    after = Composition.of(MemoryType.SEMANTIC, ids((old - drop) | added))
    plus, minus = member_changes_of_documents(MemoryType.SEMANTIC, before.to_bytes(), after.to_bytes(),
                                              (len(before), len(after)))
    assert plus == sorted(b.hex for b in set(after.block_ids) - set(before.block_ids))
    assert minus == sorted(b.hex for b in set(before.block_ids) - set(after.block_ids))


def test_member_changes_of_documents_refuse_what_is_not_a_composition() -> None:
    one = Composition.of(MemoryType.SEMANTIC, [BlockId.parse("sha256:" + "ab" * 32)]).to_bytes()
    other = Composition.of(MemoryType.EPISODIC, []).to_bytes()
    semantic = MemoryType.SEMANTIC
    with pytest.raises(CompositionDecodeError, match="semantic compositions"):
        member_changes_of_documents(semantic, one, other)
    with pytest.raises(CompositionDecodeError, match="list of block ids"):
        member_changes_of_documents(semantic, one, one.replace(b'"sha256:', b'"sha256', 1))
    with pytest.raises(CompositionDecodeError, match="malformed id"):
        member_changes_of_documents(semantic, one, one.replace(b"abab", b"ABAB", 1))
    with pytest.raises(CompositionDecodeError, match="references say 1 and 2"):
        member_changes_of_documents(semantic, one, one, (1, 2))


@pytest.mark.parametrize("count", [0, 1, 3, 4, 5, 9])
def test_chunks_are_the_document_bytes(count: int) -> None:
    """The pieces a writer streams into the store join into the very document bytes, the digest with them,
    for empty, single, exact-multiple and partial last pieces."""
    ids = [BlockId.of(str(i).encode()) for i in range(count)]
    composition = Composition.of("semantic", ids)
    pieces = list(composition.chunks(members=4))
    expected = canonicalize(composition.to_json() | {"boltzmann": 1, "layout": "rfc6962-sorted/1"})
    assert b"".join(pieces) == expected and len(pieces) == 2 + -(-count // 4)
    assert OciDigest.of(b"".join(pieces)) == Composition.of("semantic", ids).digest
