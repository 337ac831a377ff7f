"""`brain supersede OLD NEW --reason TEXT`: NEW takes OLD's place (§3.7, §7.2); both stay members.

Writes one `supersession` record in one snapshot. OLD is no longer accessible while NEW is a member (if
NEW is dropped later, OLD becomes accessible again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from brain.blocks.provenance import Actor, ProvenanceBlock
from brain.brain import Brain
from brain.errors import LifecycleRefusedError, NotFoundError
from brain.identity import BlockId, OciDigest, utc_timestamp
from brain.lifecycle.apply import commit_records
from brain.lifecycle.drop import Members
from brain.lifecycle.records import actor_of, supersession_record
from brain.lifecycle.stance import plan_supersession
from brain.snapshot import TrustScope
from cli.context import CliContext, cli_context
from cli.lifecycle_view import Refusal, resolve_all
from cli.options import JsonFlag
from cli.output import Output, Result
from cli.signing import SigningPlan, SignWithOption, with_signature

if TYPE_CHECKING:
    from ingest.lineage_graph import LineageGraph

Plan = TypeVar("Plan")


class StanceResult(Result):
    """What a supersession or demotion wrote (snapshot null: nothing needed writing), or why it was refused."""

    snapshot: OciDigest | None
    blocks: list[BlockId]
    refused: Refusal | None


ReasonOption = Annotated[str | None, typer.Option("--reason", metavar="TEXT", help="Why (recorded in the record).")]


def commit_stance(
    context: CliContext,
    brain: Brain,
    output: Output,
    as_json: bool,
    what: str,
    plan: Callable[[Members, LineageGraph], Plan],
    records: Callable[[Plan, Actor, str], Sequence[ProvenanceBlock]],
) -> tuple[Plan, OciDigest | None]:
    """Under the writer lock: plan on the head, write the plan's records (none: nothing to write) in one
    snapshot and log them; a refusal is printed as a `StanceResult` under `--json`, then raised."""
    from ingest.lineage_graph import graph_of, log_commit  # the lineage log (and the gate's key) load when the command runs

    with context.writer(brain) as writer:
        if writer.head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to {what}")
        parent = writer.head.snapshot
        members = brain.modules(parent)  # Module answers `in` from its composition, read on first use
        try:
            planned = plan(members, graph_of(brain, parent))
        except LifecycleRefusedError as e:
            if as_json:
                output.result(StanceResult(snapshot=None, blocks=[], refused=Refusal.of(e)), lambda r: [])
            raise
        written = list(records(planned, actor_of(writer.actor), utc_timestamp()))
        digest = commit_records(writer, written) if written else None
        if digest is not None:  # under the lock: the log must describe the parent it was appended to
            log_commit(brain, parent, digest, written)
    return planned, digest


def supersede(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(metavar="OLD", help="The block that is superseded (id, prefix or source origin).", show_default=False)],
    new: Annotated[str, typer.Argument(metavar="NEW", help="The block that supersedes it (id, prefix or source origin).", show_default=False)],
    reason: ReasonOption = None,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Record that NEW supersedes OLD (both stay members; OLD is no longer accessible)."""
    context = cli_context(ctx)
    brain = context.open_brain()
    output = context.output(as_json)
    loser, winner = resolve_all(brain, [old, new])
    signing = SigningPlan.prepare(brain, sign_with, {TrustScope.COMMIT}, "this supersession")
    _, digest = commit_stance(
        context, brain, output, as_json, "supersede",
        lambda members, graph: plan_supersession(loser, winner, members, graph),
        lambda needed, actor, at: [supersession_record(winner, loser, actor=actor, at=at, reason=reason)] if needed else [],
    )  # fmt: skip
    result = with_signature(StanceResult(snapshot=digest, blocks=[loser, winner], refused=None), signing.sign_new_head(context))
    said = f"{winner.short} supersedes {loser.short}"
    output.result(result, lambda r: [f"{said} (snapshot {digest.short})" if digest else f"already recorded: {said}"])
