"""`brain init`: create an empty brain directory."""

from __future__ import annotations

import typer

from brain.brain import Brain
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Result


class InitResult(Result):
    """The brain that was created."""

    brain: str


def init(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Create an empty brain at --brain (refuses an existing one)."""
    context = cli_context(ctx)
    Brain.init(context.brain_path)
    result = InitResult(brain=str(context.brain_path))
    context.output(as_json).result(result, lambda r: f"Initialized an empty brain in {r.brain}")
