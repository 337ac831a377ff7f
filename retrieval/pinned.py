"""`search --at REF`: a read-only view of a brain whose head is pinned at another snapshot (an older one, a
tag's, another branch's), searched through an index built in memory for it (the sidecar index stays the
head's)."""

from __future__ import annotations

from brain.brain import Brain
from brain.identity import OciDigest
from brain.store import Head
from retrieval.index import SearchIndex
from retrieval.proofs import Prover
from retrieval.query import Searcher, Views


class PinnedBrain(Brain):
    """`brain` as if its head were `snapshot` (reads only: never hand it to a writer)."""

    def __init__(self, brain: Brain, snapshot: OciDigest) -> None:
        super().__init__(brain.path)
        self.pinned = snapshot

    def head(self) -> Head | None:
        """A head naming the pinned snapshot."""
        return Head.first(self.pinned)


def searcher_at(brain: Brain, snapshot: OciDigest, *, prover: Prover | None = None,
                views: Views | None = None) -> Searcher:
    """A searcher over `snapshot` of `brain` (its index built in memory on first use); `prover` and `views`
    may be warm ones of `brain` (both are keyed by content, so they serve any of its snapshots)."""
    if brain.snapshot_digest() == snapshot:
        return Searcher(brain, prover=prover, views=views)
    pinned = PinnedBrain(brain, snapshot)
    pinned.snapshot()  # refuses a snapshot that is not stored intact, before anything is built
    return Searcher(pinned, SearchIndex.open(pinned, in_memory=True), prover=prover, views=views)
