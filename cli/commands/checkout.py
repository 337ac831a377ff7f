"""`brain checkout NAME`: make a branch current (moves head.json to its head; crash-safe, §10.2)."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import cli_context
from cli.options import JsonFlag


def checkout(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The branch to switch to (see `brain branch`).")],
    as_json: JsonFlag = False,
) -> None:
    """Switch to a branch: the head moves to its snapshot (a governed brain's is authenticated first)."""
    from brain.branches.operations import checkout as checkout_branch

    context = cli_context(ctx)
    brain = context.open_brain()
    result = checkout_branch(
        brain, name, context.actor(), lock_timeout=context.lock_timeout, on_wait=context.wait_note()
    )
    context.output(as_json).result(
        result,
        lambda r: f"switched to branch {r.branch} at {r.snapshot}" if r.moved else f"already on branch {r.branch}",
    )
