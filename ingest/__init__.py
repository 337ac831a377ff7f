"""Ingest: turn source files into canonical blocks and validated model proposals.

`sources` finds files and names their media types, `normalize` turns them into deterministic text views,
`fingerprints` remembers what was already registered, `proposers` and `validate` handle model output.
"""

from __future__ import annotations

# The only memory types a proposer may be asked for (§2: canonical and provenance are never proposed).
from brain.blocks.memory_type import PROPOSABLE_MEMORY_TYPES

__all__ = ["PROPOSABLE_MEMORY_TYPES"]
