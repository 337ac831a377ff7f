"""`brain export --format jsonl`: one JSON object per line per accessible block, written as it is read."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from brain.blocks.memory_type import MemoryType
from export.destination import outside_brain
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


def write_jsonl_file(reader: BrainReader, path: Path, *, provenance: bool = False) -> dict[str, int]:
    """`write_jsonl` into `path` (never inside the brain) through a temporary file: a killed export leaves no torn
    file."""
    outside_brain(reader.brain.path, path)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(temporary, "w", encoding="utf-8") as stream:
            counts = write_jsonl(reader, stream, provenance=provenance)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return counts
