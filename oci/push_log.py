"""`boltzmann/pushes.json`: every manifest this brain pushed, so a later redaction can name the remote copies.

One entry per push: the repository (normalized, `Reference.repository_key`), the tag, the manifest digest
and the snapshot it packs. A registry keeps a manifest pullable by digest after its tag moves, so the log
keeps every entry; `oci.redaction.remote_copies` reads it (with `remotes.json`) to list each tag and digest
known to hold redacted bytes, and the command that deletes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from brain.brain import Brain
from brain.frozen import FrozenModel
from brain.identity import OciDigest, utc_timestamp
from brain.store.atomic import atomic_write
from brain.store.lock import WriterLock
from brain.store.sidecars import PUSHES
from oci.reference import Reference

FORMAT = "brain.pushes/1"
_MAX_ENTRIES = 10_000  # the oldest go first beyond this: a log, not a database


class PushEntry(FrozenModel):
    """One push: where, under which tag, which manifest, packing which snapshot, and when."""

    repository: str
    tag: str
    digest: OciDigest
    snapshot: OciDigest
    at: str
    plain_http: bool = False


def read_pushes(brain: Brain) -> list[PushEntry]:
    """The entries, oldest first (an absent or unreadable log: none; it is a record, never an authority)."""
    try:
        document = json.loads(PUSHES.path(brain.path).read_bytes())
        rows = document["pushes"] if document.get("format") == FORMAT else []
        return [PushEntry.model_validate(row) for row in rows]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def record_push(brain: Brain, reference: Reference, tag: str, digest: OciDigest, snapshot: OciDigest, *,
                lock_timeout: float | None = None, on_wait: Callable[[str], None] | None = None) -> None:
    """Append one push (a repeated one is not listed twice), under the writer lock."""
    entry = PushEntry(repository=reference.repository_key, tag=tag, digest=digest, snapshot=snapshot,
                      at=utc_timestamp(), plain_http=reference.plain_http)
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        kept = [e for e in read_pushes(brain) if (e.repository, e.tag, e.digest) != (entry.repository, tag, digest)]
        rows = [e.model_dump(mode="json") for e in [*kept, entry][-_MAX_ENTRIES:]]
        path = PUSHES.path(brain.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"format": FORMAT, "pushes": rows}, indent=1, sort_keys=True).encode() + b"\n")
