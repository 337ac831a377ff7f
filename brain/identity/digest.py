"""The three identity levels of the protocol as distinct, validated value types.

They share one syntax (`sha256:` + 64 lowercase hex) but never one meaning: a `MerkleRoot` handed where a
`BlockId` is expected is refused, even though the strings would look alike.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, ClassVar, Self, TypeGuard

from pydantic_core import core_schema

from brain.errors import InvalidInputError

DIGEST_PREFIX = "sha256:"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def is_digest_string(value: object) -> TypeGuard[str]:
    """True iff `value` is a syntactically valid digest string."""
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


class Digest:
    """A SHA-256 digest of one identity kind; immutable, hashable, ordered by hex."""

    __slots__ = ("hex",)
    kind: ClassVar[str] = "digest"
    hex: str

    def __init__(self, hex_digest: str) -> None:
        if not isinstance(hex_digest, str) or _HEX64.fullmatch(hex_digest) is None:
            raise InvalidInputError(
                f"invalid {self.kind}: expected 64 lowercase hex characters, got {hex_digest!r}"
            )
        object.__setattr__(self, "hex", hex_digest)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @classmethod
    def of(cls, data: bytes) -> Self:
        """The digest of `data`."""
        return cls(hashlib.sha256(data).hexdigest())

    @classmethod
    def from_raw(cls, raw: bytes) -> Self:
        """The digest whose 32 raw bytes are `raw`."""
        if len(raw) != 32:
            raise InvalidInputError(f"invalid {cls.kind}: raw digest must be 32 bytes, got {len(raw)}")
        return cls(raw.hex())

    @classmethod
    def parse(cls, value: str | Digest) -> Self:
        """Parse `sha256:<hex>`; refuses other algorithms, uppercase hex and other digest kinds."""
        if isinstance(value, Digest):
            if type(value) is cls:
                return value
            raise InvalidInputError(
                f"expected a {cls.kind}, got a {value.kind} ({value}); the identity levels are not interchangeable"
            )
        if not isinstance(value, str) or _DIGEST.fullmatch(value) is None:
            raise InvalidInputError(
                f"invalid {cls.kind} {value!r}: expected 'sha256:' followed by 64 lowercase hex characters"
            )
        return cls(value[len(DIGEST_PREFIX) :])

    @property
    def raw(self) -> bytes:
        """The 32 bytes the hex decodes to."""
        return bytes.fromhex(self.hex)

    @property
    def short(self) -> str:
        """A 12-hex-character abbreviation for people (not for identity)."""
        return self.hex[:12]

    def __str__(self) -> str:
        return DIGEST_PREFIX + self.hex

    def __repr__(self) -> str:
        return f"{type(self).__name__}('{self}')"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.hex == self.hex  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.hex))

    def __lt__(self, other: Self) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.hex < other.hex

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.hex,))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        def validate(value: Any) -> Digest:
            try:
                return cls.parse(value)
            except InvalidInputError as e:
                raise ValueError(e.message) from None

        return core_schema.no_info_plain_validator_function(
            validate,
            json_schema_input_schema=core_schema.str_schema(pattern=r"^sha256:[0-9a-f]{64}$"),
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="always"),
        )


class BlockId(Digest):
    """Knowledge identity: SHA-256 of a block's canonical envelope bytes."""

    __slots__ = ()
    kind: ClassVar[str] = "block id"


class MerkleRoot(Digest):
    """Version identity: the `rfc6962-sorted/1` root over a set of block ids."""

    __slots__ = ()
    kind: ClassVar[str] = "Merkle root"


class OciDigest(Digest):
    """Storage identity: SHA-256 of any stored file (source, composition, snapshot, manifest, layer)."""

    __slots__ = ()
    kind: ClassVar[str] = "OCI digest"
