"""`search --at REF`: a read-only view of a brain whose head is pinned at another snapshot (an older one, a
tag's, another branch's), searched through an index built in memory for it (the sidecar index stays the
head's)."""

from __future__ import annotations

from brain.brain import Brain
from brain.identity import OciDigest
from brain.store import Head
from retrieval.index import SearchIndex
from retrieval.query import Searcher


class PinnedBrain(Brain):
    """`brain` as if its head were `snapshot` (reads only: never hand it to a writer)."""

    def __init__(self, brain: Brain, snapshot: OciDigest) -> None:
        super().__init__(brain.path)
        self.pinned = snapshot

    def head(self) -> Head | None:
        """A head naming the pinned snapshot."""
        return Head.first(self.pinned)


def searcher_at(brain: Brain, snapshot: OciDigest) -> Searcher:
    """A searcher over `snapshot` of `brain` (its index built in memory on first use)."""
    if brain.snapshot_digest() == snapshot:
        return Searcher(brain)
    pinned = PinnedBrain(brain, snapshot)
    pinned.snapshot()  # refuses a snapshot that is not stored intact, before anything is built
    return Searcher(pinned, SearchIndex.open(pinned, in_memory=True))
