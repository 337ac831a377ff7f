"""What the verifier keeps of a decoded block: small tuples, so workers can ship them back cheaply.

Typed v1 models and later-version `GenericBlock`s (JSON bodies) are reduced to the same shape: the blobs a
block names, its stated evidence, its links (relation targets, step uses) and, for provenance, its record.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from brain.blocks import Block, GenericBlock, ProvenanceBlock
from brain.blocks.canonical import CanonicalBlock

# Block states after inspection; everything but OK is unresolvable.
OK, MISSING, CORRUPT, INVALID = "ok", "missing", "corrupt", "invalid"


class NamedBlob(NamedTuple):
    """A content blob a block names: digest string, stated size, and its role for messages."""

    digest: str
    size: int
    role: str


class RecordFacts(NamedTuple):
    """The members of one provenance record the ledger checks need (digests as strings)."""

    record_type: str
    block: str | None = None
    blocks: tuple[str, ...] = ()
    derived_from: tuple[str, ...] = ()
    supersedes: str | None = None
    by_model: bool = False
    memory_type: str | None = None
    pipeline: str | None = None
    pipeline_version: str | None = None
    schema_version: int = 1


class BlockFacts(NamedTuple):
    """The outcome of reading one block: its state, and when readable what it names."""

    block_id: str
    state: str
    detail: str = ""
    memory_type: str | None = None
    blobs: tuple[NamedBlob, ...] = ()
    evidence: tuple[str, ...] | None = None
    relations: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    record: RecordFacts | None = None

    @property
    def ok(self) -> bool:
        """Whether the block was stored, hashed to its id and decoded cleanly."""
        return self.state == OK


def facts_of(block: Block, block_id: str | None = None) -> BlockFacts:
    """Reduce a decoded block to the facts the verifier checks; `block_id` saves re-deriving a known id.

    Typed fields are read from the model's `__dict__`: this runs once per block, and pydantic's attribute
    fallback for absent names is slow.
    """
    block_id = str(block.block_id) if block_id is None else block_id
    if isinstance(block, GenericBlock):
        return _facts_of_payload(block_id, block.memory_type.value, block.schema_version, block.body)
    if isinstance(block, CanonicalBlock):
        blobs = [NamedBlob(str(block.blob), block.size, "source")]
        view = block.normalized_view
        if view is not None:
            blobs.append(NamedBlob(str(view.blob), view.size, "normalized view"))
        return BlockFacts(block_id, OK, memory_type="canonical", blobs=tuple(blobs))
    if isinstance(block, ProvenanceBlock):
        return BlockFacts(block_id, OK, memory_type="provenance", record=_typed_record_facts(block.record))
    fields = block.__dict__
    evidence = fields.get("evidence")
    relations = tuple(str(r.target) for r in fields.get("relations") or ())
    uses = tuple(str(u) for step in fields.get("steps") or () for u in step.uses or ())
    return BlockFacts(
        block_id,
        OK,
        memory_type=block.memory_type.value,
        evidence=None if evidence is None else tuple(str(e) for e in evidence),
        relations=relations,
        uses=uses,
    )


def _typed_record_facts(record: Any) -> RecordFacts:
    fields = record.__dict__

    def text(name: str) -> str | None:
        value = fields.get(name)
        return None if value is None else str(value)

    producer = fields.get("producer")
    return RecordFacts(
        record_type=fields["record_type"],
        block=text("block"),
        blocks=tuple(str(b) for b in fields.get("blocks") or ()),
        derived_from=tuple(str(b) for b in fields.get("derived_from") or ()),
        supersedes=text("supersedes"),
        by_model=producer is not None and producer.kind == "model",
        memory_type=text("memory_type"),
        pipeline=text("pipeline"),
        pipeline_version=text("pipeline_version"),
    )


def _facts_of_payload(block_id: str, memory_type: str, version: int, payload: dict[str, Any]) -> BlockFacts:
    if memory_type == "provenance":
        return BlockFacts(block_id, OK, memory_type=memory_type, record=_record_facts(payload["record"], version))
    content = payload.get("content")
    blobs = (NamedBlob(content["blob"], content["size"], "content"),) if content else ()
    evidence = payload.get("evidence")
    relations = tuple(r["target"] for r in payload.get("relations") or ())
    uses = tuple(u for step in payload.get("steps") or () for u in step.get("uses") or ())
    return BlockFacts(
        block_id,
        OK,
        memory_type=memory_type,
        blobs=blobs,
        evidence=None if evidence is None else tuple(evidence),
        relations=relations,
        uses=uses,
    )


def _record_facts(record: dict[str, Any], version: int) -> RecordFacts:
    producer = record.get("producer") or {}
    # A v2 derivation names collaborators instead of a producer; one carrying a model counts as model-made.
    by_model = producer.get("kind") == "model" or any("model" in c for c in record.get("assisted_by") or ())
    return RecordFacts(
        record_type=record["record_type"],
        block=record.get("block"),
        blocks=tuple(record.get("blocks") or ()),
        derived_from=tuple(record.get("derived_from") or ()),
        supersedes=record.get("supersedes"),
        by_model=by_model,
        memory_type=record.get("memory_type"),
        pipeline=record.get("pipeline"),
        pipeline_version=record.get("pipeline_version"),
        schema_version=version,
    )


# Workers send plain nested tuples: pickling 10^5 named tuples or dataclasses costs ten times more.
Wire = tuple[Any, ...]


def to_wire(facts: BlockFacts) -> Wire:
    """`facts` as plain nested tuples for the trip from a worker process."""
    record = None if facts.record is None else tuple(facts.record)
    return (*facts[:4], tuple(tuple(b) for b in facts.blobs), *facts[5:8], record)


def from_wire(wire: Wire) -> BlockFacts:
    """The `BlockFacts` that `to_wire` flattened."""
    blobs, record = wire[4], wire[8]
    if not blobs and record is None:
        return _make_facts(wire)
    rebuilt = list(wire)
    rebuilt[4] = tuple(_make_blob(b) for b in blobs)
    rebuilt[8] = None if record is None else _make_record(record)
    return _make_facts(rebuilt)


_make_facts, _make_blob, _make_record = BlockFacts._make, NamedBlob._make, RecordFacts._make
