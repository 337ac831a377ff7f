"""`provenance` v1 (§3.5): the ledger; each block holds exactly one immutable record."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from brain.blocks.base import TypedBlock
from brain.blocks.fields import NonEmptyBlockIds, NonEmptyText, NonEmptyTexts, Text, Timestamp, WireModel
from brain.blocks.memory_type import MemoryType
from brain.identity import BlockId, MerkleRoot


class ActorKind(StrEnum):
    """Who acted: a person, an agent, a service or a pipeline."""

    HUMAN = "human"
    AGENT = "agent"
    SERVICE = "service"
    PIPELINE = "pipeline"


class ProducerKind(StrEnum):
    """What produced a derived block."""

    MODEL = "model"
    PIPELINE = "pipeline"
    BATCH = "batch"
    ACTOR = "actor"


class Verdict(StrEnum):
    """The outcome of validating a block (`$defs/ValidationStatus`)."""

    VALIDATED = "validated"
    PENDING_REVIEW = "pending_review"
    REJECTED = "rejected"
    CONTRADICTED = "contradicted"


class RemovalMechanism(StrEnum):
    """How members left a module (this implementation writes `drop` and `tombstone`)."""

    DROP = "drop"
    SUPERSEDE = "supersede"
    DEMOTE = "demote"
    PRUNE = "prune"
    TOMBSTONE = "tombstone"
    CRYPTO_SHRED = "crypto_shred"
    LINEAGE_REWRITE = "lineage_rewrite"


class Actor(WireModel):
    """The acting identity; any non-empty id reads (§3.6) — writers check new ids with `validate_actor_id`."""

    id: NonEmptyText
    kind: ActorKind
    name: Text | None = None


class Producer(WireModel):
    """The model, pipeline, batch or actor that produced a derived block."""

    kind: ProducerKind
    id: NonEmptyText
    version: Text | None = None


class _Record(WireModel):
    actor: Actor
    at: Timestamp


class RegistrationRecord(_Record):
    """A block (normally canonical) was incorporated."""

    record_type: Literal["registration"] = "registration"
    block: BlockId
    origin: Text | None = None
    license: Text | None = None
    retention_policy: Text | None = None


class NormalizationRecord(_Record):
    """A canonical block's normalized view was produced by this pipeline."""

    record_type: Literal["normalization"] = "normalization"
    block: BlockId
    pipeline: NonEmptyText
    pipeline_version: NonEmptyText


class DerivationRecord(_Record):
    """A derived block was produced from the cited evidence."""

    record_type: Literal["derivation"] = "derivation"
    block: BlockId
    derived_from: NonEmptyBlockIds
    producer: Producer
    task: Text | None = None
    locator: Text | None = None


class ValidationRecord(_Record):
    """A block passed (or failed) the named checks."""

    record_type: Literal["validation"] = "validation"
    block: BlockId
    verdict: Verdict
    checks: NonEmptyTexts
    task: Text | None = None


class SupersessionRecord(_Record):
    """`block` supersedes `supersedes`."""

    record_type: Literal["supersession"] = "supersession"
    block: BlockId
    supersedes: BlockId
    reason: Text | None = None


class DemotionRecord(_Record):
    """A block was demoted (kept, but no longer current)."""

    record_type: Literal["demotion"] = "demotion"
    block: BlockId
    reason: Text | None = None
    policy: Text | None = None


class RemovalRecord(_Record):
    """Members left a module (dropped, tombstoned...)."""

    record_type: Literal["removal"] = "removal"
    blocks: NonEmptyBlockIds
    mechanism: RemovalMechanism
    memory_type: MemoryType
    reason: NonEmptyText
    policy: Text | None = None
    cascaded_from: BlockId | None = None
    resulting_roots: dict[Text, MerkleRoot] | None = None


Record = Annotated[
    RegistrationRecord
    | NormalizationRecord
    | DerivationRecord
    | ValidationRecord
    | SupersessionRecord
    | DemotionRecord
    | RemovalRecord,
    Field(discriminator="record_type"),
]
RECORD_TYPES: tuple[type[WireModel], ...] = (
    RegistrationRecord,
    NormalizationRecord,
    DerivationRecord,
    ValidationRecord,
    SupersessionRecord,
    DemotionRecord,
    RemovalRecord,
)


class ProvenanceBlock(TypedBlock):
    """One ledger record; its `record_type` selects the record model."""

    memory_type: ClassVar[MemoryType] = MemoryType.PROVENANCE

    record: Record
