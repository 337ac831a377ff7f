"""`brain prune [--dry-run] [--keep N]`: delete blobs no retained snapshot or packed artifact reaches.

Retained: the snapshots in `head.json`'s `retained` (the newest N with `--keep N`), every branch head, every manifest in
`index.json` (with its config, layers and snapshot), and the whole parent chain of each snapshot, so no
history another reader needs to verify is cut. Stale temporary files of killed writers go too. Runs under
the writer lock, so a blob a concurrent commit just wrote can never be taken for garbage.
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from typing import Annotated

import typer

from brain.brain import Brain
from brain.errors import UsageError
from brain.lifecycle.reachability import reachable
from brain.store import write_head
from brain.store.atomic import TEMP_PREFIX, sweep_temps
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Result


class PruneResult(Result):
    """What prune deleted (or would, with --dry-run)."""

    dry_run: bool
    retained_snapshots: int
    kept_blobs: int
    deleted_blobs: int
    deleted_bytes: int
    deleted_temp_files: int


def prune(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would be deleted; delete nothing.")] = False,
    keep: Annotated[
        int | None, typer.Option("--keep", metavar="N", min=1, help="Keep only the newest N retained snapshots.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Delete unreachable blobs and stale temporary files."""
    from brain.branches.operations import branch_heads
    from oci.retention import index_roots

    context = cli_context(ctx)
    brain = context.open_brain()
    output = context.output(as_json)
    temps_before = _temp_files(brain.path)
    # Taking the lock sweeps the temp files killed writers left; a dry run reads without it (and sweeps nothing).
    with nullcontext() if dry_run else context.writer(brain):
        head = brain.head()
        retained = [] if head is None else list(head.retained or (head.snapshot,))
        if head is not None and head.snapshot not in retained:
            retained.insert(0, head.snapshot)
        if keep is not None:
            if head is None:
                raise UsageError("--keep: the brain is empty")
            retained = [head.snapshot, *(d for d in retained if d != head.snapshot)][:keep]
        blobs, tagged = index_roots(brain)
        keep_hex = reachable(brain, [*retained, *branch_heads(brain), *tagged]) | blobs
        doomed = [(d, _size(brain, d.hex)) for d in brain.blobs.digests() if d.hex not in keep_hex]
        deleted = 0
        if not dry_run:
            if head is not None and keep is not None and tuple(retained) != head.retained:
                write_head(brain.path, head.model_copy(update={"retained": tuple(retained)}))
            for digest, _ in doomed:
                deleted += brain.blobs.delete(digest)
            sweep_temps(brain.path / "boltzmann" / "cache", float("inf"))
    temps = temps_before - _temp_files(brain.path) if not dry_run else temps_before
    result = PruneResult(
        dry_run=dry_run,
        retained_snapshots=len(retained),
        kept_blobs=len(keep_hex),
        deleted_blobs=len(doomed) if dry_run else deleted,
        deleted_bytes=sum(size for _, size in doomed),
        deleted_temp_files=max(temps, 0),
    )
    verb = "would delete" if dry_run else "deleted"
    output.result(result, lambda r: [
        (f"{verb} {r.deleted_blobs} unreachable blobs ({r.deleted_bytes} bytes) and {r.deleted_temp_files} stale "
        f"temporary files; {r.kept_blobs} blobs kept for {r.retained_snapshots} retained snapshots and every tag")
    ])


def _size(brain: Brain, hex_digest: str) -> int:
    try:
        return os.stat(os.path.join(brain.blobs.directory, hex_digest)).st_size
    except OSError:
        return 0


def _temp_files(root: os.PathLike[str]) -> int:
    count = 0
    for directory in ("blobs/sha256", "boltzmann", "boltzmann/cache"):
        try:
            count += sum(1 for name in os.listdir(os.path.join(root, directory)) if name.startswith(TEMP_PREFIX))
        except OSError:
            continue
    return count


