"""Re-hash, then decode: the one rule for bytes named by their digest (§1.5, §5.1). Nothing is decoded, and so
nothing of it trusted, before its SHA-256 matches the name it was stored or sent under.

Used by the store (`BlobStore.get`), verify (blocks, compositions, snapshots), the authenticity chain walk
(`brain.store.chain`) and unpacking (`oci.unpack`, `oci.members`); each turns `DigestMismatch` into its own
outcome (a problem, a refused artifact, a skipped record).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from brain.errors import IntegrityError
from brain.identity.digest import Digest

T = TypeVar("T")


class DigestMismatch(IntegrityError):
    """Bytes that do not hash to the digest that names them (nothing was decoded)."""

    def __init__(self, expected_hex: str, actual_hex: str) -> None:
        self.expected_hex = expected_hex
        self.actual_hex = actual_hex
        super().__init__(f"bytes hash to sha256:{actual_hex}, not sha256:{expected_hex}")

    @property
    def actual(self) -> str:
        """What the bytes hash to, as `sha256:<hex>`."""
        return "sha256:" + self.actual_hex


def rehashed(data: bytes, digest: str | Digest) -> bytes:
    """`data`, once it hashes to `digest` (`sha256:<hex>`, bare hex, or a digest value); else `DigestMismatch`."""
    expected = digest.hex if isinstance(digest, Digest) else digest.removeprefix("sha256:")
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise DigestMismatch(expected, actual)
    return data


def decode_rehashed(data: bytes, digest: str | Digest, decode: Callable[[bytes], T]) -> T:
    """`decode(data)` once `data` hashes to `digest`; `DigestMismatch` (before any decoding) otherwise."""
    return decode(rehashed(data, digest))


__all__ = ["DigestMismatch", "decode_rehashed", "rehashed"]
