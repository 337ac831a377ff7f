"""`brain proposers`: the proposers `brain ingest --proposer` can use (built in, and installed entry points)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer
from rich.console import RenderableType

from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output

if TYPE_CHECKING:
    from ingest.proposers.loader import ProposerInfo


def proposers(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List the available proposers (built in, and third-party entry points in `brain.proposers`)."""
    from ingest.proposers.loader import available_proposers  # the proposers' models: when the command runs

    output = cli_context(ctx).output(as_json)
    output.result(available_proposers(), lambda rows: _render(rows, output))


def _render(rows: Sequence[ProposerInfo], output: Output) -> list[RenderableType]:
    table = output.table("name", "source", "version", "description")
    for row in rows:
        note = " (shadowed by the builtin)" if row.shadowed else ""
        table.add_row(row.name, row.source, row.version or "-", row.description + note)
    return [table]
