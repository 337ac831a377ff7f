"""Which blobs the retained snapshots reach (`brain prune`): the snapshot documents, their compositions, the
member envelopes, the content blobs canonical (and v2) members name, and vector-index payloads.

A canonical block's content digests are read once per block id, however many snapshots share it, and only
canonical members (and blocks whose schema version may carry `content`) are decoded: a 100,000-block brain
costs one decode per source, not per block.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MemoryType
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.lifecycle.redact import content_digests
from brain.module import read_block
from brain.snapshot import Snapshot

if TYPE_CHECKING:
    from brain.brain import Brain


def snapshot_chain(brain: Brain, starts: Iterable[OciDigest]) -> dict[OciDigest, Snapshot]:
    """Every stored snapshot reachable from `starts` through `parent`/`parents` (the starts included)."""
    found: dict[OciDigest, Snapshot] = {}
    frontier = [d for d in starts if brain.blobs.has(d)]
    while frontier:
        digest = frontier.pop()
        if digest in found:
            continue
        try:
            snapshot = brain.snapshot(digest)
        except BrainError:
            continue  # not a snapshot (or unreadable): `brain verify` reports it; prune keeps what it names
        if snapshot is None:
            continue
        found[digest] = snapshot
        frontier.extend(p for p in snapshot.parent_digests if p not in found and brain.blobs.has(p))
    return found


def reachable(brain: Brain, snapshots: Iterable[OciDigest]) -> set[str]:
    """Hex digests of every blob the snapshots reach (see the module docstring)."""
    keep: set[str] = set()
    chain = snapshot_chain(brain, snapshots)
    seen_compositions: set[OciDigest] = set()
    decoded: set[BlockId] = set()
    for digest, snapshot in chain.items():
        keep.add(digest.hex)
        for ref in snapshot.modules.values():
            keep.add(ref.composition.hex)
            if ref.index_digest is not None:
                keep.add(ref.index_digest.hex)
            if ref.composition in seen_compositions:
                continue
            seen_compositions.add(ref.composition)
            try:
                members = brain.composition(ref).block_ids
            except BrainError:
                continue
            keep.update(b.hex for b in members)
            if ref.memory_type is MemoryType.PROVENANCE:
                continue
            for block_id in members:
                if block_id in decoded:
                    continue
                decoded.add(block_id)
                if ref.memory_type is not MemoryType.CANONICAL and not _may_carry_content(brain, block_id):
                    continue
                try:
                    keep.update(content_digests(read_block(brain.blobs, block_id)))
                except BrainError:
                    continue
    return keep


def _may_carry_content(brain: Brain, block_id: BlockId) -> bool:
    """Derived blocks name content only from schema v2 on; the envelope says so in its first bytes."""
    try:
        with open(brain.blobs.path(block_id), "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False
    return b'"content":' in head
