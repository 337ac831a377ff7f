"""`BrainReader.search`: the `retrieval` package's ranked search with verified evidence, as export records.

The index (SQLite FTS5, kept by `retrieval` under `boltzmann/search/`) is brought to the head on the first
query and kept open between queries. A hit carries the block as a `KnowledgeRecord`, the score, and the
evidence bundle `retrieval` verified (source origin, locator, excerpt).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from brain.frozen import FrozenModel
from brain.identity import BlockId
from export.records import KnowledgeRecord

if TYPE_CHECKING:
    from brain.brain import Brain


class BrainReader(Protocol):
    """What searching needs of `export.reader.BrainReader` (named here so this module, which the reader
    imports when it first searches, does not import the reader back)."""

    brain: Brain

    def show(self, block: BlockId | str) -> KnowledgeRecord: ...  # noqa: D102


class Hit(FrozenModel):
    """One search result: the block, its score, its verified evidence bundle (origin, locator, excerpt)."""

    record: KnowledgeRecord
    score: float
    evidence: list[dict[str, Any]]
    verified: bool


def search(
    reader: BrainReader, query: str, k: int = 5, *, types: tuple[str, ...] = (), subject: str | None = None
) -> list[Hit]:
    """The `k` best matches for `query` among the current snapshot's accessible blocks."""
    from retrieval.query import Searcher, SearchRequest

    searcher = reader.__dict__.get("_searcher")
    if searcher is None:
        searcher = reader.__dict__["_searcher"] = Searcher(reader.brain)
    result = searcher.search(SearchRequest(query=query, types=tuple(types), subject=subject, limit=k))
    hits = []
    for match in result.matches:
        record = reader.show(BlockId.parse(match.block))
        hits.append(Hit(
            record=record, score=match.score, verified=match.verified,
            evidence=[e.model_dump(mode="json") for e in match.evidence],
        ))  # fmt: skip
    return hits
