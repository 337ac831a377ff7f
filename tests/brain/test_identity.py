"""Identity values (§0), timestamps (§1.6) and the actor-id grammar (§3.6, the spec's tables verbatim)."""

from __future__ import annotations

import hashlib
import pickle

import pytest

from brain.errors import InvalidInputError
from brain.identity import (
    BlockId,
    MerkleRoot,
    OciDigest,
    actor_id_problem,
    is_digest_string,
    parse_timestamp,
    utc_timestamp,
    validate_actor_id,
)

HEX = "4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea"


def test_digest_round_trip_and_accessors() -> None:
    block_id = BlockId.parse("sha256:" + HEX)
    assert str(block_id) == "sha256:" + HEX and block_id.hex == HEX and block_id.short == HEX[:12]
    assert block_id.raw == bytes.fromhex(HEX) and BlockId.from_raw(block_id.raw) == block_id
    assert BlockId.of(b"abc") == BlockId(hashlib.sha256(b"abc").hexdigest())
    assert pickle.loads(pickle.dumps(block_id)) == block_id
    assert BlockId.parse(block_id) is block_id


@pytest.mark.parametrize(
    "text",
    [
        "sha256:" + HEX.upper(),
        HEX,
        "sha512:" + HEX,
        "sha256:" + HEX[:-1],
        "sha256:" + HEX + "0",
        " sha256:" + HEX,
        "sha256:" + HEX + "\n",
    ],
)
def test_malformed_digests_are_refused(text: str) -> None:
    assert not is_digest_string(text)
    for kind in (BlockId, MerkleRoot, OciDigest):
        with pytest.raises(InvalidInputError):
            kind.parse(text)


def test_identity_levels_never_mix() -> None:
    block_id, root, oci = BlockId(HEX), MerkleRoot(HEX), OciDigest(HEX)
    assert block_id != root and root != oci and len({block_id, root, oci}) == 3
    with pytest.raises(InvalidInputError, match="not interchangeable"):
        BlockId.parse(root)
    with pytest.raises(InvalidInputError):
        BlockId.from_raw(b"\x00" * 31)
    with pytest.raises(AttributeError):
        block_id.hex = "0" * 64  # type: ignore[misc]
    assert sorted([BlockId("f" * 64), BlockId("0" * 64)])[0] == BlockId("0" * 64)


@pytest.mark.parametrize(
    ("epoch", "expected"),
    [(0, "1970-01-01T00:00:00Z"), (1767225600, "2026-01-01T00:00:00Z"), (1764509531, "2025-11-30T13:32:11Z")],
)
def test_utc_timestamp(epoch: int, expected: str) -> None:
    assert utc_timestamp(epoch) == expected
    assert parse_timestamp(expected).timestamp() == epoch


def test_source_date_epoch_pins_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert utc_timestamp() == "2026-01-01T00:00:00Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "soon")
    with pytest.raises(InvalidInputError, match="SOURCE_DATE_EPOCH"):
        utc_timestamp()


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-30T13:32:11+00:00",
        "2026-11-30T13:32:11.000Z",
        "2026-11-30T13:32:11z",
        "2026-11-30 13:32:11Z",
        "2026-13-30T13:32:11Z",
        "2026-11-30T25:32:11Z",
        "２０２６-11-30T13:32:11Z",
    ],
)
def test_parse_timestamp_refusals(text: str) -> None:
    with pytest.raises(InvalidInputError):
        parse_timestamp(text)


ACCEPTED = [
    "a@b.org", "a@b.co", "a+tag@c.org", "a%b@c.org", "a_b@c.org", "a@1.2", "a@b.o",
    "acme/extractor", "github.com/alex", "openai/gpt-5.6-sol", "a.b/c_d", "a/b..c",
    "a" * 64 + "@b.org", "a" * 128 + "/" + "b" * 128, "a@" + ".".join(["b" * 63] * 3) + "." + "c" * 63,
]  # fmt: skip
REFUSED = [
    "Alex@example.org", "alex@localhost", "alex@", "@example.org",
    "a/b/c", "a@b.org/x", "a..b@c.org", ".a@c.org", "a@-b.org", "a@b_c.org", "-a/b", "a_/b", "a/.b", "/b", "a/",
    "a" * 65 + "@b.org", "a" * 129 + "/b", "a@" + "b" * 64 + ".org", "café@b.org", "a b@c.org", "a\t@b.org", "a\x00/b",
    "alex", "a", "",
]  # fmt: skip


@pytest.mark.parametrize("actor_id", ACCEPTED)
def test_accepted_actor_ids(actor_id: str) -> None:
    assert actor_id_problem(actor_id) is None
    assert validate_actor_id(actor_id) == actor_id


@pytest.mark.parametrize("actor_id", REFUSED)
def test_refused_actor_ids(actor_id: str) -> None:
    assert actor_id_problem(actor_id)
    with pytest.raises(InvalidInputError, match="invalid actor id"):
        validate_actor_id(actor_id)


def test_255_char_domain_is_the_limit() -> None:
    domain = ".".join(["b" * 63] * 3) + "." + "c" * 63
    assert len(domain) == 255 and actor_id_problem("a@" + domain) is None
    assert actor_id_problem("a@" + domain + "c") is not None
