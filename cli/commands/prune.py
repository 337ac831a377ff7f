"""`brain prune [--dry-run] [--keep N]`: delete blobs no retained snapshot or packed artifact reaches.

Retained: the snapshots in `head.json`'s `retained` (the newest N with `--keep N`), every branch head, every manifest in
`index.json` (with its config, layers and snapshot), and the whole parent chain of each snapshot, so no
history another reader needs to verify is cut. Stale temporary files of killed writers go too. The use
case is `brain.lifecycle.prune.prune` (deleting through the writer, under its lock).
"""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import cli_context
from cli.options import JsonFlag


def prune(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would be deleted; delete nothing.")] = False,
    keep: Annotated[
        int | None, typer.Option("--keep", metavar="N", min=1, help="Keep only the newest N retained snapshots.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Delete unreachable blobs and stale temporary files."""
    from brain.lifecycle.prune import prune as prune_brain
    from oci.retention import index_roots

    context = cli_context(ctx)
    brain = context.open_brain()
    output = context.output(as_json)
    result = prune_brain(
        brain, actor=None if dry_run else context.actor(), roots=index_roots, keep=keep, dry_run=dry_run,
        lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
    )  # fmt: skip
    verb = "would delete" if dry_run else "deleted"
    output.result(result, lambda r: [
        (f"{verb} {r.deleted_blobs} unreachable blobs ({r.deleted_bytes} bytes) and {r.deleted_temp_files} stale "
        f"temporary files; {r.kept_blobs} blobs kept for {r.retained_snapshots} retained snapshots and every tag")
    ])
