"""`brain demote ID... --reason TEXT`: the blocks stay members but are no longer accessible (§3.7, §7.2).

The removal path for episodes (which are never dropped). One `demotion` record per block, one snapshot.
"""

from __future__ import annotations

from typing import Annotated

import typer

from brain.errors import LifecycleRefusedError, NotFoundError
from brain.identity import utc_timestamp
from brain.lifecycle.apply import commit_records
from brain.lifecycle.records import actor_of, demotion_record
from brain.lifecycle.stance import plan_demotion
from brain.snapshot import TrustScope
from cli.commands.supersede import ReasonOption, StanceResult
from cli.context import cli_context
from cli.lifecycle_view import Refusal, resolve_all
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
    from ingest.lineage_graph import graph_of, log_commit  # the lineage log (and the gate's key) load when the command runs

    context = cli_context(ctx)
    brain = context.open_brain()
    output = context.output(as_json)
    named = resolve_all(brain, blocks)
    signing = SigningPlan.prepare(brain, sign_with, {TrustScope.COMMIT}, "this demotion")
    with context.writer(brain) as writer:
        if writer.head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to demote")
        parent = writer.head.snapshot
        members = brain.modules(parent)  # Module answers `in` from its composition, read on first use
        try:
            needed = plan_demotion(named, members, graph_of(brain, parent))
        except LifecycleRefusedError as e:
            if as_json:
                output.result(StanceResult(snapshot=None, blocks=[], refused=Refusal.of(e)), lambda r: [])
            raise
        actor, at = actor_of(writer.actor), utc_timestamp()
        records = [demotion_record(b, actor=actor, at=at, reason=reason, policy=policy) for b in needed]
        digest = commit_records(writer, records) if records else None
        if digest is not None:  # under the lock: the log must describe the parent it was appended to
            log_commit(brain, parent, digest, records)
    result = with_signature(StanceResult(snapshot=digest, blocks=list(needed), refused=None), signing.sign_new_head(context))
    done = f"demoted {len(needed)} blocks (snapshot {digest.short})" if digest else "already demoted: nothing to write"
    output.result(result, lambda r: [done])
