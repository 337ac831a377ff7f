"""Reading stored blocks (§1.5): every refusal, in the order the spec lists the checks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.blocks import (
    Block,
    BlockDecodeError,
    CanonicalBlock,
    EpisodicBlock,
    GenericBlock,
    SemanticBlock,
)
from brain.blocks.decode import _decode_in_order, _fast_v1
from brain.errors import IntegrityError, InvalidInputError
from brain.identity import BlockId, OciDigest

GOOD = (
    b'{"boltzmann":1,"memory_type":"canonical","payload":{"blob":"sha256:e038e5313b67a0a1481737ca2f90f40260c0a25b'
    b'37260d9dbce228cc6ba64a68","media_type":"application/pdf","size":62},"schema_version":1,"serialization":"jcs/1"}'
)
GOOD_ID = BlockId.parse("sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea")


def test_good_block_decodes_and_keeps_the_stored_bytes() -> None:
    block = Block.decode(GOOD, GOOD_ID)
    assert isinstance(block, CanonicalBlock) and block.size == 62
    assert block.canonical_bytes() == GOOD and block.block_id == GOOD_ID
    assert CanonicalBlock.decode(GOOD) == block


def test_expected_id_is_parsed_and_must_be_a_block_id() -> None:
    assert Block.decode(GOOD, str(GOOD_ID)).block_id == GOOD_ID  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="not interchangeable"):
        Block.decode(GOOD, OciDigest(GOOD_ID.hex))  # type: ignore[arg-type]


def test_decode_error_is_an_integrity_error() -> None:
    assert issubclass(BlockDecodeError, IntegrityError)


def test_typed_decode_refuses_another_block_type() -> None:
    with pytest.raises(BlockDecodeError, match="expected a SemanticBlock"):
        SemanticBlock.decode(GOOD)


def _mutate(old: bytes, new: bytes) -> bytes:
    assert old in GOOD
    return GOOD.replace(old, new, 1)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (GOOD + b"\n", "hashes to"),  # step 1 runs first, even for otherwise-refusable bytes
    ],
)
def test_hash_mismatch_is_checked_first(data: bytes, message: str) -> None:
    with pytest.raises(BlockDecodeError, match=message):
        Block.decode(data, GOOD_ID)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xef\xbb\xbf" + GOOD, "byte-order mark"),
        (b"\xff" + GOOD, "UTF-8"),
        (GOOD[:-1], "not strict JSON"),
        (_mutate(b'"size":62', b'"size":62,"size":62'), "duplicate key"),
        (_mutate(b'"size":62', b'"size":NaN'), "NaN"),
        (_mutate(b'"size":62', b'"size":62.0'), "float"),
        (_mutate(b'"size":62', b'"size":9007199254740992'), "2\\^53"),
        (_mutate(b'"application/pdf"', b'"\\ud800"'), "surrogate"),
        (b"[1,2]", "must be a JSON object"),
        (_mutate(b',"serialization":"jcs/1"', b""), "missing: \\['serialization'\\]"),
        (_mutate(b'"serialization":"jcs/1"', b'"serialization":"jcs/1","zz":1'), "unexpected: \\['zz'\\]"),
        (_mutate(b'"boltzmann":1', b'"boltzmann":2'), "boltzmann must be 1"),
        (_mutate(b'"boltzmann":1', b'"boltzmann":true'), "boltzmann must be 1"),
        (_mutate(b'"memory_type":"canonical"', b'"memory_type":"Canonical"'), "unknown memory_type"),
        (_mutate(b'"schema_version":1', b'"schema_version":"1"'), "schema_version '1' is not registered"),
        (_mutate(b'"schema_version":1', b'"schema_version":2'), "schema_version 2 is not registered"),
        (_mutate(b'"schema_version":1', b'"schema_version":true'), "not registered"),
        (_mutate(b'"jcs/1"', b'"jcs/2"'), "serialization must be 'jcs/1'"),
        (_mutate(b'"size":62', b'"size":"62"'), "payload.size"),
        (_mutate(b'"size":62', b'"size":-1'), "payload.size"),
        (_mutate(b'"size":62', b'"size":62,"zz":1'), "payload.zz"),
        (_mutate(b'"media_type":"application/pdf"', b'"media_type":""'), "payload.media_type"),
        (_mutate(b'"sha256:e038', b'"sha256:E038'), "payload.blob"),
        (_mutate(b',"size":62', b',"size":62,"normalized_view":null'), "canonical jcs/1 form"),
        (_mutate(b'"size":62', b'"size" : 62'), "canonical jcs/1 form"),
        (
            _mutate(b'"media_type":"application/pdf","size":62', b'"size":62,"media_type":"application/pdf"'),
            "canonical",
        ),
        (_mutate(b'"application/pdf"', b'"application\\/pdf"'), "canonical jcs/1 form"),
        (_mutate(b'"application/pdf"', b'"\\u0061pplication/pdf"'), "canonical jcs/1 form"),
        (GOOD + b"\n", "canonical jcs/1 form"),
        (b" " + GOOD, "canonical jcs/1 form"),
    ],
)
def test_refusals(data: bytes, message: str) -> None:
    with pytest.raises(BlockDecodeError, match=message):
        Block.decode(data)
    assert _fast_v1(data) is None  # the fast path never accepts what the ordered checks refuse


def _envelope(memory_type: str, payload: bytes, version: int = 1) -> bytes:
    return (
        b'{"boltzmann":1,"memory_type":"'
        + memory_type.encode()
        + b'","payload":'
        + payload
        + b',"schema_version":'
        + str(version).encode()
        + b',"serialization":"jcs/1"}'
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_envelope("semantic", b"[]"), "payload must be a JSON object"),
        (
            _envelope(
                "episodic", b'{"ended_at":"2026-01-01T00:00:00Z","occurred_at":"2026-01-02T00:00:00Z","summary":"s"}'
            ),
            "before",
        ),
        (
            _envelope(
                "provenance",
                b'{"record":{"actor":{"id":"a@b.org","kind":"human"},"at":"2026-01-01T00:00:00Z","block":"sha256:'
                + b"0" * 64
                + b'"}}',
            ),
            "record_type|tag",
        ),
        (_envelope("semantic", b'{"kind":"fact","label":"x","statement":"y"}', 2), None),
        (
            _envelope("semantic", b'{"kind":"fact","label":"x","statement":"y","subject":null}', 2),
            "canonical jcs/1 form",
        ),
        (_envelope("semantic", b'{"kind":"fact","label":"x"}', 2), "semantic v2 payload"),
        (_envelope("procedural", b'{"goal":"g","label":"l","steps":[]}'), "payload.steps"),
    ],
)
def test_payload_refusals_and_later_versions(data: bytes, message: str | None) -> None:
    if message is None:
        block = Block.decode(data)
        assert isinstance(block, GenericBlock) and block.schema_version == 2  # any registered version reads
        assert block.canonical_bytes() == data
    else:
        with pytest.raises(BlockDecodeError, match=message):
            Block.decode(data)


def test_episodic_empty_lists_round_trip() -> None:
    block = EpisodicBlock(summary="s", occurred_at="2026-01-01T00:00:00Z", tags=(), participants=())
    assert Block.decode(block.canonical_bytes()) == block


VARIED = [
    GOOD,
    EpisodicBlock(
        summary="s\u00e9\x1f", occurred_at="2026-01-01T00:00:00Z", ended_at="2026-01-01T00:00:01Z"
    ).canonical_bytes(),
    SemanticBlock(kind="fact", label="\U0001f600", statement="\uff5e", aliases=()).canonical_bytes(),
    _envelope("semantic", b'{"kind":"fact","label":"x","statement":"y"}', 2),
]
_PIECES = [
    b" ",
    b'"',
    b"\\",
    b"0",
    b"1",
    b"-",
    b".5",
    b"null",
    b",",
    b"}",
    b"]",
    b"e",
    b"\\u0065",
    b"\xc3\xa9",
    b"\xff",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(VARIED), st.data())
def test_fast_path_agrees_with_the_ordered_checks(original: bytes, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(original)))
    cut = data.draw(st.integers(0, 3))
    mutated = original[:at] + data.draw(st.sampled_from(_PIECES)) + original[at + cut :]
    fast = _fast_v1(mutated)
    try:
        ordered = _decode_in_order(mutated)
    except BlockDecodeError:
        ordered = None
    if ordered is None:
        assert fast is None
    elif ordered.schema_version == 1:
        assert fast == ordered  # every accepted v1 block takes the fast path, with the same result
