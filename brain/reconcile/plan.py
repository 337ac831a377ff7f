"""The plan of a reconciliation: trust roots, the ancestor, the per-module arithmetic, the judgement, and
what each strategy costs in attribution. Nothing here writes; `--plan` prints it, a halt stores its
questions, `continue` recomputes it with the answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MemoryType
from brain.concurrency import PARALLEL_THRESHOLD, parallel_map
from brain.errors import NotFoundError, RefusedError
from brain.identity import BlockId, OciDigest
from brain.module import read_blocks
from brain.reconcile.ancestor import History, Join, ancestry, trust_roots_agree
from brain.reconcile.arithmetic import ModuleMerge, Side, module_merges
from brain.reconcile.index import OurIndex
from brain.reconcile.judge import Judgement, judge
from brain.reconcile.state import Resolution, Strategy

if TYPE_CHECKING:
    from brain.brain import Brain

# Incoming blocks a forked reader decodes per round (past `parallel_map`'s threshold; fewer are read here): decoding
# is most of judging, and a decoded block crosses back pickled, at a third to half of its decoding's cost.
_READ_CHUNK = 1024
_READ_IN_WORKERS = PARALLEL_THRESHOLD


@dataclass(frozen=True)
class StrategyCost:
    """What a strategy does to attribution: how many snapshots it writes and whose history stays."""

    strategy: Strategy
    snapshots: int
    keeps_their_history: bool
    note: str


@dataclass
class MergePlan:
    """Everything a reconciliation would do, computed without writing."""

    ours: OciDigest
    theirs: tuple[OciDigest, ...]
    join: Join
    ancestor: OciDigest | None
    merges: list[ModuleMerge]
    judgement: Judgement | None
    replay: tuple[OciDigest, ...]
    """Their snapshots a rebase replays, oldest first."""

    @property
    def needs_answers(self) -> bool:
        j = self.judgement
        return j is not None and (bool(j.open_questions) or bool(j.withdrawn))

    def costs(self) -> list[StrategyCost]:
        """Attribution per strategy (§10.6)."""
        n = len(self.theirs)
        return [
            StrategyCost("merge", 1, True,
                         f"one snapshot with {n + 1} parents; their snapshots and signatures stay in history"),
            StrategyCost("squash", 1, False,
                         "one single-parent snapshot by us; their snapshots and signatures leave history"),
            StrategyCost("rebase", len(self.replay), False,
                         f"{len(self.replay)} new single-parent snapshot{'' if len(self.replay) == 1 else 's'} by us "
                         "replaying theirs above the ancestor; "
                         "their digests and signatures do not carry over"),
        ]


def plan_merge(
    brain: Brain,
    ours: OciDigest,
    theirs: Sequence[OciDigest],
    index: Callable[[], OurIndex],
    *,
    allow_unrelated: bool = False,
    resolutions: Mapping[BlockId, Resolution] | None = None,
    ancestor: OciDigest | None = None,
    pinned_ancestor: bool = False,
) -> MergePlan:
    """The plan for joining `theirs` (one or more held snapshots) into `ours`.

    `index` is called only when there are incoming blocks to judge. `pinned_ancestor` (continue) reuses the
    recorded ancestor instead of searching again.
    """
    history = History(brain)
    heads = tuple(dict.fromkeys(theirs))
    if not heads:
        raise RefusedError("nothing to merge: name a branch, snapshot or reference")
    for digest in heads:
        if history.snapshot(digest) is None:
            raise NotFoundError(f"snapshot {digest} is not held in {brain.path}",
                                hint="fetch it first (`brain fetch REF`), or check the digest with `brain log`")
        trust_roots_agree(history, ours, digest)
    joins = {d: ancestry(history, ours, d, allow_unrelated=allow_unrelated) for d in heads}
    pending = tuple(d for d in heads if joins[d].join != "up_to_date")
    if not pending:
        return MergePlan(ours, heads, "up_to_date", None, [], None, ())
    if len(pending) == 1 and joins[pending[0]].join == "fast_forward" and not pinned_ancestor:
        return MergePlan(ours, pending, "fast_forward", ours, [], None, ())
    bases = {joins[d].ancestor if joins[d].join == "reconcile" else ours for d in pending}
    if pinned_ancestor:
        bases = {ancestor}
    if len(bases) > 1:
        shown = ", ".join("the empty brain" if b is None else b.short for b in bases)
        raise RefusedError(f"the heads do not share one ancestor ({shown})",
                           hint="merge them one at a time, or fetch the history that joins them")
    base = next(iter(bases))
    base_snapshot = None if base is None else history.snapshot(base)
    if base is not None and base_snapshot is None:
        raise NotFoundError(f"the ancestor {base} is not held", hint="fetch its history, then merge again")
    our_snapshot = history.snapshot(ours)
    if our_snapshot is None:
        raise NotFoundError(f"our head {ours} is not readable")
    sides = [Side(ours, our_snapshot, "our head")]
    for i, digest in enumerate(pending):
        snapshot = history.snapshot(digest)
        assert snapshot is not None  # checked above
        sides.append(Side(digest, snapshot, "their" if len(pending) == 1 else f"their #{i + 1}"))
    merges = module_merges(brain, base_snapshot, base, sides)
    tombstoned = frozenset(b for side in sides[1:] for ref in side.snapshot.modules.values()
                           for b in ref.tombstones or ())
    from brain.reconcile.index import EmptyIndex

    has_incoming = any(m.incoming for m in merges) or any(m.excluded for m in merges)

    judgement = judge(
        merges,
        index() if has_incoming else EmptyIndex(),
        lambda ids: parallel_map(read_blocks, brain.path, ids, threshold=_READ_IN_WORKERS, chunk=_READ_CHUNK),
        theirs=pending,
        blob_size=_blob_size(brain),
        resolutions=resolutions,
        tombstoned=tombstoned,
    )
    replay = tuple(reversed(history.first_parent_chain(pending[0], base))) if len(pending) == 1 else ()
    return MergePlan(ours, pending, "reconcile", base, merges, judgement, replay)


def _blob_size(brain: Brain) -> Callable[[OciDigest], int | None]:
    def size(digest: OciDigest) -> int | None:
        return brain.blobs.size(digest) if brain.blobs.has(digest) else None
    return size


def module_report(plan: MergePlan) -> list[dict[str, object]]:
    """Per module: what each side added and removed (counts and ids), and the result's size."""
    rows: list[dict[str, object]] = []
    for merge in plan.merges:
        result = plan.judgement.result.get(merge.memory_type, merge.result) if plan.judgement else merge.result
        rows.append({
            "module": merge.memory_type.value,
            "ancestor": len(merge.base),
            "added": [sorted(f"sha256:{h}" for h in ids) for ids in merge.added],
            "removed": [sorted(f"sha256:{h}" for h in ids) for ids in merge.removed],
            "result": len(result),
        })
    return rows


def withdrawn_of(plan: MergePlan) -> dict[MemoryType, tuple[BlockId, ...]]:
    return {} if plan.judgement is None else plan.judgement.withdrawn
