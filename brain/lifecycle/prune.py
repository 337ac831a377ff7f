"""`brain prune`: delete blobs no retained snapshot or packed artifact reaches, through the writer.

Retained: the snapshots in `head.json`'s `retained` (the newest N with `keep`), whatever the caller's
`roots` keep (the packed artifacts of `index.json`: `oci.retention.index_roots`), and the whole parent
chain of each snapshot, so no history another reader needs to verify is cut. Stale temporary files of
killed writers go too. Runs under the writer lock (`Writer.collect` deletes), so a blob a concurrent
commit just wrote can never be taken for garbage; a dry run reads without the lock and deletes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from brain.brain import Brain
from brain.errors import UsageError
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.lifecycle.reachability import reachable
from brain.store.atomic import TEMP_PREFIX
from brain.writer import Writer

Roots = Callable[[Brain], tuple[set[str], set[OciDigest]]]
"""(hex digests of blobs to keep as they are, snapshots to keep with their chains) besides the retained ones."""


class PruneReport(FrozenModel):
    """What prune deleted (or would, with `dry_run`)."""

    dry_run: bool
    retained_snapshots: int
    kept_blobs: int
    deleted_blobs: int
    deleted_bytes: int
    deleted_temp_files: int


def prune(
    brain: Brain,
    *,
    actor: str | None,
    roots: Roots,
    keep: int | None = None,
    dry_run: bool = False,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> PruneReport:
    """Delete what nothing retained reaches (see the module docstring); `keep` narrows `retained` to the newest N.

    `actor` (the writer's) is needed unless `dry_run`.
    """
    temps_before = _temp_files(brain.path)
    with _writer_unless(dry_run, brain, actor, lock_timeout, on_wait) as writer:
        head = brain.head()
        retained = [] if head is None else list(head.retained or (head.snapshot,))
        if head is not None and head.snapshot not in retained:
            retained.insert(0, head.snapshot)
        if keep is not None:
            if head is None:
                raise UsageError("--keep: the brain is empty")
            retained = [head.snapshot, *(d for d in retained if d != head.snapshot)][:keep]
        blobs, tagged = roots(brain)
        keep_hex = reachable(brain, [*retained, *tagged]) | blobs
        doomed = [(d, _size(brain, d.hex)) for d in brain.blobs.digests() if d.hex not in keep_hex]
        deleted = 0
        if writer is not None:
            narrowed = tuple(retained) if head is not None and keep is not None else None
            deleted = writer.collect((d for d, _ in doomed), retained=narrowed)
    temps = temps_before - _temp_files(brain.path) if not dry_run else temps_before
    return PruneReport(
        dry_run=dry_run,
        retained_snapshots=len(retained),
        kept_blobs=len(keep_hex),
        deleted_blobs=len(doomed) if dry_run else deleted,
        deleted_bytes=sum(size for _, size in doomed),
        deleted_temp_files=max(temps, 0),
    )


@contextmanager
def _writer_unless(
    dry_run: bool, brain: Brain, actor: str | None, lock_timeout: float | None, on_wait: Callable[[str], None] | None
) -> Iterator[Writer | None]:
    # Taking the lock sweeps the temp files killed writers left; a dry run reads without it (and sweeps nothing).
    if dry_run or actor is None:
        if not dry_run:
            raise UsageError("prune deletes blobs under the writer lock: it needs an actor")
        yield None
        return
    with brain.writer(actor, lock_timeout, on_wait) as writer:
        yield writer


def _size(brain: Brain, hex_digest: str) -> int:
    try:
        return os.stat(os.path.join(brain.blobs.directory, hex_digest)).st_size
    except OSError:
        return 0


def _temp_files(root: Path) -> int:
    count = 0
    for directory in ("blobs/sha256", "boltzmann", "boltzmann/cache"):
        try:
            count += sum(1 for name in os.listdir(os.path.join(root, directory)) if name.startswith(TEMP_PREFIX))
        except OSError:
            continue
    return count


__all__ = ["PruneReport", "Roots", "prune"]
