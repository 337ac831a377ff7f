"""`brain tag SRC NEW_TAG` (local, or remote when SRC is a registry reference) and `brain untag TAG`."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import cli_context
from cli.options import JsonFlag
from cli.transfer import PlainHttpFlag


def _is_remote(source: str) -> bool:
    # Local tags cannot contain '/', registry references always do (HOST/REPOSITORY).
    return "/" in source


def tag(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(metavar="SRC", help="A local tag or manifest digest, or HOST/REPOSITORY:TAG on a registry.")
    ],
    new_tag: Annotated[str, typer.Argument(metavar="NEW_TAG", help="The tag to create.")],
    force: Annotated[bool, typer.Option("--force", help="Move NEW_TAG if it already names another manifest.")] = False,
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Tag an artifact: locally (SRC_TAG NEW_TAG) or on its registry (REF NEW_TAG); never moves a tag without
    --force."""
    context = cli_context(ctx)
    output = context.output(as_json)
    if _is_remote(source):
        from oci.reference import parse_reference
        from oci.remote_tags import tag_remote

        remote = tag_remote(parse_reference(source, plain_http=plain_http), new_tag, force=force)
        if remote.replaced is not None:
            output.warning(f"moved {remote.reference} from {remote.replaced.short}")
        output.result(remote, lambda r: f"{r.reference} {r.digest}")
        return
    from oci.local_tags import tag_local

    brain = context.open_brain()
    local = tag_local(
        brain, source, new_tag, force=force, lock_timeout=context.lock_timeout, on_wait=context.wait_note()
    )
    if local.replaced is not None:
        output.warning(f"moved tag {local.tag} from {local.replaced.short}")
    output.result(local, lambda r: f"{r.tag} {r.digest}")


def untag(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="TAG", help="The local tag to remove (its blobs stay).")],
    as_json: JsonFlag = False,
) -> None:
    """Remove a local tag from index.json (the artifact's blobs are kept)."""
    from oci.local_tags import untag_local

    context = cli_context(ctx)
    brain = context.open_brain()
    result = untag_local(brain, name, lock_timeout=context.lock_timeout, on_wait=context.wait_note())
    context.output(as_json).result(result, lambda r: f"removed tag {r.tag} (was {r.digest})")
