"""`brain demote ID... --reason TEXT`: the blocks stay members but are no longer accessible (§3.7, §7.2).

The removal path for episodes (which are never dropped). One `demotion` record per block, one snapshot.
"""

from __future__ import annotations

from typing import Annotated

import typer

from brain.lifecycle.records import demotion_record
from brain.lifecycle.stance import plan_demotion
from brain.snapshot import TrustScope
from cli.commands.supersede import ReasonOption, StanceResult, commit_stance
from cli.context import cli_context
from cli.lifecycle_view import resolve_all
from cli.options import JsonFlag
from cli.signing import SigningPlan, SignWithOption, with_signature


def demote(
    ctx: typer.Context,
    blocks: Annotated[list[str], typer.Argument(metavar="ID|ORIGIN...", help="Block ids, unambiguous prefixes or source origins.",
                                                show_default=False)],
    reason: ReasonOption = None,
    policy: Annotated[str | None, typer.Option("--policy", metavar="NAME", help="Policy name to record.")] = None,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Demote blocks: they stay members but are no longer accessible."""
    context = cli_context(ctx)
    brain = context.open_brain()
    output = context.output(as_json)
    named = resolve_all(brain, blocks)
    signing = SigningPlan.prepare(brain, sign_with, {TrustScope.COMMIT}, "this demotion")
    needed, digest = commit_stance(
        context, brain, output, as_json, "demote",
        lambda members, graph: plan_demotion(named, members, graph),
        lambda needed, actor, at: [demotion_record(b, actor=actor, at=at, reason=reason, policy=policy) for b in needed],
    )  # fmt: skip
    result = with_signature(StanceResult(snapshot=digest, blocks=list(needed), refused=None), signing.sign_new_head(context))
    done = f"demoted {len(needed)} blocks (snapshot {digest.short})" if digest else "already demoted: nothing to write"
    output.result(result, lambda r: [done])
