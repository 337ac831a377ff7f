"""The travelling vector index on the consumer side: what is embedded (units), the indexes a snapshot carries
(loaded and checked as hostile input), and the dense ranking of a query vector against them.

A unit is what the lexical index calls a document: a passage of a source's view (block id + locator) or a
whole semantic, procedural or episodic block (locator ""), with the same text the full-text index gets.
The payload format is `brain.vectors`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from brain.blocks.base import Block
from brain.brain import Brain
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.snapshot import Snapshot
from brain.vectors import VectorIndex, decode
from retrieval import documents
from retrieval.passages import passages

EMBEDDED = ("canonical", "episodic", "semantic", "procedural")


@dataclass(frozen=True)
class Unit:
    """One thing to embed: a block (hex id), a locator ("" for a whole block) and its text."""

    block: str
    locator: str
    text: str


def units_of(brain: Brain, memory_type: str, hex_id: str) -> list[Unit]:
    """The units of one member block (none when its bytes or its view cannot be read)."""
    try:
        block = Block.decode(brain.blobs.get(BlockId(hex_id)), BlockId(hex_id))
    except BrainError:
        return []
    payload = block.payload()
    if memory_type == "canonical":
        digest = documents.readable_text(payload)
        if digest is None:
            return []
        try:
            view = brain.blobs.get(OciDigest.parse(digest)).decode("utf-8", errors="replace")
        except BrainError:
            return []
        return [Unit(hex_id, p.locator, p.text) for p in passages(view, str(payload.get("media_type", "")))]
    entry = documents.derived(memory_type, payload, ())
    return [Unit(hex_id, "", f"{d.title}\n{d.body}".strip()) for d in entry.documents]


def members(brain: Brain, snapshot: Snapshot, memory_type: str) -> list[str]:
    """The readable members (hex ids) of a module of `snapshot`, tombstoned ones left out."""
    ref = snapshot.modules.get(memory_type)
    if ref is None:
        return []
    gone = {i.hex for i in ref.tombstones or ()}
    return [i.hex for i in brain.composition(ref).block_ids if i.hex not in gone]


def load(brain: Brain, snapshot: Snapshot, memory_type: str) -> VectorIndex | None:
    """The module's index, re-hashed and checked against its reference and members; None when it has none.
    Raises `BrainError` (an `UntrustedArtifactError` saying what lies, or the blob store's error)."""
    ref = snapshot.modules.get(memory_type)
    if ref is None or ref.index_digest is None:
        return None
    data = brain.blobs.get(ref.index_digest)
    return decode(data, model=ref.embedding_model, memory_type=memory_type,
                  members=members(brain, snapshot, memory_type))


def previous(brain: Brain, memory_type: str, model: str) -> VectorIndex | None:
    """The newest readable index of the module made by `model`, in the head's history (vectors to reuse)."""
    for _, snapshot in brain.history():
        ref = snapshot.modules.get(memory_type)
        if ref is None or ref.index_digest is None or ref.embedding_model != model:
            continue
        if not brain.blobs.has(ref.index_digest):
            continue
        try:
            return decode(brain.blobs.get(ref.index_digest), model=model, memory_type=memory_type, members=None)
        except BrainError:
            continue
    return None


@dataclass
class Dense:
    """The indexes of one snapshot, ready to rank a query vector (one model for all of them)."""

    model: str
    dimension: int
    keys: list[tuple[str, str, str]] = field(default_factory=list)  # (memory type, block hex, locator)
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    notes: list[str] = field(default_factory=list)

    def ranked(self, query: np.ndarray, limit: int) -> Iterator[tuple[str, str, str, float]]:
        """The `limit` nearest units by cosine, best first (ties by block id and locator)."""
        if not self.keys:
            return
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        if norm == 0 or q.shape[0] != self.dimension:
            return
        scores = self.matrix @ (q / norm)
        limit = min(limit, len(scores))
        top = np.argpartition(-scores, limit - 1)[:limit]
        for i in sorted(top.tolist(), key=lambda i: (-float(scores[i]), self.keys[i][1], self.keys[i][2])):
            memory_type, block, locator = self.keys[i]
            yield memory_type, block, locator, float(scores[i])


def dense_of(brain: Brain, snapshot: Snapshot) -> Dense | None:
    """The snapshot's vector indexes as one `Dense`, or None when it carries none. An index that lies is
    left out with a note; so is one made by another model than the first module's."""
    loaded: list[VectorIndex] = []
    notes: list[str] = []
    for memory_type in EMBEDDED:
        try:
            index = load(brain, snapshot, memory_type)
        except BrainError as e:
            notes.append(f"vector index of {memory_type} ignored: {e.message}")
            continue
        if index is None:
            continue
        if loaded and (index.model != loaded[0].model or index.dimension != loaded[0].dimension):
            notes.append(f"vector index of {memory_type} ignored: made by {index.model!r}, the others by "
                         f"{loaded[0].model!r}")
            continue
        loaded.append(index)
    if not loaded:
        return Dense(model="", dimension=0, notes=notes) if notes else None
    keys = [(i.memory_type, b, loc) for i in loaded for b, loc in i.keys]
    matrix = np.concatenate([i.vectors for i in loaded]) if keys else np.zeros((0, loaded[0].dimension), np.float32)
    return Dense(model=loaded[0].model, dimension=loaded[0].dimension, keys=keys, matrix=matrix, notes=notes)
