"""The travelling vector index on the consumer side: what is embedded (units), the indexes a snapshot carries
(loaded and checked as hostile input), and the dense ranking of a query vector against them.

A unit is what the lexical index calls a document: a passage of a source's view (block id + locator) or a
whole semantic, procedural or episodic block (locator ""), with the same text the full-text index gets.
The payload format is `brain.vectors`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from brain.blocks.base import Block
from brain.brain import Brain
from brain.errors import BrainError, UntrustedArtifactError
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


@dataclass(frozen=True)
class Loaded:
    """One module's checked index, ready to rank: keys in payload order and unit-length rows."""

    memory_type: str
    model: str
    dimension: int
    keys: tuple[tuple[str, str], ...]  # (block hex, locator)
    matrix: np.ndarray  # float32 (count, dimension), each row unit length or zero; read-only


@dataclass
class Dense:
    """The indexes of one snapshot, ready to rank a query vector (one model for all of them)."""

    model: str
    dimension: int
    modules: list[Loaded] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # modules with blocks but no index

    @property
    def count(self) -> int:
        """How many units the indexes hold."""
        return sum(len(m.keys) for m in self.modules)

    @property
    def keys(self) -> list[tuple[str, str, str]]:
        """Every unit as (memory type, block hex, locator), module by module."""
        return [(m.memory_type, b, loc) for m in self.modules for b, loc in m.keys]

    def ranked(self, query: np.ndarray, limit: int) -> list[tuple[str, str, str, float]]:
        """The `limit` nearest units by cosine, best first (ties by block id and locator): one matrix-vector
        product per module and a partial sort of its scores. The product is numpy's own loop (`einsum`), not
        BLAS: a threaded BLAS wakes its threads for each product, which on a busy machine costs more than the
        product (20 ms instead of 0.2 ms for 10,000 × 64 with two cores under load)."""
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        if limit <= 0 or norm == 0 or q.shape[0] != self.dimension:
            return []
        q = q / norm
        scores, where = [], []
        for n, module in enumerate(self.modules):
            if not module.keys:
                continue
            module_scores = np.einsum("ij,j->i", module.matrix, q)
            take = min(limit, len(module_scores))
            top = np.argpartition(-module_scores, take - 1)[:take] if take < len(module_scores) else np.arange(take)
            scores.append(module_scores[top])
            where.append(np.stack([np.full(take, n), top], axis=1))
        if not scores:
            return []
        every, at = np.concatenate(scores), np.concatenate(where)
        take = min(limit, len(every))
        best = np.argpartition(-every, take - 1)[:take] if take < len(every) else np.arange(take)
        found = []
        for (n, i), score in zip(at[best].tolist(), every[best].tolist(), strict=True):
            module = self.modules[n]
            block, locator = module.keys[i]
            found.append((-score, block, locator, module.memory_type))
        found.sort()
        return [(memory_type, block, locator, -score) for score, block, locator, memory_type in found]


# Checked indexes of this process, by what determines them: the brain directory, the module's composition
# and tombstones (its members), the model and the payload's digest. A warm process (serve, the sdk, a
# benchmark loop) reads and checks each payload once; a lie is remembered too. Bounded by bytes.
_CACHE_BYTES = 1 << 30
_cache: OrderedDict[tuple[str, ...], Loaded | str] = OrderedDict()
_cached_bytes = 0
_cache_lock = threading.Lock()


def forget() -> None:
    """Drop every cached index (what a new process starts with)."""
    global _cached_bytes
    with _cache_lock:
        _cache.clear()
        _cached_bytes = 0


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """`matrix` copied once into an aligned, C-ordered float32 array whose non-zero rows are scaled to unit
    length (in place: a payload's vectors follow a variable-length header, so a view of them is unaligned and
    slow to multiply), read-only."""
    rows = np.array(matrix, dtype=np.float32, order="C", copy=True)
    if rows.size:
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
        if not bool(np.all((np.abs(norms - 1) < 1e-4) | (norms == 0))):
            rows /= np.where(norms > 0, norms, 1.0).astype(np.float32)[:, None]
    rows.flags.writeable = False
    return rows


def loaded(brain: Brain, snapshot: Snapshot, memory_type: str) -> Loaded | None:
    """The module's checked index ready to rank (cached per process); None when it has none. Raises
    `BrainError` as `load` does (a lie is cached as one and raised again without re-reading)."""
    global _cached_bytes
    ref = snapshot.modules.get(memory_type)
    if ref is None or ref.index_digest is None:
        return None
    key = (str(brain.path), memory_type, str(ref.index_digest), str(ref.embedding_model), str(ref.composition),
           ",".join(i.hex for i in ref.tombstones or ()))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
    if isinstance(hit, Loaded):
        return hit
    if isinstance(hit, str):
        raise UntrustedArtifactError(hit)
    try:
        index = load(brain, snapshot, memory_type)
    except UntrustedArtifactError as e:
        with _cache_lock:
            _cache[key] = e.message
        raise
    assert index is not None
    ready = Loaded(memory_type, index.model, index.dimension, index.keys, unit_rows(index.vectors))
    size = ready.matrix.nbytes + 100 * len(ready.keys)
    with _cache_lock:
        _cache[key] = ready
        _cached_bytes += size
        while _cached_bytes > _CACHE_BYTES and len(_cache) > 1:
            _, dropped = _cache.popitem(last=False)
            if isinstance(dropped, Loaded):
                _cached_bytes -= dropped.matrix.nbytes + 100 * len(dropped.keys)
    return ready


def dense_of(brain: Brain, snapshot: Snapshot) -> Dense | None:
    """The snapshot's vector indexes as one `Dense`, or None when it carries none. An index that lies is
    left out with a note; so is one made by another model than the first module's. Modules with blocks and
    no index (their membership changed since `brain embed`) are `stale`."""
    modules: list[Loaded] = []
    notes: list[str] = []
    for memory_type in EMBEDDED:
        try:
            index = loaded(brain, snapshot, memory_type)
        except BrainError as e:
            notes.append(f"vector index of {memory_type} ignored: {e.message}")
            continue
        if index is None:
            continue
        if modules and (index.model != modules[0].model or index.dimension != modules[0].dimension):
            notes.append(f"vector index of {memory_type} ignored: made by {index.model!r}, the others by "
                         f"{modules[0].model!r}")
            continue
        modules.append(index)
    if not modules:
        return Dense(model="", dimension=0, notes=notes) if notes else None
    stale = [t for t in EMBEDDED if (ref := snapshot.modules.get(t)) is not None and ref.block_count
             and ref.index_digest is None]
    return Dense(model=modules[0].model, dimension=modules[0].dimension, modules=modules, notes=notes, stale=stale)
