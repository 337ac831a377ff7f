"""The block envelope (§1.1): what every block shares, whatever its payload model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import PrivateAttr

from brain.blocks.fields import WireModel
from brain.blocks.memory_type import MemoryType
from brain.errors import IntegrityError
from brain.identity import BlockId, canonicalize
from brain.identity.jcs import canonicalize_parsed

PROTOCOL_VERSION = 1
SERIALIZATION = "jcs/1"
ENVELOPE_KEYS = frozenset({"boltzmann", "memory_type", "payload", "schema_version", "serialization"})


class BlockDecodeError(IntegrityError):
    """Stored block bytes fail a §1.5 check; the message says which (the caller adds where)."""


class Block(WireModel):
    """A block: one typed payload in the five-key envelope, identified by the SHA-256 of its JCS bytes."""

    if TYPE_CHECKING:
        # Class constants of typed blocks, fields of `GenericBlock`: read-only here either way.
        @property
        def memory_type(self) -> MemoryType: ...

        @property
        def schema_version(self) -> int: ...

    # Whether every field is validated to an exact JSON type (strict strings, integers within ±(2^53−1)), so
    # the envelope needs no walk for floats or unsafe integers before it is serialized.
    _exact_json_fields: ClassVar[bool] = False

    # Filled lazily (or by the decoder with the verified stored bytes); the model is frozen so they never go stale.
    _canonical: bytes | None = PrivateAttr(default=None)
    _block_id: BlockId | None = PrivateAttr(default=None)

    def payload(self) -> dict[str, Any]:
        """The payload object exactly as it is serialized (absent optional members omitted)."""
        return self.to_json()

    def envelope(self, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """The five-key envelope object that is hashed (`payload`: this block's, when the caller has it)."""
        return {
            "boltzmann": PROTOCOL_VERSION,
            "memory_type": self.memory_type.value,
            "payload": self.payload() if payload is None else payload,
            "schema_version": self.schema_version,
            "serialization": SERIALIZATION,
        }

    def canonical_bytes(self) -> bytes:
        """The JCS bytes of the envelope: what is stored and hashed."""
        # The private store directly: pydantic's attribute fallback costs microseconds per access, and an
        # ingest asks each block for its bytes and id several times.
        private = self.__pydantic_private__
        data: bytes | None = private["_canonical"]  # type: ignore[index]
        if data is None:
            envelope = self.envelope()
            data = canonicalize_parsed(envelope) if self._exact_json_fields else canonicalize(envelope)
            private["_canonical"] = data  # type: ignore[index]
        return data

    @property
    def block_id(self) -> BlockId:
        """The block id: SHA-256 of `canonical_bytes()`."""
        private = self.__pydantic_private__
        block_id: BlockId | None = private["_block_id"]  # type: ignore[index]
        if block_id is None:
            block_id = private["_block_id"] = BlockId.of(self.canonical_bytes())  # type: ignore[index]
        return block_id

    def __eq__(self, other: object) -> bool:
        # Identity is the canonical bytes; cached private state must not make equal blocks differ.
        if not isinstance(other, Block):
            return NotImplemented
        return self.canonical_bytes() == other.canonical_bytes()

    def __hash__(self) -> int:
        return hash(self.block_id)

    @classmethod
    def decode(cls, data: bytes, expected: BlockId | None = None) -> Block:
        """Read stored block bytes with every §1.5 check, in order; raises `BlockDecodeError`.

        Called on a subclass, also refuses a block of another type.
        """
        from brain.blocks.decode import decode_block

        block = decode_block(data, expected)
        if cls is not Block and not isinstance(block, cls):
            raise BlockDecodeError(f"expected a {cls.__name__}, found a {type(block).__name__}")
        return block

    @staticmethod
    def from_payload(memory_type: MemoryType | str, payload: dict[str, Any]) -> Block:
        """Build a block from a JSON payload under the oldest schema version that accepts it (§3.8).

        Raises `InvalidInputError` listing the problems when no registered version fits.
        """
        from brain.blocks.decode import block_from_payload

        return block_from_payload(MemoryType.parse(str(memory_type)), payload)

    def _adopt(self, stored: bytes, block_id: BlockId) -> None:
        """Remember verified canonical bytes and their id (decoder use only)."""
        # Straight into the private store: pydantic's __setattr__ is a measurable share of a decode.
        self.__pydantic_private__.update(_canonical=stored, _block_id=block_id)  # type: ignore[union-attr]


class TypedBlock(Block):
    """A block of a schema version this implementation models field by field (every v1 payload)."""

    memory_type: ClassVar[MemoryType]
    schema_version: ClassVar[int] = 1
    _exact_json_fields: ClassVar[bool] = True  # the field types of `brain.blocks.fields`, strict throughout
