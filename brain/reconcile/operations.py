"""The reconciliation operations the CLI calls, one function each: `merge`, `status`, `resolve`,
`accept_removals`, `continue_reconcile`, `abort`. Each takes the writer lock itself (the state is read and
written only under it) and returns a small outcome to render.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from brain.blocks import Block
from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import ProvenanceBlock
from brain.errors import ConflictError, InvalidInputError, NotFoundError, RefusedError, UsageError
from brain.identity import BlockId, OciDigest, utc_timestamp
from brain.lifecycle.records import actor_of
from brain.module import read_block
from brain.reconcile.ancestor import History
from brain.reconcile.arithmetic import ModuleMerge
from brain.reconcile.commit import commit_merge, commit_rebase, fast_forward, journal_entry
from brain.reconcile.index import OurIndex
from brain.reconcile.journal import append_entry
from brain.reconcile.judge import Judgement, judge
from brain.reconcile.plan import MergePlan, plan_merge
from brain.reconcile.records import cascade_records, prefer_records
from brain.reconcile.state import (
    AcceptedRemovals,
    ReconcileState,
    Resolution,
    Strategy,
    clear_state,
    read_state,
    write_state,
)

if TYPE_CHECKING:
    from brain.brain import Brain
    from brain.snapshot import Snapshot
    from brain.writer import Writer

IndexOf = Callable[[OciDigest], OurIndex]
AfterCommit = Callable[[OciDigest, OciDigest, list[Block]], None]
"""Told, under the writer lock, (our head, the new head, the blocks that entered): the CLI keeps the lineage
log current with it."""
FastForward = Literal["auto", "only", "never"]
Kind = Literal["up_to_date", "fast_forward", "merged", "halted", "planned"]


@dataclass
class Outcome:
    """What a merge (or continue) did."""

    kind: Kind
    plan: MergePlan
    strategy: Strategy
    snapshots: tuple[OciDigest, ...] = ()
    state: ReconcileState | None = None

    @property
    def head(self) -> OciDigest | None:
        return self.snapshots[-1] if self.snapshots else None


def merge(
    brain: Brain,
    actor: str,
    theirs: Sequence[OciDigest],
    index_of: IndexOf,
    *,
    strategy: Strategy = "merge",
    reason: str,
    plan_only: bool = False,
    fast_forward_mode: FastForward = "auto",
    allow_unrelated: bool = False,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    authorize: Callable[[OciDigest], None] | None = None,
    after_commit: AfterCommit | None = None,
) -> Outcome:
    """Join `theirs` into the head (§10.2-§10.6); `plan_only` writes nothing."""
    if not reason.strip():
        raise UsageError("a merge needs --reason TEXT (it is recorded with the result)")
    if plan_only:
        ours = _head_or_refuse(brain.snapshot_digest())
        plan = _plan(brain, ours, theirs, index_of, allow_unrelated, fast_forward_mode)
        if plan.join != "reconcile":
            return Outcome(plan.join, plan, strategy)  # reported as such; nothing to review
        return Outcome("planned", plan, strategy)
    with brain.writer(actor, lock_timeout=lock_timeout, on_wait=on_wait) as writer:
        ours = _head_or_refuse(None if writer.head is None else writer.head.snapshot)
        plan = _plan(brain, ours, theirs, index_of, allow_unrelated, fast_forward_mode)
        if plan.join == "up_to_date":
            return Outcome("up_to_date", plan, strategy)
        for digest in plan.theirs if plan.join != "up_to_date" else ():
            _authenticate(brain, digest)
            if authorize is not None:
                authorize(digest)
        if plan.join == "fast_forward":
            return Outcome("fast_forward", plan, strategy, (fast_forward(writer, plan.theirs[0]),))
        if fast_forward_mode == "only":
            raise RefusedError(f"not a fast-forward: {plan.theirs[0].short} has diverged from our head {ours.short}",
                               hint="drop --ff-only to reconcile (see `brain merge --plan` first)")
        assert plan.judgement is not None
        if plan.needs_answers:
            state = _halt_state(plan, strategy, writer.actor, reason)
            write_state(brain.path, state)
            return Outcome("halted", plan, strategy, state=state)
        snapshots = _commit(writer, plan, plan.judgement, strategy, reason, None, index_of, after_commit)
        return Outcome("merged", plan, strategy, snapshots)


def _authenticate(brain: Brain, theirs: OciDigest) -> None:
    """§9.7 for the head a governed brain would move to or merge in (§10.8 item 6): exit 6 unless authorized
    (the trust roots were compared first, so both sides are governed alike)."""
    from brain.branches.guard import authenticate_move

    authenticate_move(brain, theirs, f"merge {theirs.short}")


def _head_or_refuse(head: OciDigest | None) -> OciDigest:
    if head is None:
        raise NotFoundError("the brain is empty: there is nothing to merge into",
                            hint="pull the branch instead (`brain pull REF`), or ingest first")
    return head


def _plan(brain: Brain, ours: OciDigest, theirs: Sequence[OciDigest], index_of: IndexOf,
          allow_unrelated: bool, mode: FastForward, resolutions: Mapping[BlockId, Resolution] | None = None,
          ancestor: OciDigest | None = None, pinned: bool = False) -> MergePlan:
    plan = plan_merge(brain, ours, theirs, lambda: index_of(ours), allow_unrelated=allow_unrelated,
                      resolutions=resolutions, ancestor=ancestor, pinned_ancestor=pinned)
    if plan.join == "fast_forward" and mode == "never":
        plan = plan_merge(brain, ours, theirs, lambda: index_of(ours), resolutions=resolutions,
                          ancestor=ours, pinned_ancestor=True)
    return plan


def _halt_state(plan: MergePlan, strategy: Strategy, actor: str, reason: str) -> ReconcileState:
    if len(plan.theirs) != 1 or plan.ancestor is None:
        what = "an n-way merge" if len(plan.theirs) != 1 else "a merge of unrelated histories"
        raise RefusedError(
            f"{what} needs answers ({questions(plan)}), and reconcile.json can hold only one head over a stored "
            "ancestor: nothing was written",
            hint="merge the heads one at a time (each can halt and be resolved), then merge again",
        )
    return ReconcileState(theirs=plan.theirs[0], ancestor=plan.ancestor, strategy=strategy,
                          actor=actor_of(actor), reason=reason, head=plan.ours)


def questions(plan: MergePlan) -> str:
    """What a halted plan needs answered, in words (`1 incoming block to admit or reject and ...`)."""
    j = plan.judgement
    if j is None:
        return "nothing"
    parts = []
    if j.open_questions:
        parts.append(f"{counted(len(j.open_questions), 'incoming block')} to admit or reject")
    count = sum(len(ids) for ids in j.withdrawn.values())
    if count:
        parts.append(f"{counted(count, 'withdrawn block')} of ours to accept")
    return " and ".join(parts) or "nothing"


def counted(n: int, noun: str) -> str:
    """`1 block`, `2 blocks`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def halt_line(outcome: Outcome) -> str:
    """The one line a halted merge ends with."""
    return (f"reconciliation halted: {questions(outcome.plan)}; nothing was committed "
            "(see `brain reconcile status`, then `brain reconcile resolve`/`accept-removals` and `continue`)")


# --- the halted reconciliation --------------------------------------------------------------------------


def status(brain: Brain, index_of: IndexOf) -> tuple[ReconcileState, MergePlan]:
    """The open reconciliation and its plan recomputed with the answers so far (read-only)."""
    state = _open_state(brain)
    return state, _replan(brain, state, index_of)


def next_steps(plan: MergePlan, state: ReconcileState) -> list[str]:
    """What the open reconciliation needs next, one command per line, as `brain reconcile status` says it."""
    j = plan.judgement
    steps = [f"`brain reconcile resolve {v.block.short} --admit|--reject [--reason TEXT]` ({v.verdict}"
             + (f"; or --prefer one of {', '.join(c.short for c in v.contenders)})" if v.contenders else ")")
             for v in (j.open_questions if j is not None else ())]
    withdrawn = {} if j is None else j.withdrawn
    accepted = state.accepted_removals
    if withdrawn and (accepted is None or {t: set(ids) for t, ids in accepted.blocks.items()}
                      != {t: set(ids) for t, ids in withdrawn.items()}):
        canonical = " --allow-canonical" if MemoryType.CANONICAL in withdrawn else ""
        steps.append(f"`brain reconcile accept-removals --reason TEXT{canonical}` "
                     f"(withdraws {counted(sum(len(ids) for ids in withdrawn.values()), 'block')} of ours)")
    if not steps:
        steps.append("`brain reconcile continue` commits it")
    steps.append("`brain reconcile abort` discards it (nothing was committed)")
    return steps


def _open_state(brain: Brain) -> ReconcileState:
    state = read_state(brain.path)
    if state is None:
        raise NotFoundError(f"no reconciliation is open in {brain.path}", hint="`brain merge` starts one")
    return state


def _replan(brain: Brain, state: ReconcileState, index_of: IndexOf) -> MergePlan:
    return _plan(brain, state.head, [state.theirs], index_of, False, "auto", state.resolutions,
                 state.ancestor, pinned=True)


def resolve(brain: Brain, actor: str, block: str, kind: Literal["admit", "reject", "prefer"], index_of: IndexOf, *,
            prefer: str | None = None, reason: str | None = None, lock_timeout: float | None = None,
            ) -> tuple[BlockId, Resolution]:
    """Answer one open question (§10.6): the block answered (`block` may be a prefix) and the answer."""
    with brain.writer(actor, lock_timeout=lock_timeout, reconciling=True) as writer:
        state = _open_state(brain)
        plan = _replan(brain, state, index_of)
        assert plan.judgement is not None
        verdicts = plan.judgement.verdicts
        target = _match(block, [v.block for v in verdicts.values() if v.open], "open question")
        verdict = verdicts[target]
        winner: BlockId | None = None
        if kind == "admit" and verdict.verdict.value not in ("contradicted", "pending_review"):
            raise RefusedError(f"block {target.short} was {verdict.verdict.value} ({', '.join(verdict.codes)}): "
                               "only contradicted or pending_review blocks can be admitted",
                               hint=f"`brain reconcile resolve {target.short} --reject`")
        if kind == "prefer":
            if not verdict.contenders:
                raise RefusedError(f"block {target.short} is no competing supersession: --prefer does not apply",
                                   hint="use --admit or --reject")
            winner = _match(prefer or "", list(verdict.contenders), "contender")
        answer = Resolution(kind=kind, prefer=winner, actor=actor_of(writer.actor), reason=reason or None,
                            at=utc_timestamp())
        write_state(brain.path, state.model_copy(update={"resolutions": {**state.resolutions, target: answer}}))
        return target, answer


def _match(text: str, ids: Sequence[BlockId], what: str) -> BlockId:
    needle = text.removeprefix("sha256:").lower()
    found = [b for b in ids if needle and b.hex.startswith(needle)]
    if len(found) != 1:
        shown = ", ".join(b.short for b in ids[:8]) or "none"
        problem = "matches several" if found else "matches no"
        raise InvalidInputError(f"{text!r} {problem} {what} (open: {shown})", hint="see `brain reconcile status`")
    return found[0]


def accept_removals(brain: Brain, actor: str, reason: str, index_of: IndexOf, *, allow_canonical: bool = False,
                    lock_timeout: float | None = None) -> AcceptedRemovals:
    """Accept the plan's withdrawn blocks, exactly, in one statement. The retention policy holds here as for a
    drop (§7.4, §10.8 item 4): withdrawing canonical blocks of ours needs `allow_canonical`."""
    if not reason.strip():
        raise UsageError("accepting removals needs --reason TEXT (it is recorded in the removal records)")
    with brain.writer(actor, lock_timeout=lock_timeout, reconciling=True) as writer:
        state = _open_state(brain)
        plan = _replan(brain, state, index_of)
        assert plan.judgement is not None
        if not plan.judgement.withdrawn:
            raise RefusedError("this reconciliation withdraws none of our blocks: there is nothing to accept")
        sources = plan.judgement.withdrawn.get(MemoryType.CANONICAL, ())
        if sources and not allow_canonical:
            raise RefusedError(
                f"accepting would withdraw {counted(len(sources), 'canonical block')} of ours "
                f"(first {sources[0].short}): the "
                "retention policy keeps sources", hint="pass --allow-canonical to accept their removal too")
        accepted = AcceptedRemovals(blocks=dict(plan.judgement.withdrawn), actor=actor_of(writer.actor),
                                    reason=reason, at=utc_timestamp())
        write_state(brain.path, state.model_copy(update={"accepted_removals": accepted}))
        return accepted


def abort(brain: Brain, actor: str, *, lock_timeout: float | None = None) -> ReconcileState | None:
    """Discard the open reconciliation (the file is deleted)."""
    with brain.writer(actor, lock_timeout=lock_timeout, reconciling=True):
        try:
            state = read_state(brain.path)
        except Exception:  # noqa: BLE001 - a hostile state is discarded all the same
            state = None
        if not clear_state(brain.path):
            raise NotFoundError(f"no reconciliation is open in {brain.path}")
        return state


def continue_reconcile(brain: Brain, actor: str, index_of: IndexOf, *, lock_timeout: float | None = None,
                       after_commit: AfterCommit | None = None) -> Outcome:
    """Recompute the plan with the answers and commit it; refuses while anything is open or the head moved."""
    with brain.writer(actor, lock_timeout=lock_timeout, reconciling=True) as writer:
        state = _open_state(brain)
        head = None if writer.head is None else writer.head.snapshot
        if head != state.head:
            raise ConflictError(f"the head moved since the reconciliation started ({state.head.short} → "
                                f"{'none' if head is None else head.short})",
                                hint="`brain reconcile abort`, then merge again")
        plan = _replan(brain, state, index_of)
        judgement = plan.judgement
        assert judgement is not None
        if judgement.open_questions:
            first = judgement.open_questions[0]
            raise RefusedError(f"{counted(len(judgement.open_questions), 'question')} unanswered "
                               f"(first: {first.block.short}, {first.verdict.value})",
                               hint="`brain reconcile status`, then `brain reconcile resolve`")
        if judgement.withdrawn:
            accepted = state.accepted_removals
            if accepted is None or {t: tuple(v) for t, v in accepted.blocks.items()} != judgement.withdrawn:
                raise RefusedError("the withdrawn blocks are not accepted (or the plan changed since)",
                                   hint="`brain reconcile accept-removals --reason TEXT`")
        snapshots = _commit(writer, plan, judgement, state.strategy, state.reason, state, index_of, after_commit)
        clear_state(brain.path)
        return Outcome("merged", plan, state.strategy, snapshots, state)


# --- committing ------------------------------------------------------------------------------------------


def _commit(writer: Writer, plan: MergePlan, judgement: Judgement, strategy: Strategy, reason: str,
            state: ReconcileState | None, index_of: IndexOf, after_commit: AfterCommit | None = None,
            ) -> tuple[OciDigest, ...]:
    records: list[ProvenanceBlock] = []
    written = _write(writer, plan, judgement, strategy, reason, state, index_of, records)
    if after_commit is not None and written:
        after_commit(plan.ours, written[-1], [*judgement.entering(), *records])
    return written


def _write(writer: Writer, plan: MergePlan, judgement: Judgement, strategy: Strategy, reason: str,
           state: ReconcileState | None, index_of: IndexOf, added: list[ProvenanceBlock]) -> tuple[OciDigest, ...]:
    """Commit with the strategy; the records written are appended to `added`."""
    brain = writer.brain
    theirs = plan.theirs[0]
    accepted = state.accepted_removals if state is not None else None
    resolutions = state.resolutions if state is not None else {}
    history = History(brain)
    sides: list[Snapshot] = [s for d in (plan.ours, *plan.theirs) if (s := history.snapshot(d)) is not None]
    requester = state.actor if state is not None else actor_of(writer.actor)
    make_entry = journal_entry(plan, strategy, requester.model_dump(mode="json", exclude_none=True), reason,
                               utc_timestamp(), judgement,
                               None if state is None else state.model_dump(mode="json", exclude_none=True))

    def journal(snapshot: OciDigest) -> None:
        append_entry(brain.path, make_entry(snapshot))

    def records_for(j: Judgement, already: set[BlockId]) -> list[ProvenanceBlock]:
        cascaded = {t: tuple(b for b in ids if b not in already) for t, ids in j.withdrawn_by_cascade.items()}
        found = cascade_records(cascaded, theirs, accepted) if accepted is not None else []
        found += prefer_records(j.prefer, resolutions, theirs)
        added.extend(found)
        return found

    if strategy != "rebase" or not plan.replay:
        records = records_for(judgement, set())
        return (commit_merge(writer, plan, judgement, records, sides, squash=strategy != "merge", journal=journal),)
    refused = {v.block.hex for v in judgement.verdicts.values() if not v.enters}
    steps: list[tuple[list[ModuleMerge], Mapping[MemoryType, frozenset[str]], list[ProvenanceBlock]]] = []
    recorded: set[BlockId] = set()
    ours_index: list[OurIndex] = []

    def index() -> OurIndex:  # one index of our head for every step
        if not ours_index:
            ours_index.append(index_of(plan.ours))
        return ours_index[0]

    for step in plan.replay:
        step_plan = plan_merge(brain, plan.ours, [step], index, resolutions=resolutions,
                               ancestor=plan.ancestor, pinned_ancestor=True)
        step_j = step_plan.judgement
        if step_plan.join != "reconcile" or step_j is None:
            continue
        result = {t: frozenset(b for b in ids if b not in refused) for t, ids in step_j.result.items()}
        step_j = step_j.with_result(result) if step != plan.theirs[0] else judgement
        records = records_for(step_j, recorded) if step == plan.theirs[0] else \
            (cascade_records({t: tuple(b for b in ids if b not in recorded)
                              for t, ids in step_j.withdrawn_by_cascade.items()},
                             theirs, accepted) if accepted is not None else [])
        if step != plan.theirs[0]:
            added.extend(records)
        recorded |= {b for ids in step_j.withdrawn_by_cascade.values() for b in ids}
        steps.append((step_plan.merges, step_j.result, records))
    return commit_rebase(writer, steps, sides + [s for d in plan.replay if (s := history.snapshot(d)) is not None],
                         journal)


__all__ = ["Outcome", "abort", "accept_removals", "continue_reconcile", "counted", "halt_line", "judge", "merge",
           "next_steps", "questions", "read_block", "resolve", "status"]
