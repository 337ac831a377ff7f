"""Destroying redacted bytes in the brain directory (§7.5), after the snapshot that tombstones them is the
head. Idempotent, so a killed redaction completes when run again:

1. every destroyed digest is recorded in `boltzmann/tombstones.json` (hex → reason; through the atomic
   helper) before any file goes, so the blob store never writes those bytes back (a re-ingest, a pull);
2. the blob files are deleted;
3. the caches that may quote block text are deleted (`CACHE_DIRS`: the proposal cache and lineage log,
   the search index); they are rebuilt when next needed.

Packed layers and manifests in `index.json` that hold the bytes are the OCI layer's business
(`oci.redaction`); the CLI composes both.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from brain.blocks.base import Block
from brain.blocks.memory_type import MemoryType
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.lifecycle.redact import content_digests
from brain.module import read_block
from brain.store.atomic import atomic_write
from brain.store.blobs import TOMBSTONES_FILE
from brain.store.layout import pretty_json
from brain.store.sidecars import CACHE, SEARCH

if TYPE_CHECKING:
    from brain.brain import Brain

# Local caches that may hold block text: deleted by a redaction (rebuilt on demand).
CACHE_DIRS: tuple[tuple[str, ...], ...] = (CACHE.parts, SEARCH.parts)


@dataclass
class Destroyed:
    """What a destruction pass removed."""

    blobs: int = 0
    bytes: int = 0
    caches: list[str] = field(default_factory=list)


def read_reasons(root: Path) -> dict[str, str]:
    """`boltzmann/tombstones.json` as hex → reason (absent or unreadable: empty)."""
    try:
        mapping = json.loads(Path(root).joinpath(*TOMBSTONES_FILE).read_bytes())
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return {}
    if not isinstance(mapping, dict):
        return {}
    return {str(k).removeprefix("sha256:"): str(v) for k, v in mapping.items()}


def record_destroyed(brain: Brain, reasons: Mapping[str, str]) -> None:
    """Add hex digests → reason to `tombstones.json` (existing entries keep their first reason)."""
    merged = {**reasons, **read_reasons(brain.path)}
    path = brain.path.joinpath(*TOMBSTONES_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, pretty_json(dict(sorted(merged.items()))))
    brain.blobs.forget_destroyed()


def installed_contents(brain: Brain, snapshot: OciDigest, leaving: Iterable[BlockId]) -> set[str]:
    """Content digests named by members of `snapshot` that stay readable (not tombstoned, not `leaving`)."""
    gone = set(leaving)
    named: set[str] = set()
    for memory_type, module in brain.modules(snapshot).items():
        if memory_type is MemoryType.PROVENANCE:
            continue
        tombstones = module.tombstones
        for block_id in module.block_ids:
            if block_id in gone or block_id in tombstones:
                continue
            try:
                named.update(content_digests(read_block(brain.blobs, block_id)))
            except BrainError:
                continue
    return named


def pending(brain: Brain, snapshot: OciDigest) -> dict[BlockId, Block | None]:
    """Tombstoned members of `snapshot` whose envelope file still exists (decoded when readable)."""
    found: dict[BlockId, Block | None] = {}
    for module in brain.modules(snapshot).values():
        for block_id in module.tombstones:
            if brain.blobs.has(block_id):
                try:
                    found[block_id] = read_block(brain.blobs, block_id)
                except BrainError:
                    found[block_id] = None
    return found


def destroy(brain: Brain, snapshot: OciDigest, reason: str, *, purge: bool = True) -> Destroyed:
    """Record and delete the bytes of every tombstoned member of `snapshot` (and their content blobs that no
    readable member names), every blob `tombstones.json` lists, and the text caches (when `purge`, or when
    anything was destroyed)."""
    waiting = pending(brain, snapshot)
    reasons: dict[str, str] = {}
    if waiting:
        keep = installed_contents(brain, snapshot, waiting)
        for block_id, block in waiting.items():
            reasons[block_id.hex] = reason
            for hex_digest in content_digests(block) if block is not None else ():
                if hex_digest not in keep:
                    reasons[hex_digest] = reason
        record_destroyed(brain, reasons)
    done = Destroyed()
    for hex_digest in read_reasons(brain.path):
        digest = OciDigest(hex_digest)
        try:
            size = brain.blobs.size(digest)
        except BrainError:
            continue
        if brain.blobs.delete(digest):
            done.blobs += 1
            done.bytes += size
    if purge or done.blobs or waiting:
        done.caches = purge_caches(brain)
    return done


def purge_caches(brain: Brain) -> list[str]:
    """Delete the cache directories that may quote block text; the ones that existed, as relative paths."""
    removed = []
    for parts in CACHE_DIRS:
        path = brain.path.joinpath(*parts)
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
            removed.append("/".join(parts))
    return removed
