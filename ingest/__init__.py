"""Ingest: turn source files into canonical blocks and validated model proposals.

`sources` finds files and names their media types, `normalize` turns them into deterministic text views,
`fingerprints` remembers what was already registered, `proposers` and `validate` handle model output.
"""

from __future__ import annotations

from brain.blocks.memory_type import MemoryType

# The only memory types a proposer may be asked for (§2: canonical and provenance are never proposed).
PROPOSABLE_MEMORY_TYPES: frozenset[MemoryType] = frozenset(
    {MemoryType.EPISODIC, MemoryType.SEMANTIC, MemoryType.PROCEDURAL}
)

__all__ = ["PROPOSABLE_MEMORY_TYPES"]
