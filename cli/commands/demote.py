"""`brain demote ID... --reason TEXT`: the blocks stay members but are no longer accessible (§3.7, §7.2).

The removal path for episodes (which are never dropped). One `demotion` record per block, one snapshot.
The use case is `brain.lifecycle.usecases.demote`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from cli.commands.supersede import ReasonOption, StanceResult, refusal_as_json
from cli.context import cli_context
from cli.lifecycle_view import resolve_all
from cli.options import JsonFlag
from cli.signing import SignWithOption, load_signer, with_signature


def demote(
    ctx: typer.Context,
    blocks: Annotated[
        list[str],
        typer.Argument(
            metavar="ID|ORIGIN...", help="Block ids, unambiguous prefixes or source origins.", show_default=False
        ),
    ],
    reason: ReasonOption = None,
    policy: Annotated[str | None, typer.Option("--policy", metavar="NAME", help="Policy name to record.")] = None,
    sign_with: SignWithOption = None, as_json: JsonFlag = False,
) -> None:
    """Demote blocks: they stay members but are no longer accessible."""
    from brain.lifecycle.usecases import demote as record_demotions
    from ingest.lifecycle import LOG_LINEAGE  # the lineage log (and the gate's key) load when the command runs

    context = cli_context(ctx)
    brain = context.open_brain()
    output = context.output(as_json)
    named = resolve_all(brain, blocks)
    with refusal_as_json(output, as_json):
        done = record_demotions(
            brain, named, actor=context.actor(), reason=reason, policy=policy,
            signer=None if sign_with is None else load_signer(sign_with), lineage=LOG_LINEAGE,
            lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
        )  # fmt: skip
    digest = done.snapshot
    result = with_signature(StanceResult(snapshot=digest, blocks=list(done.blocks), refused=None), done.signed)
    text = (
        f"demoted {len(done.blocks)} blocks (snapshot {digest.short})"
        if digest
        else "already demoted: nothing to write"
    )
    output.result(result, lambda r: [text])
