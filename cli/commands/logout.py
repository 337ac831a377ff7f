"""`brain logout HOST`: forget the credentials stored for a registry (Docker's config.json, credential helper)."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Result


class LogoutResult(Result):
    """What was forgotten for `registry` (never a secret)."""

    registry: str
    config: str
    removed: bool
    helper: str | None = None


def logout(
    ctx: typer.Context,
    host: Annotated[str, typer.Argument(metavar="HOST", help="Registry host, e.g. ghcr.io or localhost:5000")],
    as_json: JsonFlag = False,
) -> None:
    """Log out of a registry: remove its stored credentials (exit 0 if there were none)."""
    from oci.auth import logout as forget

    done = forget(host)
    result = LogoutResult(
        registry=done.registry, config=str(done.config), removed=done.was_logged_in, helper=done.helper
    )

    def render(r: LogoutResult) -> str:
        if not r.removed:
            return f"not logged in to {r.registry} (nothing stored in {r.config})"
        via = f" and credential helper {r.helper}" if r.helper else ""
        return f"Logged out of {r.registry} (removed from {r.config}{via})"

    cli_context(ctx).output(as_json).result(result, render)
