"""`brain fetch REF`: download a remote brain's history and blocks without moving the head."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.commands.pull import MaxInflateOption, run_pull
from cli.options import JsonFlag
from cli.transfer import PlainHttpFlag


def fetch(
    ctx: typer.Context,
    reference: Annotated[str, typer.Argument(metavar="REF", help="HOST[:PORT]/REPOSITORY[:TAG][@DIGEST]")],
    plain_http: PlainHttpFlag = False,
    max_inflate: MaxInflateOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Fetch a brain's history and blocks from a registry without moving the head."""
    run_pull(ctx, reference, plain_http, as_json, fetch_only=True, max_inflate=max_inflate)
