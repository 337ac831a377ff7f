"""`brain supersede OLD NEW --reason TEXT`: NEW takes OLD's place (§3.7, §7.2); both stay members.

Writes one `supersession` record in one snapshot. OLD is no longer accessible while NEW is a member (if
NEW is dropped later, OLD becomes accessible again). The use case is `brain.lifecycle.usecases.supersede`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from brain.errors import LifecycleRefusedError
from brain.identity import BlockId, OciDigest
from cli.context import cli_context
from cli.lifecycle_view import Refusal, resolve_all
from cli.options import JsonFlag
from cli.output import Output, Result
from cli.signing import SignWithOption, load_signer, with_signature


class StanceResult(Result):
    """What a supersession or demotion wrote (snapshot null: nothing needed writing), or why it was refused."""

    snapshot: OciDigest | None
    blocks: list[BlockId]
    refused: Refusal | None


ReasonOption = Annotated[str | None, typer.Option("--reason", metavar="TEXT", help="Why (recorded in the record).")]


@contextmanager
def refusal_as_json(output: Output, as_json: bool) -> Iterator[None]:
    """A refusal is printed as a `StanceResult` under `--json`, then raised."""
    try:
        yield
    except LifecycleRefusedError as e:
        if as_json:
            output.result(StanceResult(snapshot=None, blocks=[], refused=Refusal.of(e)), lambda r: [])
        raise


def supersede(
    ctx: typer.Context,
    old: Annotated[
        str,
        typer.Argument(
            metavar="OLD", help="The block that is superseded (id, prefix or source origin).", show_default=False
        ),
    ],
    new: Annotated[
        str,
        typer.Argument(
            metavar="NEW", help="The block that supersedes it (id, prefix or source origin).", show_default=False
        ),
    ],
    reason: ReasonOption = None,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Record that NEW supersedes OLD (both stay members; OLD is no longer accessible)."""
    from brain.lifecycle.usecases import supersede as record_supersession
    from ingest.lifecycle import LOG_LINEAGE  # the lineage log (and the gate's key) load when the command runs

    context = cli_context(ctx)
    brain = context.open_brain()
    output = context.output(as_json)
    loser, winner = resolve_all(brain, [old, new])
    with refusal_as_json(output, as_json):
        done = record_supersession(
            brain, loser, winner, actor=context.actor(), reason=reason,
            signer=None if sign_with is None else load_signer(sign_with),
            lineage=LOG_LINEAGE, lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
        )  # fmt: skip
    digest = done.snapshot
    result = with_signature(StanceResult(snapshot=digest, blocks=[loser, winner], refused=None), done.signed)
    said = f"{winner.short} supersedes {loser.short}"
    output.result(result, lambda r: [f"{said} (snapshot {digest.short})" if digest else f"already recorded: {said}"])


__all__ = ["ReasonOption", "StanceResult", "refusal_as_json", "supersede"]
