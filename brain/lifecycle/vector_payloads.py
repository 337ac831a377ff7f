"""The vector-index payloads a redaction destroys with its blocks (§7.5, §6.2).

An embedding is computed from a block's text, and for short texts much of that text can be recovered from
the vector (embedding inversion), so a payload holding an entry of a redacted block is a copy of the block,
like the search index that quotes it. A redaction therefore destroys every stored payload, in the history of
every retained head and branch, that has an entry for one of the blocks it destroys: the current head's
modules have already lost theirs (a module whose members change carries no index until `brain embed` runs
again), and older snapshots keep naming a digest that is recorded as destroyed, like their redacted members.
A payload that cannot be decoded is left alone: it was checked when it was made or pulled, and a redaction
deletes only what it can show holds the blocks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from brain.branches.refs import read_refs
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.lifecycle.reachability import snapshot_chain

if TYPE_CHECKING:
    from brain.brain import Brain


def payloads_holding(brain: Brain, head: OciDigest, blocks: Iterable[BlockId]) -> set[str]:
    """Hex digests of the stored vector-index payloads that have an entry for one of `blocks`, over the
    history of `head`, the retained snapshots and every branch head."""
    wanted = {b.hex for b in blocks}
    if not wanted:
        return set()
    stored = brain.head()
    refs = read_refs(brain.path)
    starts = [head, *(stored.retained or () if stored is not None else ()), *(refs.heads() if refs else ())]
    holding: set[str] = set()
    seen: set[OciDigest] = set()
    for snapshot in snapshot_chain(brain, starts).values():
        for memory_type, ref in snapshot.modules.items():
            digest = ref.index_digest
            if digest is None or digest in seen or not brain.blobs.has(digest):
                continue
            seen.add(digest)
            from brain.vectors import decode  # numpy (~0.2 s to import) only for a brain that has vectors

            try:
                index = decode(brain.blobs.get(digest), model=None, memory_type=str(memory_type), members=None)
            except BrainError:
                continue
            if any(hex_id in wanted for hex_id, _ in index.keys):
                holding.add(digest.hex)
    return holding
