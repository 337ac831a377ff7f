"""`brain drop ID... --reason TEXT`: remove members and everything that depends on them (§7.3, §7.4).

The cascade is computed first (evidence and structural edges, every module) from the lineage log, shown per
module, then written as one snapshot with one `removal` record per affected module. `--producer` drops
everything one producer made instead (batch invalidation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import Producer, ProducerKind
from brain.brain import Brain
from brain.errors import BrainError, LifecycleRefusedError, NotFoundError, UsageError
from brain.identity import BlockId, OciDigest, utc_timestamp
from brain.ledger import record_of
from brain.lifecycle.apply import commit_records
from brain.lifecycle.drop import DropPlan, Members, plan_drop
from brain.lifecycle.records import actor_of
from brain.snapshot import TrustScope
from cli.context import cli_context
from cli.lifecycle_view import (
    Affected,
    Refusal,
    Titles,
    affected_table,
    confirm_cascade,
    describe,
    resolve_all,
)
from cli.options import JsonFlag, parse_memory_type
from cli.output import Output, Result
from cli.signing import SigningPlan, SignWithOption, with_signature

if TYPE_CHECKING:
    from ingest.lineage_graph import LineageGraph


class DropResult(Result):
    """What a drop removed (or would remove, with --dry-run), or why it was refused."""

    dry_run: bool
    snapshot: OciDigest | None
    removals: dict[str, list[BlockId]]
    refused: Refusal | None


def drop(
    ctx: typer.Context,
    blocks: Annotated[list[str] | None, typer.Argument(metavar="ID|ORIGIN...", help="Block ids, unambiguous prefixes or source origins.",
                                                      show_default=False)] = None,
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why (recorded in each removal record).")] = "",
    policy: Annotated[str | None, typer.Option("--policy", metavar="NAME", help="Policy name to record.")] = None,
    producer: Annotated[
        str | None,
        typer.Option("--producer", metavar="KIND:ID[@VERSION]", help="Drop everything this producer made."),
    ] = None,
    modules: Annotated[
        list[str] | None, typer.Option("--module", metavar="TYPE", help="With --producer: only these modules.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the cascade; write nothing.")] = False,
    allow_canonical: Annotated[bool, typer.Option("--allow-canonical", help="Allow dropping canonical blocks.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before dropping a cascade.")] = False,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Drop blocks and their cascade (one new snapshot with removal records)."""
    from ingest.lineage_graph import graph_of, log_commit  # the lineage log (and the gate's key) load when the command runs

    context = cli_context(ctx)
    if not reason.strip():
        raise UsageError("a drop needs --reason TEXT (it is recorded in every removal record)")
    if bool(blocks) == (producer is not None):
        raise UsageError("name the blocks to drop, or --producer KIND:ID[@VERSION], not both and not neither")
    if modules and producer is None:
        raise UsageError("--module only narrows --producer")
    brain = context.open_brain()
    output = context.output(as_json)
    if dry_run:
        snapshot = brain.snapshot_digest()
        if snapshot is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to drop")
        members: Members = brain.modules(snapshot)
        graph = graph_of(brain, snapshot, persist=False)
        plan = _plan(brain, members, graph, blocks, producer, modules, allow_canonical, output, dry_run=True)
        _show(brain, graph, plan, output, None, dry_run=True)
        return
    signing = SigningPlan.load(brain, sign_with)
    with context.writer(brain) as writer:
        if writer.head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to drop")
        parent = writer.head.snapshot
        members = brain.modules(parent)  # Module answers `in` from its composition, read on first use
        graph = graph_of(brain, parent)
        plan = _plan(brain, members, graph, blocks, producer, modules, allow_canonical, output)
        if not as_json:
            output.result(_rows(brain, graph, plan), lambda rows: affected_table(output, rows, _totals(plan)))
        confirm_cascade(output, len(plan.cascade), yes, "drop")
        signing.require({TrustScope.COMMIT} | ({TrustScope.DROP_CANONICAL} if MemoryType.CANONICAL in plan.removals else set()),
                        "this drop")
        records = plan.records(actor=actor_of(writer.actor), at=utc_timestamp(), reason=reason, policy=policy)
        digest = commit_records(writer, records, plan)
        if digest is not None:  # under the lock: the log must describe the parent it was appended to
            log_commit(brain, parent, digest, records)
    signed = signing.sign_new_head(context)
    result = with_signature(DropResult(dry_run=False, snapshot=digest, removals=_removals(plan), refused=None), signed)
    if as_json:
        output.result(result, lambda r: [])
    else:
        output.message(f"dropped {plan.count} blocks in snapshot {digest.short if digest else '-'}")
        if signed is not None:
            output.message(f"signed by {signed.key} (record {signed.record.short})")


def _plan(
    brain: Brain,
    members: Members,
    graph: LineageGraph,
    blocks: list[str] | None,
    producer: str | None,
    modules: list[str] | None,
    allow_canonical: bool,
    output: Output,
    *,
    dry_run: bool = False,
) -> DropPlan:
    requested = resolve_all(brain, blocks) if blocks else _made_by(members, graph, producer or "", modules or [], output)
    try:
        return plan_drop(requested, members, graph, allow_canonical=allow_canonical, describe=Titles(brain),
                         explains=lambda b: _explains(brain, b))
    except LifecycleRefusedError as e:
        if output.as_json:
            output.result(DropResult(dry_run=dry_run, snapshot=None, removals={}, refused=Refusal.of(e)), lambda r: [])
        raise


def _explains(brain: Brain, block: BlockId) -> tuple[str, BlockId] | None:
    """What a provenance record is about (`(record_type, block)`), for the refusal of needed records."""
    try:
        record = record_of(brain.resolve(block))
    except BrainError:
        return None
    subject = getattr(record, "block", None)
    return None if record is None or subject is None else (record.record_type, subject)


def _made_by(members: Members, graph: LineageGraph, text: str, modules: list[str], output: Output) -> list[BlockId]:
    """The members `--producer KIND:ID[@VERSION]` made (in `--module` modules; default: the droppable derived
    modules, saying how many episodes it made, which only `demote` removes)."""
    producer = parse_producer(text)
    made = graph.made_by(producer)
    wanted = [t for name in modules if (t := parse_memory_type(name)) is not None]
    if not wanted:
        wanted = [t for t in (MemoryType.SEMANTIC, MemoryType.PROCEDURAL) if t in members]
        episodes = members.get(MemoryType.EPISODIC)
        kept = 0 if episodes is None else sum(1 for b in made if b in episodes)
        if kept:
            output.message(f"{kept} episodic blocks made by {text} stay: episodes are never dropped "
                           "(demote them with `brain demote ID...`)")
    found = [b for b in made if any(t in members and b in members[t] for t in wanted)]
    if not found:
        where = ", ".join(str(t) for t in wanted)
        raise NotFoundError(f"no member of {where} was made by producer {text}", hint="see `brain show ID` for producers")
    return found


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


def _removals(plan: DropPlan) -> dict[str, list[BlockId]]:
    return {str(t): list(ids) for t, ids in plan.removals.items()}


def _totals(plan: DropPlan) -> dict[MemoryType, int]:
    return {t: len(ids) for t, ids in plan.removals.items()}


def _rows(brain: Brain, graph: LineageGraph, plan: DropPlan) -> list[Affected]:
    return describe(brain, graph, plan.removals, plan.requested)


def _show(brain: Brain, graph: LineageGraph, plan: DropPlan, output: Output, digest: OciDigest | None, *,
          dry_run: bool) -> None:
    result = DropResult(dry_run=dry_run, snapshot=digest, removals=_removals(plan), refused=None)

    def render(_: DropResult) -> list[RenderableType]:
        shown = affected_table(output, _rows(brain, graph, plan), _totals(plan))
        return [*shown, f"dry run: would drop {plan.count} blocks; nothing was written"]

    output.result(result, render)
