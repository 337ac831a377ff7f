"""`brain drop ID... --reason TEXT`: remove members and everything that depends on them (§7.3, §7.4).

The cascade is computed first (evidence and structural edges, every module) from the lineage log, shown per
module, then written as one snapshot with one `removal` record per affected module. `--producer` drops
everything one producer made instead (batch invalidation). The use case is `brain.lifecycle.usecases.drop`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.errors import LifecycleRefusedError, UsageError
from brain.identity import BlockId, OciDigest
from brain.lifecycle.drop import DropPlan
from brain.lifecycle.graph import DependencyGraph
from cli.context import cli_context
from cli.lifecycle_view import Refusal, affected_table, confirm_cascade, describe, resolve_all
from cli.options import JsonFlag, parse_memory_type
from cli.output import Output, Result
from cli.signing import SignWithOption, load_signer, with_signature

if TYPE_CHECKING:
    from brain.lifecycle.usecases import DropOutcome, Select


class DropResult(Result):
    """What a drop removed (or would remove, with --dry-run), or why it was refused."""

    dry_run: bool
    snapshot: OciDigest | None
    removals: dict[str, list[BlockId]]
    refused: Refusal | None


def drop(
    ctx: typer.Context,
    blocks: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ID|ORIGIN...", help="Block ids, unambiguous prefixes or source origins.", show_default=False
        ),
    ] = None,
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why (recorded in each removal record).")
    ] = "",
    policy: Annotated[str | None, typer.Option("--policy", metavar="NAME", help="Policy name to record.")] = None,
    producer: Annotated[
        str | None,
        typer.Option("--producer", metavar="KIND:ID[@VERSION]", help="Drop everything this producer made."),
    ] = None,
    modules: Annotated[
        list[str] | None, typer.Option("--module", metavar="TYPE", help="With --producer: only these modules.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the cascade; write nothing.")] = False,
    allow_canonical: Annotated[
        bool, typer.Option("--allow-canonical", help="Allow dropping canonical blocks.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before dropping a cascade.")] = False,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Drop blocks and their cascade (one new snapshot with removal records)."""
    from brain.lifecycle.usecases import drop as drop_blocks
    from brain.lifecycle.usecases import made_by, require_reason
    from ingest.lifecycle import LOG_LINEAGE  # the lineage log (and the gate's key) load when the command runs

    context = cli_context(ctx)
    require_reason(reason)
    if bool(blocks) == (producer is not None):
        raise UsageError("name the blocks to drop, or --producer KIND:ID[@VERSION], not both and not neither")
    if modules and producer is None:
        raise UsageError("--module only narrows --producer")
    brain = context.open_brain()
    output = context.output(as_json)
    if blocks:
        named = blocks
        select: Select = lambda members, graph: resolve_all(brain, named)  # noqa: E731
    else:
        wanted = [t for name in modules or () if (t := parse_memory_type(name)) is not None]
        select = made_by(producer or "", wanted, output.message)

    def confirm(plan: DropPlan, graph: DependencyGraph) -> None:
        if not as_json:
            output.result(describe(brain, graph, plan.removals, plan.requested),
                          lambda rows: affected_table(output, rows, _totals(plan)))
        confirm_cascade(output, len(plan.cascade), yes, "drop")

    try:
        done = drop_blocks(
            brain, select, actor=None if dry_run else context.actor(), reason=reason, policy=policy,
            allow_canonical=allow_canonical, dry_run=dry_run,
            signer=None if dry_run or sign_with is None else load_signer(sign_with), lineage=LOG_LINEAGE,
            confirm=confirm, lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
        )  # fmt: skip
    except LifecycleRefusedError as e:
        if output.as_json:
            output.result(DropResult(dry_run=dry_run, snapshot=None, removals={}, refused=Refusal.of(e)), lambda r: [])
        raise
    if dry_run:
        _show(brain, done, output)
        return
    digest, signed = done.snapshot, done.signed
    result = with_signature(DropResult(dry_run=False, snapshot=digest, removals=done.removals, refused=None), signed)
    if as_json:
        output.result(result, lambda r: [])
    else:
        output.message(f"dropped {done.plan.count} blocks in snapshot {digest.short if digest else '-'}")
        if signed is not None:
            output.message(f"signed by {signed.key} (record {signed.record.short})")


def _totals(plan: DropPlan) -> dict[MemoryType, int]:
    return {t: len(ids) for t, ids in plan.removals.items()}


def _show(brain: Brain, done: DropOutcome, output: Output) -> None:
    result = DropResult(dry_run=True, snapshot=None, removals=done.removals, refused=None)
    plan = done.plan

    def render(_: DropResult) -> list[RenderableType]:
        rows = describe(brain, done.graph, plan.removals, plan.requested)
        shown = affected_table(output, rows, _totals(plan))
        return [*shown, f"dry run: would drop {plan.count} blocks; nothing was written"]

    output.result(result, render)
