"""The one re-hash-then-decode rule (`brain.identity.rehash`): nothing is decoded before its bytes hash to their
name."""

from __future__ import annotations

import hashlib

import pytest

from brain.errors import IntegrityError
from brain.identity import OciDigest
from brain.identity.rehash import DigestMismatch, decode_rehashed, rehashed

DATA = b'{"a":1}'
HEX = hashlib.sha256(DATA).hexdigest()


@pytest.mark.parametrize("name", [HEX, "sha256:" + HEX, OciDigest(HEX)])
def test_bytes_that_hash_to_their_name_are_decoded(name: object) -> None:
    assert rehashed(DATA, name) is DATA  # type: ignore[arg-type]
    assert decode_rehashed(DATA, name, bytes.decode) == '{"a":1}'  # type: ignore[arg-type]


def test_other_bytes_are_refused_before_decoding() -> None:
    decoded: list[bytes] = []
    with pytest.raises(DigestMismatch) as caught:
        decode_rehashed(b'{"a":2}', HEX, decoded.append)
    assert decoded == []
    assert isinstance(caught.value, IntegrityError)
    assert caught.value.expected_hex == HEX
    assert caught.value.actual == "sha256:" + hashlib.sha256(b'{"a":2}').hexdigest()
