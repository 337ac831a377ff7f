"""`brain push REF`: publish the packed artifact of REF's tag to a registry (packing it first if needed)."""

from __future__ import annotations

from typing import Annotated

import typer

from brain.errors import UsageError
from cli.context import cli_context
from cli.options import JsonFlag
from cli.transfer import PlainHttpFlag, blob_progress


def push(
    ctx: typer.Context,
    reference: Annotated[
        str, typer.Argument(metavar="REF", help="HOST[:PORT]/REPOSITORY[:TAG] (no TAG: the current branch's tag)")
    ],
    force: Annotated[bool, typer.Option("--force", help="Overwrite a remote tag that has diverged.")] = False,
    as_packed: Annotated[
        bool,
        typer.Option("--packed", help="Publish the tag exactly as packed, even if it lags the current head."),
    ] = False,
    immutable: Annotated[
        bool,
        typer.Option("--immutable", help="Refuse if the remote tag already names another manifest (release tags).")
    ] = False,
    allow_narrowing: Annotated[
        bool, typer.Option("--allow-narrowing", help="Publish fewer modules than the tag's artifact holds now.")
    ] = False,
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Push the current head to a registry (re-packing a lagging tag); prints the manifest digest."""
    from brain.store.lock import refuse_while_reconciling
    from oci.push import push as push_artifact
    from oci.reference import parse_reference

    context = cli_context(ctx)
    if immutable and force:
        raise UsageError("--immutable and --force contradict each other", hint="drop one of them")
    ref = parse_reference(reference, plain_http=plain_http)
    brain = context.open_brain()
    refuse_while_reconciling(brain.path, "push")  # §10.6 (ours): a halted reconciliation is not published
    output = context.output(as_json)
    with blob_progress(output) as progress:
        result = push_artifact(
            brain, ref, force=force, progress=progress, lock_timeout=context.lock_timeout, as_packed=as_packed,
            on_wait=context.wait_note(), immutable=immutable, allow_narrowing=allow_narrowing,
        )
    if result.stale and result.head is not None:  # stale: packed from an older snapshot than the head
        output.warning(
            f"tag {result.tag} was packed from snapshot {result.snapshot.short}, not the current head "
            f"{result.head.short} (--packed); drop --packed to publish the head"
        )
    if result.repacked_from is not None:
        output.message(
            f"re-packed tag {result.tag} from the current head (it was packed from {result.repacked_from.short})"
        )
    elif result.packed:
        output.message(f"packed the current snapshot as tag {result.tag}")
    output.message(
        f"pushed {result.reference}: {result.blobs_uploaded} blob(s) uploaded "
        f"({result.bytes_uploaded} bytes), {result.blobs_present} already there"
    )
    if brain.blobs.destroyed():
        from oci.redaction import copies_after_push

        for copy in copies_after_push(brain, ref, result.replaced):
            output.warning(copy.line())
    output.result(result, lambda r: str(r.digest))

