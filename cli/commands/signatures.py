"""`brain signatures`: the records held over a snapshot (default: the head), each with its verdict (§9.7).

The result model and its rendering are `cli.authenticity`'s, imported when the command runs: verdicts name
the authentication stack (`cryptography` included), which other commands do not load.
"""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import cli_context
from cli.options import JsonFlag


def signatures(
    ctx: typer.Context,
    snapshot: Annotated[
        str | None, typer.Argument(metavar="[SNAPSHOT]", help="Digest or unique prefix; default: the head.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """List the signature records over a snapshot with key, subject and verdict."""
    from brain.authenticity import judge
    from cli.authenticity import SignaturesResult, render_signatures

    context = cli_context(ctx)
    brain = context.open_brain()
    target = None if snapshot is None else brain.resolve_snapshot_prefix(snapshot)
    auth = judge(brain, target)
    result = SignaturesResult(
        snapshot=str(auth.snapshot), state=auth.state, role=auth.role,
        trust_root=None if auth.trust_root is None else str(auth.trust_root), required_scopes=auth.required_scopes,
        signatures=auth.signatures, withdrawn=auth.withdrawn,
    )
    output = context.output(as_json)
    output.result(result, lambda r: render_signatures(r, output))
