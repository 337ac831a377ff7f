"""Reading stored block bytes (§1.5, checks in order) and building blocks from JSON payloads (§3.8)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from brain.blocks.base import ENVELOPE_KEYS, SERIALIZATION, Block, BlockDecodeError, TypedBlock
from brain.blocks.canonical import CanonicalBlock
from brain.blocks.document import check_boltzmann, read_json_object
from brain.blocks.episodic import EpisodicBlock
from brain.blocks.generic import GenericBlock, drop_nulls
from brain.blocks.memory_type import MemoryType
from brain.blocks.procedural import ProceduralBlock
from brain.blocks.provenance import ProvenanceBlock
from brain.blocks.schemas import REGISTERED_VERSIONS, payload_problems, select_schema_version
from brain.blocks.semantic import SemanticBlock
from brain.errors import CanonicalFormError, InvalidInputError
from brain.frozen import FrozenModel
from brain.identity import BlockId, canonicalize
from brain.identity.jcs import canonicalize_parsed

TYPED_V1: dict[MemoryType, type[TypedBlock]] = {
    MemoryType.CANONICAL: CanonicalBlock,
    MemoryType.EPISODIC: EpisodicBlock,
    MemoryType.SEMANTIC: SemanticBlock,
    MemoryType.PROCEDURAL: ProceduralBlock,
    MemoryType.PROVENANCE: ProvenanceBlock,
}
_MEMORY_TYPES = {m.value: m for m in MemoryType}
_V1 = Annotated[int, Field(strict=True, ge=1, le=1)]


def _v1_envelope_model(block_type: type[TypedBlock]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        "boltzmann": (_V1, ...),
        "memory_type": (Literal[block_type.memory_type.value], ...),  # type: ignore[valid-type]
        "payload": (block_type, ...),
        "schema_version": (_V1, ...),
        "serialization": (Literal["jcs/1"], ...),
    }
    return create_model(f"{block_type.__name__}Envelope", __base__=FrozenModel, **fields)


# Every v1 envelope, parsed and validated in one pass by pydantic-core, discriminated by memory_type.
_V1_ENVELOPES: TypeAdapter[Any] = TypeAdapter(
    Annotated[Union[tuple(_v1_envelope_model(t) for t in TYPED_V1.values())], Field(discriminator="memory_type")],  # type: ignore[arg-type]  # noqa: UP007
    config=ConfigDict(defer_build=True),  # built on first use, like every model (`brain.frozen`)
)


def _fast_v1(data: bytes) -> Block | None:
    """The block if `data` is exactly the canonical bytes of a valid v1 block, else None.

    Sound because acceptance requires byte equality with our own JCS output: such bytes carry no duplicate
    key, float, BOM or other strictness violation, so the ordered checks below would accept them too. Any
    other input goes the ordered way, which names the first failing check.
    """
    try:
        block: Block = _V1_ENVELOPES.validate_json(data).payload
        return block if canonicalize_parsed(block.envelope()) == data else None
    except (ValidationError, CanonicalFormError):
        return None


def decode_block(data: bytes, expected: BlockId | None = None) -> Block:
    """Verify and decode stored block bytes; each failure names the first §1.5 check that failed."""
    data = bytes(data)
    actual = BlockId.of(data)
    if expected is not None and actual != BlockId.parse(expected):
        raise BlockDecodeError(f"block content hashes to {actual}, not to the requested {expected}")
    block = _fast_v1(data)
    if block is None:
        block = _decode_in_order(data)
    block._adopt(data, actual)
    return block


def _decode_in_order(data: bytes) -> Block:
    """§1.5 steps 2-9 one by one (step 1, the hash, is the caller's); raises naming the first that fails."""
    _, envelope = read_json_object(data, None, BlockId, "block", BlockDecodeError)
    if envelope.keys() != ENVELOPE_KEYS:
        missing = sorted(ENVELOPE_KEYS - envelope.keys())
        extra = sorted(envelope.keys() - ENVELOPE_KEYS)
        raise BlockDecodeError(f"envelope must have exactly five keys (missing: {missing}; unexpected: {extra})")
    check_boltzmann(envelope, "block", BlockDecodeError)
    memory_type = _MEMORY_TYPES.get(envelope["memory_type"]) if isinstance(envelope["memory_type"], str) else None
    if memory_type is None:
        raise BlockDecodeError(f"unknown memory_type {envelope['memory_type']!r}")
    version = envelope["schema_version"]
    if type(version) is not int or version not in REGISTERED_VERSIONS[memory_type]:
        raise BlockDecodeError(
            f"schema_version {version!r} is not registered for {memory_type} "
            f"(registered: {', '.join(map(str, REGISTERED_VERSIONS[memory_type]))})"
        )
    if envelope["serialization"] != SERIALIZATION:
        raise BlockDecodeError(f"serialization must be 'jcs/1', got {envelope['serialization']!r}")
    payload = envelope["payload"]
    if not isinstance(payload, dict):
        raise BlockDecodeError("payload must be a JSON object")
    try:
        if version == 1:
            block: Block = TYPED_V1[memory_type].model_validate(payload)
        else:
            block = GenericBlock(memory_type=memory_type, schema_version=version, body=payload)
    except ValidationError as e:
        raise BlockDecodeError(f"invalid {memory_type} v{version} payload: {_first_error(e)}") from e
    # Step 9 without re-serializing the model: the parsed envelope must already be in JCS form, and the
    # model must hold exactly the parsed payload (nothing dropped, such as an explicit null, or coerced).
    canonical = canonicalize_parsed(envelope)
    if canonical != data:
        raise BlockDecodeError(_canonical_difference(canonical, data))
    if block.payload() != payload:
        raise BlockDecodeError(_canonical_difference(block.canonical_bytes(), data))
    return block


def block_from_payload(memory_type: MemoryType, payload: dict[str, Any]) -> Block:
    """A block for `payload` under the oldest schema version that accepts it; nulls count as absent."""
    if not isinstance(payload, dict):
        raise InvalidInputError(f"a {memory_type} payload must be a JSON object, got {type(payload).__name__}")
    cleaned = drop_nulls(payload)
    typed = _typed_v1(memory_type, cleaned)
    if typed is not None:
        return typed
    canonicalize(cleaned)  # refuses floats and unsafe integers with a message naming where
    version = select_schema_version(memory_type, cleaned)
    if version is None:
        problems = payload_problems(memory_type, REGISTERED_VERSIONS[memory_type][0], cleaned)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise InvalidInputError(f"invalid {memory_type} payload: {problems[0]}{more}")
    try:
        if version == 1:
            return TYPED_V1[memory_type].model_validate(cleaned)
        return GenericBlock(memory_type=memory_type, schema_version=version, body=cleaned)
    except ValidationError as e:
        raise InvalidInputError(f"invalid {memory_type} payload: {_first_error(e)}") from e


def _typed_v1(memory_type: MemoryType, cleaned: dict[str, Any]) -> Block | None:
    """The v1 block if the typed v1 model takes `cleaned` exactly (nothing coerced or dropped), else None.

    The ingest gate's hot path (about 20x cheaper than the JSON Schema pass). Sound for the same reason as
    `_fast_v1`: the typed models are the v1 schemas, and v1, the oldest version, is what the writer rule
    picks whenever it fits; anything else (later versions, errors to explain) goes the schema way.
    """
    try:
        block = TYPED_V1[memory_type].model_validate(cleaned)
        payload = block.payload()
        if payload != cleaned:
            return None
        canonical = canonicalize_parsed(block.envelope(payload))  # a lone surrogate passes the model, not JCS
        block._adopt(canonical, BlockId.of(canonical))
        return block
    except (ValidationError, CanonicalFormError):
        return None


def _first_error(error: ValidationError) -> str:
    errors = error.errors(include_url=False)
    first = errors[0]
    where = ".".join(["payload", *map(str, first["loc"])]) if first["loc"] else "payload"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def _canonical_difference(canonical: bytes, stored: bytes) -> str:
    pairs = enumerate(zip(canonical, stored, strict=False))
    at = next((i for i, (a, b) in pairs if a != b), min(len(canonical), len(stored)))
    return (
        f"not in canonical jcs/1 form: re-serialization differs from the stored bytes at byte {at} "
        f"(stored {stored[at : at + 16]!r}, canonical {canonical[at : at + 16]!r})"
    )
