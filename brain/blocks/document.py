"""What every stored JCS document shares: hash-checked strict reading, canonical bytes and a cached digest."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import PrivateAttr

from brain.blocks.fields import WireModel
from brain.errors import CanonicalFormError, IntegrityError
from brain.identity import Digest, OciDigest, canonicalize, parse_strict

D = TypeVar("D", bound=Digest)


def read_json_object(
    data: bytes, expected: D | None, kind: type[D], what: str, error: type[IntegrityError]
) -> tuple[D, dict[str, Any]]:
    """Check the hash (when `expected` is given), then strict-parse a top-level JSON object (§1.5 steps 1-2)."""
    actual = kind.of(data)
    if expected is not None and actual != kind.parse(expected):
        raise error(f"{what} content hashes to {actual}, not to the requested {expected}")
    try:
        document = parse_strict(data)
    except CanonicalFormError as e:
        raise error(f"{what} is not strict JSON: {e.message}") from None
    if not isinstance(document, dict):
        raise error(f"a {what} must be a JSON object")
    return actual, document


def check_boltzmann(document: dict[str, Any], what: str, error: type[IntegrityError]) -> None:
    """Refuse a document whose `boltzmann` is missing or not the integer 1 (`true` is not 1)."""
    value = document.get("boltzmann")
    if type(value) is not int or value != 1:
        raise error(f"{what} boltzmann must be 1, got {value!r}")


class JcsDocument(WireModel):
    """A wire document stored as a blob of its JCS bytes and named by their OCI digest."""

    _bytes: bytes | None = PrivateAttr(default=None)
    _digest: OciDigest | None = PrivateAttr(default=None)

    def to_bytes(self) -> bytes:
        """The canonical (JCS) document bytes, no trailing newline."""
        if self._bytes is None:
            self._bytes = canonicalize(self.to_json())
        return self._bytes

    @property
    def digest(self) -> OciDigest:
        """The OCI digest of the document bytes."""
        if self._digest is None:
            self._digest = OciDigest.of(self.to_bytes())
        return self._digest

    def __eq__(self, other: object) -> bool:
        # Identity is the document bytes; cached private state must not make equal documents differ.
        if not isinstance(other, JcsDocument):
            return NotImplemented
        return type(self) is type(other) and self.to_bytes() == other.to_bytes()

    def __hash__(self) -> int:
        return hash(self.digest)

    def _adopt(self, stored: bytes, digest: OciDigest) -> None:
        """Remember verified stored bytes and their digest (decoder use only)."""
        self._bytes, self._digest = stored, digest
