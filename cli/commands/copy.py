"""`brain copy SRC DST`: copy a brain artifact between registries or repositories, verified, with its signatures."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import cli_context
from cli.options import JsonFlag
from cli.transfer import PlainHttpFlag, blob_progress


def copy(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(metavar="SRC", help="HOST[:PORT]/REPOSITORY[:TAG][@DIGEST]")],
    destination: Annotated[
        str, typer.Argument(metavar="DST", help="HOST[:PORT]/REPOSITORY[:TAG] (default: SRC's tag)")
    ],
    force: Annotated[bool, typer.Option("--force", help="Move DST's tag if it names another manifest.")] = False,
    no_referrers: Annotated[
        bool, typer.Option("--no-referrers", help="Do not bring the artifact's referrers (signatures) along.")
    ] = False,
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Copy a brain artifact from SRC to DST (every blob verified, signatures too); prints the manifest digest."""
    from oci.copy import copy_artifact
    from oci.reference import parse_reference

    context = cli_context(ctx)
    src = parse_reference(source, plain_http=plain_http)
    dst = parse_reference(destination, plain_http=plain_http)
    output = context.output(as_json)
    with blob_progress(output) as progress:
        result = copy_artifact(
            src, dst, force=force, with_referrers=not no_referrers, progress=progress
        )
    output.message(
        f"copied {result.source} to {result.destination}: {result.blobs_copied} blob(s) sent "
        f"({result.bytes_copied} bytes), {result.blobs_present} already there, {len(result.referrers)} referrer(s)"
    )
    output.result(result, lambda r: str(r.digest))
