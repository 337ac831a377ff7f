"""Which modules a partially pulled brain lacks on purpose (§6.8 partial install).

After a partial install the head is a local snapshot of the installed modules, whose first ancestor is the
published snapshot named by `head.json`'s `origin`. The modules that snapshot has and the head does not
were left out: reads say so instead of reporting them as damage, and writes that would need them refuse.
"""

from __future__ import annotations

from collections.abc import Iterable

from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.errors import BrainError, RefusedError
from brain.identity import BlockId, OciDigest
from brain.snapshot import Snapshot
from brain.store.blobs import BlobStore
from brain.store.head import Head

# How far back `left_out_modules` looks for the partial install a snapshot descends from: enough for any
# run of local writes after a pull, and cheap enough for `status` (one small blob read per step).
_MAX_STEPS = 64


def left_out_modules(blobs: BlobStore, head: Head | None, snapshot: Snapshot) -> tuple[MemoryType, ...]:
    """The modules `snapshot` lacks because a partial install left them out, in module order.

    A write keeps every module it ever touched in `modules` (§5.3), so a module an ancestor has and
    `snapshot` lacks can only have been left out by a partial install (§6.8): the first ancestor along
    first parents whose modules differ tells which (whether this brain pulled it partially, or pulled
    a brain that was). A head recorded as a partial pull also names the published snapshot directly.
    """
    missing: set[str] = set()
    if head is not None and head.origin is not None and head.origin.partial:
        published = _stored_snapshot(blobs, head.origin.snapshot)
        if published is not None:
            missing |= set(published.modules) - set(snapshot.modules)
    current = snapshot
    for _ in range(_MAX_STEPS):
        parent = None if current.first_parent is None else _stored_snapshot(blobs, current.first_parent)
        if parent is None:
            break
        if set(parent.modules) != set(current.modules):
            missing |= set(parent.modules) - set(snapshot.modules)
            break
        current = parent
    return tuple(t for t in MODULE_ORDER if t.value in missing)


def left_out_evidence_note(
    blobs: BlobStore, head: Head | None, snapshot: Snapshot | None, evidence: Iterable[BlockId]
) -> str | None:
    """One line saying which of a block's evidence is not stored because a partial pull left its module out."""
    if snapshot is None:
        return None
    absent = [e for e in evidence if not blobs.has(e)]
    if not absent or MemoryType.CANONICAL not in left_out_modules(blobs, head, snapshot):
        return None
    shown = ", ".join(e.short for e in absent[:3]) + (f" and {len(absent) - 3} more" if len(absent) > 3 else "")
    source = head.origin.reference if head is not None and head.origin is not None else None
    pulled = f"the partial pull from {source}" if source else "a partial pull"
    return (
        f"evidence {shown} not installed: {pulled} left out the canonical module "
        "(pull again adding --module canonical to read it)"
    )


def refuse_if_left_out(
    blobs: BlobStore, head: Head | None, snapshot: Snapshot | None, needed: Iterable[MemoryType], why: str
) -> None:
    """Raise `RefusedError` when a write needs a module the partial pull behind the head left out.

    Writing without it would build on an empty stand-in: e.g. the validation gate would find no evidence,
    no duplicate and no contradiction in a module that exists upstream but is not installed here.
    """
    if snapshot is None:
        return
    wanted = set(needed)
    missing = [t for t in left_out_modules(blobs, head, snapshot) if t in wanted]
    if missing:
        names = ", ".join(str(t) for t in missing)
        flags = " ".join(f"--module {t}" for t in missing)
        source = head.origin.reference if head is not None and head.origin is not None else None
        where = f" (partial pull from {source})" if source else ""
        raise RefusedError(
            f"this brain was pulled without {names}{where}: {why}",
            hint=f"pull {source} again adding {flags}, or whole" if source else "pull a brain that has them",
        )


def _stored_snapshot(blobs: BlobStore, digest: OciDigest) -> Snapshot | None:
    try:
        return Snapshot.decode(blobs.get(digest), digest)
    except BrainError:
        return None
