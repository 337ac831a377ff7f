"""`brain embed`: bring each module's travelling vector index (§5.2, §6.2) up to date with one model.

Incremental: vectors for (block, locator) units already in the newest index this model made for the module
(in the head's history) are reused; only the rest are sent to the endpoint. Each module with members gets a
payload (`brain.vectors`) stored as a blob, and one new snapshot records `embedding_model` and
`index_digest` on the module references (every other field verbatim). Nothing changes when every index
is already current. Any write that changes a module's membership drops its index (`brain.writer`): run
`brain embed` again after it, which re-sends only the new blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from brain.brain import Brain
from brain.errors import NotFoundError
from brain.blocks.memory_type import MemoryType
from brain.vectors import encode, normalized
from retrieval.embedder import Embedder
from retrieval.vectors import EMBEDDED, Unit, members, previous, units_of


@dataclass
class ModuleEmbedding:
    """What `embed` did to one module."""

    memory_type: str
    units: int = 0
    embedded: int = 0
    reused: int = 0
    index_digest: str | None = None


@dataclass
class EmbedReport:
    """What `embed` did: the model, its dimension, per module, and the snapshot it wrote (None: nothing new)."""

    model: str
    dimension: int | None = None
    modules: list[ModuleEmbedding] = field(default_factory=list)
    snapshot: str | None = None
    requests: int = 0


def embed_brain(brain: Brain, actor: str, embedder: Embedder, *, lock_timeout: float | None = None,
                on_progress: Callable[[str], None] | None = None) -> EmbedReport:
    """Embed what is not yet embedded by the embedder's model and record the indexes in one new snapshot."""
    model = embedder.settings.model
    report = EmbedReport(model=model)
    with brain.writer(actor, lock_timeout=lock_timeout) as writer:
        snapshot = writer.snapshot
        if snapshot is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to embed",
                                hint="ingest sources first (`brain ingest PATH`)")
        for memory_type in EMBEDDED:
            ref = snapshot.modules.get(memory_type)
            if ref is None or ref.block_count == 0:
                continue
            done = ModuleEmbedding(memory_type)
            report.modules.append(done)
            old = previous(brain, memory_type, model)
            reuse: dict[str, list[tuple[str, np.ndarray]]] = {}
            if old is not None and (report.dimension is None or old.dimension == report.dimension):
                report.dimension = old.dimension
                for (block, locator), vector in zip(old.keys, old.vectors, strict=True):
                    reuse.setdefault(block, []).append((locator, vector))
            entries: list[tuple[str, str, np.ndarray]] = []
            fresh: list[Unit] = []
            for hex_id in members(brain, snapshot, memory_type):
                if hex_id in reuse:
                    entries.extend((hex_id, loc, vec) for loc, vec in reuse[hex_id])
                    done.reused += len(reuse[hex_id])
                else:
                    fresh.extend(units_of(brain, memory_type, hex_id))
            if fresh:
                if on_progress is not None:
                    on_progress(f"{memory_type}: embedding {len(fresh)} unit(s) with {model}")
                vectors = normalized(embedder.embed([u.text for u in fresh], dimension=report.dimension))
                report.dimension = int(vectors.shape[1])
                entries.extend((u.block, u.locator, v) for u, v in zip(fresh, vectors, strict=True))
                done.embedded = len(fresh)
            done.units = len(entries)
            if report.dimension is None:
                continue  # no readable text in the module: no index
            data = encode(model, memory_type, report.dimension, entries)
            digest = writer.put_blob(data)
            done.index_digest = str(digest)
            if ref.index_digest != digest or ref.embedding_model != model:
                writer.adopt(MemoryType(memory_type), ref.model_copy(update={"embedding_model": model,
                                                                              "index_digest": digest}))
        written = writer.commit()
    report.snapshot = None if written is None else str(written)
    report.requests = embedder.requests
    return report
