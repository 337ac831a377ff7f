"""The lifecycle use cases `brain drop`, `brain supersede` and `brain demote` run, and their Python twins:
plan on the head under the writer lock, write the plan's records in one snapshot through the writer, tell
the lineage what was added, sign the new head.

What a plan needs to know about the ledger comes from a `Lineage`: `LedgerLineage` here reads the full
ledger (small brains, tests); `ingest.lifecycle.LOG_LINEAGE` answers from the lineage log (what the CLI and
`sdk.Brain` use) and appends each commit to it, so the next command finds it current.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from brain.blocks import Block, MemoryType
from brain.blocks.provenance import Actor, Producer, ProducerKind, ProvenanceBlock
from brain.brain import Brain
from brain.errors import BrainError, NotFoundError, UsageError
from brain.head_signing import HeadSigning, SignedHead
from brain.identity import BlockId, OciDigest, utc_timestamp
from brain.ledger import record_of
from brain.lifecycle.apply import commit_records
from brain.lifecycle.describe import title_of
from brain.lifecycle.drop import DropPlan, Members, plan_drop
from brain.lifecycle.graph import DependencyGraph, LedgerGraph
from brain.lifecycle.records import actor_of, demotion_record, supersession_record
from brain.lifecycle.stance import plan_demotion, plan_supersession
from brain.snapshot import TrustScope

if TYPE_CHECKING:
    from brain.authn.signer import Signer

Plan = TypeVar("Plan")
OnWait = Callable[[str], None]
Select = Callable[[Members, DependencyGraph], Sequence[BlockId]]
"""Which blocks a drop names, chosen on the head the lock found (its members and its dependency graph)."""


class Lineage(Protocol):
    """Where lifecycle plans read the ledger's edges from, and what hears about each commit."""

    def graph(self, brain: Brain, snapshot: OciDigest, *, persist: bool = True) -> DependencyGraph:
        """The dependency graph of `snapshot` (`persist`: a cache may be rewritten while reading)."""
        ...

    def committed(self, brain: Brain, parent: OciDigest, snapshot: OciDigest, added: Iterable[Block]) -> None:
        """`snapshot` was committed on `parent`, adding `added` (called under the writer lock)."""
        ...


class LedgerLineage:
    """`Lineage` over the full ledger, read from every provenance block; it keeps nothing between commits."""

    def graph(self, brain: Brain, snapshot: OciDigest, *, persist: bool = True) -> DependencyGraph:
        return LedgerGraph(brain.ledger(snapshot))

    def committed(self, brain: Brain, parent: OciDigest, snapshot: OciDigest, added: Iterable[Block]) -> None:
        return None


LEDGER_LINEAGE = LedgerLineage()


class Titles(Mapping[BlockId, str]):
    """Block titles read on demand (for refusal messages, which name one or two blocks)."""

    def __init__(self, brain: Brain) -> None:
        self.brain = brain

    def __getitem__(self, block_id: BlockId) -> str:
        try:
            return title_of(self.brain.resolve(block_id))
        except BrainError:
            raise KeyError(block_id) from None

    def __iter__(self) -> Iterator[BlockId]:
        return iter(())

    def __len__(self) -> int:
        return 0


# --- drop ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DropOutcome:
    """A drop's plan (`removals` by module) and, unless it was a dry run, the snapshot it wrote."""

    plan: DropPlan
    graph: DependencyGraph
    dry_run: bool
    snapshot: OciDigest | None = None
    signed: SignedHead | None = None

    @property
    def removals(self) -> dict[str, list[BlockId]]:
        """Block ids removed (or that would be) per module name."""
        return {str(t): list(ids) for t, ids in self.plan.removals.items()}


def drop(
    brain: Brain,
    select: Select,
    *,
    actor: str | None,
    reason: str,
    policy: str | None = None,
    allow_canonical: bool = False,
    dry_run: bool = False,
    signer: Signer | None = None,
    lineage: Lineage = LEDGER_LINEAGE,
    confirm: Callable[[DropPlan, DependencyGraph], None] | None = None,
    lock_timeout: float | None = None,
    on_wait: OnWait | None = None,
) -> DropOutcome:
    """Drop what `select` names and its cascade (§7.3, §7.4) in one snapshot, one removal record per module.

    A dry run plans on the head without the lock and writes nothing. Otherwise `confirm` (if given) sees the
    plan under the lock before anything is written and may raise to stop; `signer` signs the new head.
    """
    require_reason(reason)
    if dry_run:
        snapshot = brain.snapshot_digest()
        if snapshot is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to drop")
        members: Members = brain.modules(snapshot)
        graph = lineage.graph(brain, snapshot, persist=False)
        return DropOutcome(_plan_drop(brain, members, graph, select, allow_canonical), graph, dry_run=True)
    signing = HeadSigning.load(brain, signer)
    with brain.writer(_actor(actor, "drop"), lock_timeout, on_wait) as writer:
        if writer.head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to drop")
        parent = writer.head.snapshot
        members = brain.modules(parent)  # Module answers `in` from its composition, read on first use
        graph = lineage.graph(brain, parent)
        plan = _plan_drop(brain, members, graph, select, allow_canonical)
        if confirm is not None:
            confirm(plan, graph)
        canonical = {TrustScope.DROP_CANONICAL} if MemoryType.CANONICAL in plan.removals else set()
        signing.require({TrustScope.COMMIT} | canonical, "this drop")
        records = plan.records(actor=actor_of(writer.actor), at=utc_timestamp(), reason=reason, policy=policy)
        digest = commit_records(writer, records, plan)
        if digest is not None:  # under the lock: the log must describe the parent it was appended to
            lineage.committed(brain, parent, digest, records)
    signed = signing.sign_new_head(lock_timeout=lock_timeout, on_wait=on_wait)
    return DropOutcome(plan, graph, dry_run=False, snapshot=digest, signed=signed)


def require_reason(reason: str) -> None:
    """A drop's reason is recorded in every removal record: it cannot be empty."""
    if not reason.strip():
        raise UsageError("a drop needs --reason TEXT (it is recorded in every removal record)")


def _plan_drop(
    brain: Brain, members: Members, graph: DependencyGraph, select: Select, allow_canonical: bool
) -> DropPlan:
    return plan_drop(select(members, graph), members, graph, allow_canonical=allow_canonical, describe=Titles(brain),
                     explains=lambda b: _explains(brain, b))


def _explains(brain: Brain, block: BlockId) -> tuple[str, BlockId] | None:
    """What a provenance record is about (`(record_type, block)`), for the refusal of needed records."""
    try:
        record = record_of(brain.resolve(block))
    except BrainError:
        return None
    subject = getattr(record, "block", None)
    return None if record is None or subject is None else (record.record_type, subject)


def made_by(
    producer: Producer | str, modules: Sequence[MemoryType] = (), on_note: Callable[[str], None] | None = None
) -> Select:
    """A drop's selection: the members `producer` made, in `modules` (default: the droppable derived modules;
    `on_note` hears how many episodes it made, which only `demote` removes)."""
    text = producer if isinstance(producer, str) else _producer_text(producer)

    def select(members: Members, graph: DependencyGraph) -> list[BlockId]:
        made = graph.made_by(parse_producer(producer) if isinstance(producer, str) else producer)
        wanted = list(modules)
        if not wanted:
            wanted = [t for t in (MemoryType.SEMANTIC, MemoryType.PROCEDURAL) if t in members]
            episodes = members.get(MemoryType.EPISODIC)
            kept = 0 if episodes is None else sum(1 for b in made if b in episodes)
            if kept and on_note is not None:
                on_note(f"{kept} episodic blocks made by {text} stay: episodes are never dropped "
                        "(demote them with `brain demote ID...`)")
        found = [b for b in made if any(t in members and b in members[t] for t in wanted)]
        if not found:
            where = ", ".join(str(t) for t in wanted)
            raise NotFoundError(
                f"no member of {where} was made by producer {text}", hint="see `brain show ID` for producers"
            )
        return found

    return select


def parse_producer(text: str) -> Producer:
    """`model:acme/extractor@2026-11` → Producer(kind=model, id=acme/extractor, version=2026-11)."""
    kind, sep, rest = text.partition(":")
    if not sep or not rest or kind not in {k.value for k in ProducerKind}:
        raise UsageError(
            f"--producer {text!r} is not KIND:ID[@VERSION]",
            hint="KIND is model, pipeline, batch or actor, e.g. model:acme/extractor@2026-11",
        )
    pid, at, version = rest.rpartition("@") if "@" in rest and kind != "actor" else (rest, "", "")
    return Producer(kind=ProducerKind(kind), id=pid if at else rest, version=version or None)


def _producer_text(producer: Producer) -> str:
    return f"{producer.kind.value}:{producer.id}" + (f"@{producer.version}" if producer.version else "")


# --- supersede, demote -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StanceOutcome:
    """What a supersession or demotion recorded (snapshot None: it was already recorded)."""

    blocks: tuple[BlockId, ...]
    snapshot: OciDigest | None
    signed: SignedHead | None = None


def supersede(
    brain: Brain,
    old: BlockId,
    new: BlockId,
    *,
    actor: str,
    reason: str | None = None,
    signer: Signer | None = None,
    lineage: Lineage = LEDGER_LINEAGE,
    lock_timeout: float | None = None,
    on_wait: OnWait | None = None,
) -> StanceOutcome:
    """Record that `new` supersedes `old` (§3.7, §7.2): both stay members, `old` is no longer accessible."""
    signing = HeadSigning.prepare(brain, signer, {TrustScope.COMMIT}, "this supersession")
    _, digest = commit_stance(
        brain, "supersede", actor,
        lambda members, graph: plan_supersession(old, new, members, graph),
        lambda needed, by, at: [supersession_record(new, old, actor=by, at=at, reason=reason)] if needed else [],
        lineage=lineage, lock_timeout=lock_timeout, on_wait=on_wait,
    )  # fmt: skip
    return StanceOutcome((old, new), digest, signing.sign_new_head(lock_timeout=lock_timeout, on_wait=on_wait))


def demote(
    brain: Brain,
    blocks: Sequence[BlockId],
    *,
    actor: str,
    reason: str | None = None,
    policy: str | None = None,
    signer: Signer | None = None,
    lineage: Lineage = LEDGER_LINEAGE,
    lock_timeout: float | None = None,
    on_wait: OnWait | None = None,
) -> StanceOutcome:
    """Demote `blocks` (§3.7, §7.2): they stay members but are no longer accessible; one record per block."""
    signing = HeadSigning.prepare(brain, signer, {TrustScope.COMMIT}, "this demotion")
    needed, digest = commit_stance(
        brain, "demote", actor,
        lambda members, graph: plan_demotion(blocks, members, graph),
        lambda needed, by, at: [demotion_record(b, actor=by, at=at, reason=reason, policy=policy) for b in needed],
        lineage=lineage, lock_timeout=lock_timeout, on_wait=on_wait,
    )  # fmt: skip
    return StanceOutcome(tuple(needed), digest, signing.sign_new_head(lock_timeout=lock_timeout, on_wait=on_wait))


def commit_stance(
    brain: Brain,
    what: str,
    actor: str,
    plan: Callable[[Members, DependencyGraph], Plan],
    records: Callable[[Plan, Actor, str], Sequence[ProvenanceBlock]],
    *,
    lineage: Lineage = LEDGER_LINEAGE,
    lock_timeout: float | None = None,
    on_wait: OnWait | None = None,
) -> tuple[Plan, OciDigest | None]:
    """Under the writer lock: plan on the head, write the plan's records (none: nothing to write) in one
    snapshot and tell the lineage; a refusal (`LifecycleRefusedError`) writes nothing."""
    with brain.writer(actor, lock_timeout, on_wait) as writer:
        if writer.head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to {what}")
        parent = writer.head.snapshot
        members = brain.modules(parent)  # Module answers `in` from its composition, read on first use
        planned = plan(members, lineage.graph(brain, parent))
        written = list(records(planned, actor_of(writer.actor), utc_timestamp()))
        digest = commit_records(writer, written) if written else None
        if digest is not None:  # under the lock: the log must describe the parent it was appended to
            lineage.committed(brain, parent, digest, written)
    return planned, digest


def _actor(actor: str | None, what: str) -> str:
    if actor is None:
        raise UsageError(f"a {what} writes a snapshot: it needs an actor", hint="pass actor=name@example.org")
    return actor


__all__ = [
    "LEDGER_LINEAGE",
    "DropOutcome",
    "LedgerLineage",
    "Lineage",
    "StanceOutcome",
    "Titles",
    "commit_stance",
    "demote",
    "drop",
    "made_by",
    "parse_producer",
    "require_reason",
    "supersede",
]
