"""Dense ranking fused with the lexical one (reciprocal-rank fusion), when the query can be embedded.

A snapshot that carries vector indexes (`retrieval.vectors`) is ranked twice: the lexical candidates
(`retrieval.query`) and the units nearest to the query's embedding, made by the same model through the
configured endpoint (`retrieval.embedder`: `BRAIN_OPENAI_BASE_URL`/`OPENAI_BASE_URL`, the key from
`BRAIN_OPENAI_API_KEY`/`OPENAI_API_KEY`; the model is the index's own). Each candidate scores
`1/(RRF_K + rank)` per list it is in; the sum, divided by the best, is its score. When the query cannot be
embedded (no endpoint configured, endpoint unreachable or refusing, an index that lies, another
dimension), the answer is the lexical one with one note saying why.

Cheap in a warm process (serve, the sdk, a benchmark loop), whatever the number of searchers: the state
below is the process's, not a searcher's — one `openai` client per endpoint and model (its connections
kept alive), when each endpoint last failed, the last `QUERY_CACHE` query vectors, and each module's
checked index (`retrieval.vectors.loaded`, once per index digest). Nothing here imports `numpy` or
`openai` until a snapshot carries an index and a query is to be embedded.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from brain.errors import BrainError
from brain.identity import OciDigest
from brain.snapshot import Snapshot

if TYPE_CHECKING:
    import numpy as np

    from retrieval.embedder import Embedder, EmbedSettings
    from retrieval.vectors import Dense

# `retrieval.query` hands its searcher, rows, request and filter in (no import back: no cycle).
Searcher = Any
SearchRequest = Any
_Row = Any

RRF_K = 60
DENSE_PER_SLOT = 16  # dense candidates fetched per result slot (before filters)
QUERY_TIMEOUT = 5.0
RETRY_UNREACHABLE = 30.0  # seconds without trying an endpoint that just failed
QUERY_CACHE = 512  # query vectors kept per process
MAX_ENDPOINTS = 8  # clients kept per process (the oldest is closed)


class _Endpoint:
    """One endpoint and model as this process uses it for queries: one client, and when it last failed."""

    def __init__(self, settings: EmbedSettings) -> None:
        from retrieval.embedder import Embedder

        self.embedder: Embedder = Embedder(settings)
        self.failed_at: float | None = None
        self.failure = ""


_lock = threading.Lock()
_endpoints: OrderedDict[EmbedSettings, _Endpoint] = OrderedDict()
_vectors: OrderedDict[tuple[str, str, int, str], np.ndarray] = OrderedDict()  # (endpoint, model, D, text)


def forget() -> None:
    """Close the process's clients and drop its cached query vectors, failures and indexes (a new process)."""
    from retrieval.vectors import forget as forget_indexes

    with _lock:
        for endpoint in _endpoints.values():
            endpoint.embedder.close()
        _endpoints.clear()
        _vectors.clear()
    forget_indexes()


def _endpoint(settings: EmbedSettings) -> _Endpoint:
    with _lock:
        found = _endpoints.get(settings)
        if found is not None:
            _endpoints.move_to_end(settings)
            return found
    made = _Endpoint(settings)  # outside the lock: the first one imports openai
    with _lock:
        found = _endpoints.setdefault(settings, made)
        _endpoints.move_to_end(settings)
        while len(_endpoints) > MAX_ENDPOINTS:
            _, dropped = _endpoints.popitem(last=False)
            dropped.embedder.close()
    if found is not made:
        made.embedder.close()
    return found


class DenseSearch:
    """Per searcher: the indexes of the last snapshot it searched (the process caches the rest)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ
        self._dense: tuple[OciDigest, Dense | None] | None = None

    def close(self) -> None:
        """Nothing to close: clients are the process's (`forget` closes them)."""

    def indexes(self, searcher: Searcher, digest: OciDigest, snapshot: Snapshot) -> Dense | None:
        """The snapshot's indexes (checked once per index digest in the process)."""
        cached = self._dense
        if cached is None or cached[0] != digest:
            if not any(ref.index_digest is not None for ref in snapshot.modules.values()):
                cached = (digest, None)  # no index: nothing to import, nothing to read
            else:
                from retrieval.vectors import dense_of

                cached = (digest, dense_of(searcher.brain, snapshot))
            self._dense = cached
        return cached[1]

    def fuse(self, searcher: Searcher, rows: list[_Row], request: SearchRequest, digest: OciDigest,
             snapshot: Snapshot, notes: list[str], *, make_row: Callable[..., _Row],
             passes: Callable[[Any, Any], bool], wanted: int) -> list[_Row]:
        """`rows` fused with the dense ranking; unchanged (with a note in `notes`) when there is none to fuse."""
        dense = self.indexes(searcher, digest, snapshot)
        if dense is None:
            return rows
        notes.extend(dense.notes)
        if not dense.modules:
            return rows
        query = self._query_vector(dense, request.query, notes)
        if query is None:
            return rows
        if dense.stale:
            notes.append(f"the vector index does not cover {', '.join(dense.stale)} (changed since `brain embed` "
                         "ran; run it again, it sends only the new blocks): those blocks are ranked lexically only")
        return _fused(searcher, rows, request, dense, query, make_row, passes, wanted)

    def _query_vector(self, dense: Dense, text: str, notes: list[str]) -> np.ndarray | None:
        from retrieval.embedder import EmbedSettings

        settings = EmbedSettings.from_environ(self._environ, model=dense.model, required=False,
                                              timeout=QUERY_TIMEOUT, max_retries=0)
        if settings is None:
            notes.append(f"lexical ranking only: the brain carries a vector index ({dense.model}) but no embeddings "
                         "endpoint is configured (set BRAIN_OPENAI_BASE_URL)")
            return None
        key = (settings.base_url, dense.model, dense.dimension, text)
        with _lock:
            cached = _vectors.get(key)
            if cached is not None:
                _vectors.move_to_end(key)
                return cached
        endpoint = _endpoint(settings)
        failed_at = endpoint.failed_at
        if failed_at is not None and time.monotonic() - failed_at < RETRY_UNREACHABLE:
            notes.append(f"lexical ranking only: {endpoint.failure}")
            return None
        try:
            vector = endpoint.embedder.embed([text], dimension=dense.dimension)[0]
        except BrainError as e:
            endpoint.failure = f"the query could not be embedded: {e.message}"
            endpoint.failed_at = time.monotonic()
            notes.append(f"lexical ranking only: {endpoint.failure}")
            return None
        endpoint.failed_at = None
        vector.flags.writeable = False
        with _lock:
            _vectors[key] = vector
            while len(_vectors) > QUERY_CACHE:
                _vectors.popitem(last=False)
        return vector


def _fused(searcher: Searcher, rows: list[_Row], request: SearchRequest, dense: Dense, query: np.ndarray,
           make_row: Callable[..., _Row], passes: Callable[[Any, Any], bool], wanted: int) -> list[_Row]:
    lexical = {(r.block, r.locator or ""): (rank, r) for rank, r in enumerate(rows, start=1)}
    nearest = [(t, b, loc, c) for t, b, loc, c in dense.ranked(query, request.limit * DENSE_PER_SLOT)
               if not request.types or t in request.types]
    unread = [b for _, b, loc, _ in nearest if (b, loc) not in lexical]
    seen = fetched = 0
    near: dict[tuple[str, str], tuple[int, float, _Row]] = {}
    for memory_type, block, locator, cosine in nearest:
        if len(near) >= wanted:
            break
        found = lexical.get((block, locator))
        if found is not None:
            near[(block, locator)] = (len(near) + 1, cosine, found[1])
            continue
        if seen == fetched:
            # The candidates the lexical ranking did not read, as many as may still be needed, in one statement.
            fetched = seen + max(wanted - len(near), 8)
            searcher.prefetch(unread[seen:fetched])
        seen += 1
        info = searcher._block(block)
        if info is None or not passes(info, request) or not searcher._drawn_from(info, request.evidence):
            continue
        if not _allowed(request, block):
            continue
        row = make_row(block, memory_type, info.accessible, info.source, locator or None, 0.0)
        near[(block, locator)] = (len(near) + 1, cosine, row)
    searcher.prefetch([row.source for _, _, row in near.values()])  # grouping and evidence read them
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
