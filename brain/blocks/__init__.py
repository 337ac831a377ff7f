"""Blocks: the five payload models, the envelope, later-version blocks and the schema registry (§1, §3)."""

from brain.blocks.base import Block, BlockDecodeError, TypedBlock
from brain.blocks.canonical import CanonicalBlock, NormalizedView
from brain.blocks.episodic import EpisodicBlock
from brain.blocks.generic import GenericBlock
from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.blocks.procedural import ProceduralBlock, Step
from brain.blocks.provenance import (
    Actor,
    ActorKind,
    DemotionRecord,
    DerivationRecord,
    NormalizationRecord,
    Producer,
    ProducerKind,
    ProvenanceBlock,
    Record,
    RegistrationRecord,
    RemovalMechanism,
    RemovalRecord,
    SupersessionRecord,
    ValidationRecord,
    Verdict,
)
from brain.blocks.semantic import Relation, SemanticBlock, SemanticKind

__all__ = [
    "MODULE_ORDER",
    "Actor",
    "ActorKind",
    "Block",
    "BlockDecodeError",
    "CanonicalBlock",
    "DemotionRecord",
    "DerivationRecord",
    "EpisodicBlock",
    "GenericBlock",
    "MemoryType",
    "NormalizationRecord",
    "NormalizedView",
    "ProceduralBlock",
    "Producer",
    "ProducerKind",
    "ProvenanceBlock",
    "Record",
    "RegistrationRecord",
    "Relation",
    "RemovalMechanism",
    "RemovalRecord",
    "SemanticBlock",
    "SemanticKind",
    "Step",
    "SupersessionRecord",
    "TypedBlock",
    "ValidationRecord",
    "Verdict",
]
