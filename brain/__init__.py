"""brain: build, verify and publish Boltzmann Protocol v1 brains; the protocol core and its one store.

The exports load on first use (PEP 562): `import brain.errors` (which every `brain` command does at start-up)
does not pay for pydantic and the block models; `from brain import Brain` loads what it names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brain.lazy import lazy_exports

if TYPE_CHECKING:
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

_EXPORTED_FROM = {
    "BlockId": "brain.identity",
    "Brain": "brain.brain",
    "CanonicalBlock": "brain.blocks",
    "EpisodicBlock": "brain.blocks",
    "MemoryType": "brain.blocks",
    "MerkleRoot": "brain.identity",
    "OciDigest": "brain.identity",
    "ProceduralBlock": "brain.blocks",
    "SemanticBlock": "brain.blocks",
    "SemanticKind": "brain.blocks",
    "Step": "brain.blocks",
    "utc_timestamp": "brain.identity",
}

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

if not TYPE_CHECKING:  # type checkers see the imports above, and no name that is not one of them
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTED_FROM)
