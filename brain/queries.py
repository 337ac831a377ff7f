"""Read-only questions several commands ask of a brain: which modules a selective pull left out, a block's
one-line title for people, and which snapshots are reachable locally. Pure reads through `Brain`; no
terminal, no network.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from brain.blocks.base import Block
from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.identity import BlockId, OciDigest, is_digest_string
from brain.installed import left_out_modules
from brain.ledger import Ledger
from brain.module import Module


def not_installed(brain: Brain, modules: Mapping[MemoryType, Module]) -> list[MemoryType]:
    """Modules a selective pull left out: the head says the pull was partial and none of their blocks is stored."""
    head = brain.head()
    if head is None or head.origin is None or not head.origin.partial:
        return []
    snapshot = brain.snapshot()
    left_out = [] if snapshot is None else list(left_out_modules(brain.blobs, head, snapshot))
    for memory_type, module in modules.items():
        readable = [b for b in module.block_ids if b not in module.tombstones]
        if readable and not any(brain.blobs.has(b) for b in readable):
            left_out.append(memory_type)
    return left_out


def title_of(block: Block, ledger: Ledger) -> str:
    """A one-line description for people: label, summary, source origin and media type, or record type."""
    payload: dict[str, Any] = block.payload()
    if block.memory_type is MemoryType.CANONICAL:
        registration = ledger.registrations.get(block.block_id)
        origin = registration.origin if registration is not None else None
        media = f"{payload.get('media_type', '?')}, {payload.get('size', '?')} bytes"
        return f"{origin} ({media})" if origin else media
    if block.memory_type is MemoryType.EPISODIC:
        return _one_line(str(payload.get("summary", "")))
    if block.memory_type is MemoryType.PROVENANCE:
        record = payload.get("record") or {}
        target = record.get("block") or (record.get("blocks") or [None])[0]
        about = f" {BlockId.parse(target).short}" if is_digest_string(target) else ""
        return f"{record.get('record_type', '?')}{about}"
    kind = payload.get("kind")
    label = _one_line(str(payload.get("label", "")))
    return f"{label} ({kind})" if kind else label


def _one_line(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def local_history(brain: Brain, start: OciDigest) -> set[OciDigest]:
    """Every stored snapshot reachable from `start` through all parents (including `start`)."""
    seen: set[OciDigest] = set()
    pending = [start]
    while pending:
        digest = pending.pop()
        if digest in seen or not brain.blobs.has(digest):
            continue
        seen.add(digest)
        snapshot = brain.snapshot(digest)
        if snapshot is not None:  # always, for a digest that is stored
            pending.extend(snapshot.parent_digests)
    return seen


__all__ = ["local_history", "not_installed", "title_of"]
