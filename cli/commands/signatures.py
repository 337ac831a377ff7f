"""`brain signatures`: the records held over a snapshot (default: the head), each with its verdict (§9.7)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

import typer
from rich.console import RenderableType

from brain.authn.decision import Verdict
from brain.authn.outcomes import Role, State
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result


class SignaturesResult(Result):
    """The snapshot, its state, and one verdict per record (withdrawn ones apart)."""

    snapshot: str
    state: State
    role: Role
    trust_root: str | None
    required_scopes: list[str]
    signatures: list[Verdict]
    withdrawn: list[Verdict]


def signatures(
    ctx: typer.Context,
    snapshot: Annotated[
        str | None, typer.Argument(metavar="[SNAPSHOT]", help="Digest or unique prefix; default: the head.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """List the signature records over a snapshot with key, subject and verdict."""
    from brain.authenticity import judge

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
    output.result(result, lambda r: _render(r, output))


def _render(result: SignaturesResult, output: Output) -> Iterable[RenderableType]:
    from cli.authenticity import verdict_rows

    yield f"snapshot {result.snapshot}  {result.state} ({result.role})"
    if not result.signatures and not result.withdrawn:
        yield "no signature records"
        return
    yield verdict_rows(output, result.signatures, result.withdrawn)
