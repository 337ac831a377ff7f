"""brain: build, verify and publish Boltzmann Protocol v1 brains; the protocol core and its one store."""

from brain.blocks import (
    CanonicalBlock,
    EpisodicBlock,
    MemoryType,
    ProceduralBlock,
    SemanticBlock,
    SemanticKind,
    Step,
)
from brain.brain import Brain
from brain.identity import BlockId, MerkleRoot, OciDigest, utc_timestamp

__all__ = [
    "BlockId",
    "Brain",
    "CanonicalBlock",
    "EpisodicBlock",
    "MemoryType",
    "MerkleRoot",
    "OciDigest",
    "ProceduralBlock",
    "SemanticBlock",
    "SemanticKind",
    "Step",
    "utc_timestamp",
]
