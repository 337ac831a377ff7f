"""`brain export --format jsonl`: one JSON object per line per accessible block, written as it is read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from brain.blocks.memory_type import MemoryType
from export.reader import BrainReader


def write_jsonl(
    reader: BrainReader, stream: TextIO, *, types: Iterable[MemoryType] | None = None, provenance: bool = False
) -> dict[str, int]:
    """Write every record to `stream` (one line each, UTF-8 JSON); returns how many of each type."""
    counts: dict[str, int] = {}
    for record in reader.records(types, provenance=provenance):
        stream.write(record.model_dump_json(exclude_none=True) + "\n")
        counts[record.type.value] = counts.get(record.type.value, 0) + 1
    return counts
