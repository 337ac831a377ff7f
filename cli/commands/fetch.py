"""`brain fetch REF`: download a remote brain's history and blocks without moving the head."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.commands.pull import MaxInflateOption, render
from cli.context import cli_context
from cli.options import JsonFlag
from cli.transfer import PlainHttpFlag, blob_progress


def fetch(
    ctx: typer.Context,
    reference: Annotated[str, typer.Argument(metavar="REF", help="HOST[:PORT]/REPOSITORY[:TAG][@DIGEST]")],
    plain_http: PlainHttpFlag = False,
    max_inflate: MaxInflateOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Fetch a brain's history and blocks from a registry without moving the head."""
    from oci.pull import brain_to_pull_into, pull
    from oci.reference import parse_reference

    context = cli_context(ctx)
    ref = parse_reference(reference, plain_http=plain_http)
    output = context.output(as_json)
    with brain_to_pull_into(context.brain_path) as (brain, created), blob_progress(output) as progress:
        result = pull(brain, ref, fetch_only=True, progress=progress, lock_timeout=context.lock_timeout,
                      max_inflate=max_inflate, on_wait=context.wait_note())
    result = result.model_copy(update={"initialized": created})
    output.message(f"{result.blobs_fetched} blob(s) downloaded ({result.bytes_fetched} bytes), {result.blobs_reused} already stored")
    output.result(result, render)
