"""`brain reconcile status|resolve|accept-removals|continue|abort`: a halted reconciliation (§10.6)."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from cli.commands.merge import MergeResult, index_of, lineage_hook, merge_result, render
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Result
from cli.signing import SigningPlan, SignWithOption, with_signature

reconcile = typer.Typer(name="reconcile", help="Answer, continue or abort a halted reconciliation.",
                        no_args_is_help=True)


class StatusResult(Result):
    theirs: str
    ancestor: str
    strategy: str
    actor: str
    reason: str
    head: str
    resolutions: dict[str, str]
    accepted_removals: bool
    plan: MergeResult
    next: list[str]
    """What it needs next, one command each (resolve, accept-removals, continue; abort)."""


class Answered(Result):
    block: str
    kind: str
    prefer: str | None


@reconcile.command("status")
def status(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Show the open reconciliation: what needs answering and what is answered."""
    from brain.branches.operations import current_branch
    from brain.reconcile.operations import Outcome, next_steps
    from brain.reconcile.operations import status as run_status

    context = cli_context(ctx)
    brain = context.open_brain()
    state, plan = run_status(brain, index_of(brain, persist=False))
    output = context.output(as_json)
    shown = merge_result(Outcome("halted", plan, state.strategy, state=state), {str(state.head): current_branch(brain)},
                         every_row=output.as_json)
    result = StatusResult(
        theirs=str(state.theirs), ancestor=str(state.ancestor), strategy=state.strategy, actor=state.actor.id,
        reason=state.reason, head=str(state.head),
        resolutions={str(k): v.kind + (f" {v.prefer}" if v.prefer else "") for k, v in state.resolutions.items()},
        accepted_removals=state.accepted_removals is not None, plan=shown, next=next_steps(plan, state),
    )
    output.result(result, lambda r: [f"reconciling {r.theirs[:19]}… ({r.strategy}) by {r.actor}: {r.reason}",
                                     *render(r.plan, output),
                                     f"removals accepted: {'yes' if r.accepted_removals else 'no'}",
                                     "next:", *(f"  {step}" for step in r.next)])


@reconcile.command("resolve")
def resolve(
    ctx: typer.Context,
    block: Annotated[str, typer.Argument(metavar="ID", help="The open question's block id (or a prefix).")],
    admit: Annotated[bool, typer.Option("--admit", help="Let a contradicted or pending block in.")] = False,
    reject: Annotated[bool, typer.Option("--reject", help="Leave the block out (it stays stored).")] = False,
    prefer: Annotated[
        str | None, typer.Option("--prefer", metavar="WINNER", help="Settle a competing supersession.")
    ] = None,
    reason: Annotated[str | None, typer.Option("--reason", metavar="TEXT", help="Why.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Answer one open question: --admit, --reject or --prefer WINNER."""
    from brain.errors import UsageError
    from brain.reconcile.operations import resolve as run_resolve

    if admit + reject + (prefer is not None) != 1:
        raise UsageError("pass exactly one of --admit, --reject, --prefer WINNER")
    kind: Literal["admit", "reject", "prefer"] = "admit" if admit else "reject" if reject else "prefer"
    context = cli_context(ctx)
    brain = context.open_brain()
    target, answer = run_resolve(brain, context.actor(), block, kind, index_of(brain, persist=False), prefer=prefer,
                                 reason=reason, lock_timeout=context.lock_timeout)
    output = context.output(as_json)
    output.result(
        Answered(block=str(target), kind=answer.kind, prefer=None if answer.prefer is None else str(answer.prefer)),
        lambda r: f"{r.kind} {target.short}" + (f" (prefer {r.prefer[:19]}…)" if r.prefer else ""),
    )
    output.message("next: `brain reconcile status` shows what is still open; `brain reconcile continue` commits")


@reconcile.command("accept-removals")
def accept_removals(
    ctx: typer.Context,
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why (recorded in the removal records).")
    ] = "",
    allow_canonical: Annotated[
        bool, typer.Option("--allow-canonical", help="Accept withdrawn canonical blocks too.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Accept every withdrawn block of ours, in one statement."""
    from brain.reconcile.operations import accept_removals as run_accept
    from brain.reconcile.operations import counted

    context = cli_context(ctx)
    brain = context.open_brain()
    accepted = run_accept(brain, context.actor(), reason, index_of(brain, persist=False),
                          allow_canonical=allow_canonical, lock_timeout=context.lock_timeout)
    output = context.output(as_json)
    blocks = {t.value: [str(b) for b in ids] for t, ids in accepted.blocks.items()}
    output.result(
        Answered(block=",".join(blocks), kind="accept-removals", prefer=None),
        lambda r: f"accepted the removal of {counted(sum(len(v) for v in blocks.values()), 'block')} ({r.block})",
    )
    output.message("next: `brain reconcile status` shows what is still open; `brain reconcile continue` commits")


@reconcile.command("continue")
def continue_(ctx: typer.Context, sign_with: SignWithOption = None, as_json: JsonFlag = False) -> None:
    """Recompute the plan with the answers and commit it."""
    from brain.reconcile.operations import continue_reconcile
    from brain.snapshot import TrustScope

    context = cli_context(ctx)
    brain = context.open_brain()
    signing = SigningPlan.load(brain, sign_with)
    signing.require({TrustScope.COMMIT}, "this merge")
    outcome = continue_reconcile(brain, context.actor(), index_of(brain, persist=True),
                                 lock_timeout=context.lock_timeout, after_commit=lineage_hook(brain))
    signed = signing.sign_new_head(context)
    output = context.output(as_json)
    output.result(with_signature(merge_result(outcome, every_row=output.as_json), signed),
                  lambda r: render(r, output, review=False))
    output.message(f"merged ({outcome.strategy}) in snapshot {', '.join(d.short for d in outcome.snapshots)}")


@reconcile.command("abort")
def abort(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Discard the open reconciliation (nothing was committed)."""
    from brain.reconcile.operations import abort as run_abort

    context = cli_context(ctx)
    brain = context.open_brain()
    state = run_abort(brain, context.actor(), lock_timeout=context.lock_timeout)
    output = context.output(as_json)
    output.result(Answered(block="" if state is None else str(state.theirs), kind="abort", prefer=None),
                  lambda r: "reconciliation aborted: reconcile.json deleted")
