"""The ancestor of a reconciliation (§10.3) and the join's classification (§10.2).

Histories are walked through **all** parents, stopping silently at snapshots that are not stored or cannot
be read. Of the first snapshots of theirs found in our history, every one that is an ancestor of another is
discarded; exactly one must remain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from brain.errors import BrainError, RefusedError
from brain.identity import OciDigest
from brain.snapshot import Snapshot

if TYPE_CHECKING:
    from brain.brain import Brain

Join = Literal["up_to_date", "fast_forward", "reconcile"]


class History:
    """Snapshots of one brain read once each, with their whole histories (all parents) memoized."""

    def __init__(self, brain: Brain) -> None:
        self.brain = brain
        self._snapshots: dict[OciDigest, Snapshot | None] = {}
        self._closures: dict[OciDigest, frozenset[OciDigest]] = {}

    def snapshot(self, digest: OciDigest) -> Snapshot | None:
        """The snapshot, or None when it is not stored or not readable."""
        if digest not in self._snapshots:
            try:
                self._snapshots[digest] = self.brain.snapshot(digest) if self.brain.blobs.has(digest) else None
            except BrainError:
                self._snapshots[digest] = None
        return self._snapshots[digest]

    def parents(self, digest: OciDigest) -> tuple[OciDigest, ...]:
        snapshot = self.snapshot(digest)
        return () if snapshot is None else snapshot.parent_digests

    def closure(self, start: OciDigest) -> frozenset[OciDigest]:
        """`start` and every stored snapshot it descends from (all parents walked)."""
        cached = self._closures.get(start)
        if cached is not None:
            return cached
        seen: set[OciDigest] = set()
        frontier = [start]
        while frontier:
            digest = frontier.pop()
            if digest in seen:
                continue
            seen.add(digest)
            known = self._closures.get(digest)
            if known is not None and digest != start:
                seen |= known
                continue
            frontier.extend(p for p in self.parents(digest) if p not in seen)
        result = frozenset(seen)
        self._closures[start] = result
        return result

    def first_parent_chain(self, start: OciDigest, stop: OciDigest | None) -> list[OciDigest]:
        """Their snapshots above the ancestor to replay, newest first (§10.6 rebase, ours): the first-parent
        walk from `start`, taking only snapshots whose history contains `stop`, ending below `stop`."""
        chain: list[OciDigest] = []
        digest: OciDigest | None = start
        while digest is not None and digest != stop and digest not in chain:
            if stop is not None and stop not in self.closure(digest):
                break
            chain.append(digest)
            snapshot = self.snapshot(digest)
            digest = None if snapshot is None else snapshot.first_parent
        return chain


@dataclass(frozen=True)
class Ancestry:
    """What joining `theirs` into `ours` is: up to date, a fast-forward, or a reconciliation over `ancestor`
    (None: the empty brain, only for unrelated histories with the opt-in)."""

    join: Join
    ancestor: OciDigest | None


def trust_roots_agree(history: History, ours: OciDigest, theirs: OciDigest) -> None:
    """Different `trust_root` digests on the two heads: refused (a merge never unions two key lists)."""
    mine, other = history.snapshot(ours), history.snapshot(theirs)
    if mine is None or other is None:
        return
    a = None if mine.trust_root is None else mine.trust_root.digest
    b = None if other.trust_root is None else other.trust_root.digest
    if a != b:
        raise RefusedError(
            f"governance conflict: {theirs.short} has trust root {_short(b)}, our head {ours.short} has {_short(a)}",
            hint="a merge never unions two key lists: rotate one brain's trust root to the other's first "
                 "(`brain trust`)",
        )


def _short(digest: OciDigest | None) -> str:
    return "none (ungoverned)" if digest is None else digest.short


def ancestry(history: History, ours: OciDigest, theirs: OciDigest, *, allow_unrelated: bool = False) -> Ancestry:
    """Classify the join of `theirs` into `ours` and find the merge base (§10.2, §10.3)."""
    our_history = history.closure(ours)
    if theirs in our_history:
        return Ancestry("up_to_date", theirs)
    if ours in history.closure(theirs):
        return Ancestry("fast_forward", ours)
    candidates = _first_in(history, theirs, our_history)
    bases = [c for c in candidates if not any(c != other and c in history.closure(other) for other in candidates)]
    if not bases:
        if allow_unrelated:
            return Ancestry("reconcile", None)
        raise RefusedError(
            f"no common ancestor: {theirs.short} and our head {ours.short} share no stored snapshot",
            hint="pass --allow-unrelated to join independent histories (the ancestor is then the empty brain), "
            "or fetch the missing history",
        )
    if len(bases) > 1:
        shown = ", ".join(b.short for b in sorted(bases))
        raise RefusedError(
            f"multiple merge bases between {theirs.short} and our head {ours.short}: {shown} (criss-cross history)",
            hint="merge one base into the other first, then merge again",
        )
    return Ancestry("reconcile", bases[0])


def _first_in(history: History, theirs: OciDigest, ours: Iterable[OciDigest]) -> list[OciDigest]:
    """Snapshots of theirs' history at which each path first meets our history."""
    mine = frozenset(ours)
    found: list[OciDigest] = []
    seen: set[OciDigest] = set()
    frontier = [theirs]
    while frontier:
        digest = frontier.pop()
        if digest in seen:
            continue
        seen.add(digest)
        if digest in mine:
            found.append(digest)
            continue
        frontier.extend(p for p in history.parents(digest) if p not in seen)
    return sorted(set(found))


def merge_base(brain: Brain, a: OciDigest, b: OciDigest) -> OciDigest | None:
    """The one merge base of `a` and `b` (`a` itself when it is in b's history, and vice versa); None when
    they share no stored snapshot; several bases are refused (criss-cross history)."""
    history = History(brain)
    if a in history.closure(b):
        return a
    if b in history.closure(a):
        return b
    found = ancestry(history, a, b, allow_unrelated=True)
    return found.ancestor
