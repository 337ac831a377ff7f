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


def left_out_modules(blobs: BlobStore, head: Head | None, snapshot: Snapshot) -> tuple[MemoryType, ...]:
    """The modules of the published snapshot `head.origin` names that `snapshot` (a head snapshot) lacks.

    Empty unless the head records a partial pull whose published snapshot is stored and readable.
    """
    if head is None or head.origin is None or not head.origin.partial:
        return ()
    published = _stored_snapshot(blobs, head.origin.snapshot)
    if published is None:
        return ()
    return tuple(t for t in MODULE_ORDER if t.value in published.modules and t.value not in snapshot.modules)


def _stored_snapshot(blobs: BlobStore, digest: OciDigest) -> Snapshot | None:
    try:
        return Snapshot.decode(blobs.get(digest), digest)
    except BrainError:
        return None


def left_out_evidence_note(
    blobs: BlobStore, head: Head | None, snapshot: Snapshot | None, evidence: Iterable[BlockId]
) -> str | None:
    """One line saying which of a block's evidence is not stored because a partial pull left its module out."""
    if snapshot is None:
        return None
    absent = [e for e in evidence if not blobs.has(e)]
    if not absent or head is None or head.origin is None:
        return None
    if MemoryType.CANONICAL not in left_out_modules(blobs, head, snapshot):
        return None
    shown = ", ".join(e.short for e in absent[:3]) + (f" and {len(absent) - 3} more" if len(absent) > 3 else "")
    return (
        f"evidence {shown} not installed: the partial pull from {head.origin.reference} left out the canonical "
        "module (pull again adding --module canonical to read it)"
    )


def refuse_if_left_out(
    blobs: BlobStore, head: Head | None, snapshot: Snapshot | None, needed: Iterable[MemoryType], why: str
) -> None:
    """Raise `RefusedError` when a write needs a module the partial pull behind the head left out.

    Writing without it would build on an empty stand-in: e.g. the validation gate would find no evidence,
    no duplicate and no contradiction in a module that exists upstream but is not installed here.
    """
    if snapshot is None or head is None or head.origin is None:
        return
    wanted = set(needed)
    missing = [t for t in left_out_modules(blobs, head, snapshot) if t in wanted]
    if missing:
        names = ", ".join(str(t) for t in missing)
        flags = " ".join(f"--module {t}" for t in missing)
        raise RefusedError(
            f"this brain was pulled without {names} (partial pull from {head.origin.reference}): {why}",
            hint=f"pull {head.origin.reference} again adding {flags}, or whole",
        )
