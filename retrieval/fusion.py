"""Dense ranking fused with the lexical one (reciprocal-rank fusion), when the query can be embedded.

A snapshot that carries vector indexes (`retrieval.vectors`) is ranked twice: the lexical candidates
(`retrieval.query`) and the units nearest to the query's embedding, made by the same model through the
configured endpoint (`retrieval.embedder`: `BRAIN_OPENAI_BASE_URL`/`OPENAI_BASE_URL`, the key from
`BRAIN_OPENAI_API_KEY`/`OPENAI_API_KEY`; the model is the index's own). Each candidate scores
`1/(RRF_K + rank)` per list it is in; the sum, divided by the best, is its score. When the query cannot be
embedded (no endpoint configured, endpoint unreachable or refusing, an index that lies, another
dimension), the answer is the lexical one with one note saying why.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from brain.errors import BrainError
from brain.identity import OciDigest
from brain.snapshot import Snapshot
from retrieval.embedder import Embedder, EmbedSettings
from retrieval.vectors import Dense, dense_of

# `retrieval.query` hands its searcher, rows, request and filter in (no import back: no cycle).
Searcher = Any
SearchRequest = Any
_Row = Any

RRF_K = 60
DENSE_PER_SLOT = 16  # dense candidates fetched per result slot (before filters)
QUERY_TIMEOUT = 5.0
RETRY_UNREACHABLE = 30.0  # seconds without trying an endpoint that just failed
_QUERY_CACHE = 512


class DenseSearch:
    """Per searcher: the loaded indexes of the last snapshot, the query embedder, and recent query vectors."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ
        self._dense: tuple[OciDigest, Dense | None] | None = None
        self._embedders: dict[str, Embedder] = {}
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._failed_at: float | None = None
        self._failure = ""
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the embedders' connections."""
        for embedder in self._embedders.values():
            embedder.close()

    def indexes(self, searcher: Searcher, digest: OciDigest, snapshot: Snapshot) -> Dense | None:
        """The snapshot's indexes (loaded and checked once per snapshot)."""
        with self._lock:
            if self._dense is None or self._dense[0] != digest:
                self._dense = (digest, dense_of(searcher.brain, snapshot))
            return self._dense[1]

    def fuse(self, searcher: Searcher, rows: list[_Row], request: SearchRequest, digest: OciDigest,
             snapshot: Snapshot, notes: list[str], *, make_row: Callable[..., _Row],
             passes: Callable[[Any, Any], bool], wanted: int) -> list[_Row]:
        """`rows` fused with the dense ranking; unchanged (with a note in `notes`) when there is none to fuse."""
        dense = self.indexes(searcher, digest, snapshot)
        if dense is None:
            return rows
        notes.extend(dense.notes)
        if not dense.keys:
            return rows
        query = self._query_vector(dense, request.query, notes)
        if query is None:
            return rows
        return _fused(searcher, rows, request, dense, query, make_row, passes, wanted)

    def _query_vector(self, dense: Dense, text: str, notes: list[str]) -> np.ndarray | None:
        key = (dense.model, text)
        with self._lock:
            cached = self._vectors.get(key)
            if cached is not None:
                self._vectors.move_to_end(key)
                return cached
        settings = EmbedSettings.from_environ(self._environ, model=dense.model, required=False,
                                              timeout=QUERY_TIMEOUT, max_retries=0)
        if settings is None:
            notes.append(f"lexical ranking only: the brain carries a vector index ({dense.model}) but no embeddings "
                         "endpoint is configured (set BRAIN_OPENAI_BASE_URL)")
            return None
        if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_UNREACHABLE:
            notes.append(f"lexical ranking only: {self._failure}")
            return None
        embedder = self._embedders.get(settings.base_url)
        if embedder is None:
            embedder = self._embedders[settings.base_url] = Embedder(settings)
        try:
            vector = embedder.embed([text], dimension=dense.dimension)[0]
        except BrainError as e:
            self._failed_at, self._failure = time.monotonic(), f"the query could not be embedded: {e.message}"
            notes.append(f"lexical ranking only: {self._failure}")
            return None
        self._failed_at = None
        with self._lock:
            self._vectors[key] = vector
            while len(self._vectors) > _QUERY_CACHE:
                self._vectors.popitem(last=False)
        return vector


def _fused(searcher: Searcher, rows: list[_Row], request: SearchRequest, dense: Dense, query: np.ndarray,
           make_row: Callable[..., _Row], passes: Callable[[Any, Any], bool], wanted: int) -> list[_Row]:
    lexical = {(r.block, r.locator or ""): (rank, r) for rank, r in enumerate(rows, start=1)}
    near: dict[tuple[str, str], tuple[int, float, _Row]] = {}
    for memory_type, block, locator, cosine in dense.ranked(query, request.limit * DENSE_PER_SLOT):
        if len(near) >= wanted:
            break
        if request.types and memory_type not in request.types:
            continue
        found = lexical.get((block, locator))
        if found is not None:
            near[(block, locator)] = (len(near) + 1, cosine, found[1])
            continue
        info = searcher._block(block)
        if info is None or not passes(info, request) or not searcher._drawn_from(info, request.evidence):
            continue
        if not _allowed(request, block):
            continue
        row = make_row(block, memory_type, info.accessible, info.source, locator or None, 0.0)
        near[(block, locator)] = (len(near) + 1, cosine, row)
    scored: dict[tuple[str, str], tuple[float, _Row, list[str]]] = {}
    for key, (rank, row) in lexical.items():
        scored[key] = (1 / (RRF_K + rank), row, [f"lexical #{rank} ({row.why or 'passage score'})"])
    for key, (rank, cosine, row) in near.items():
        score, kept, why = scored.get(key, (0.0, row, []))
        scored[key] = (score + 1 / (RRF_K + rank), kept, [*why, f"vector #{rank} (cosine {cosine:.3f})"])
    best = max((s for s, _, _ in scored.values()), default=0.0)
    out = []
    for score, row, why in scored.values():
        row.score = round(score / best, 6) if best > 0 else 0.0
        row.why = "reciprocal-rank fusion of " + " and ".join(why)
        out.append(row)
    out.sort(key=lambda r: (-r.score, r.block, r.locator or ""))
    return out[:wanted]


def _allowed(request: Any, block: str) -> bool:
    """The `--tag` restriction, when the request carries one (hex ids of the tagged episodes)."""
    tagged = getattr(request, "tagged", None)
    return tagged is None or block in tagged
