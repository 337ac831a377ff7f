"""Short human titles for blocks, for the cascade listings of `drop`, `redact` and `diff`."""

from __future__ import annotations

from typing import Any

from brain.blocks.base import Block
from brain.blocks.memory_type import MemoryType

_WIDTH = 72


def title_of(block: Block, payload: dict[str, Any] | None = None) -> str:
    """A one-line title: a label, an episode's summary, a source's media type, a record's type (`payload`: the
    block's, when the caller has it)."""
    payload = block.payload() if payload is None else payload
    if block.memory_type is MemoryType.PROVENANCE:
        record = payload.get("record")
        text = f"{record.get('record_type', 'record')} record" if isinstance(record, dict) else "record"
    elif block.memory_type is MemoryType.CANONICAL:
        text = f"{payload.get('media_type', 'source')}, {payload.get('size', '?')} bytes"
    else:
        text = str(payload.get("label") or payload.get("summary") or payload.get("statement") or "")
    text = " ".join(text.split())
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"
