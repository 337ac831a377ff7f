"""`boltzmann/redaction.json`: the intent of a redaction, written before its snapshot moves the head.

A redaction is two steps that cannot be one atomic write: a snapshot that tombstones the blocks (the head
moves), then the destruction of their bytes everywhere in the directory. So the intent comes first: the
block ids to tombstone, every digest whose file is to go (hex → reason) and the head it started from,
fsynced, under the writer lock. Until the destruction is complete and this file removed, the redaction
is unfinished: `verify` reports it, writers refuse (`brain redact --resume` finishes it), and nothing is
packed or pushed. If the head never moved (killed before the commit) the resume discards the intent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from brain.errors import BrainUnreadableError, RefusedError
from brain.identity import OciDigest
from brain.store.atomic import atomic_write, fsync_directory
from brain.store.sidecars import REDACTION

FORMAT = "brain.redaction/1"
RESUME = "run `brain redact --resume` to finish destroying the redacted bytes first"


@dataclass(frozen=True)
class RedactionIntent:
    """What one redaction destroys: `tombstones` (memory type → block ids), `destroy` (hex → reason)."""

    parent: OciDigest | None
    tombstones: dict[str, list[str]]
    destroy: dict[str, str]
    reason: str

    def to_bytes(self) -> bytes:
        document = {"destroy": dict(sorted(self.destroy.items())), "format": FORMAT, "reason": self.reason,
                    "parent": None if self.parent is None else str(self.parent),
                    "tombstones": {t: sorted(ids) for t, ids in sorted(self.tombstones.items())}}
        return json.dumps(document, indent=1, sort_keys=True).encode() + b"\n"

    @classmethod
    def decode(cls, data: bytes, where: Path) -> RedactionIntent:
        try:
            document = json.loads(data)
            if document.get("format") != FORMAT:
                raise ValueError(f"format is not {FORMAT}")
            parent = document["parent"]
            tombstones = {str(t): [str(i) for i in ids] for t, ids in document["tombstones"].items()}
            destroy = {str(k): str(v) for k, v in document["destroy"].items()}
            return cls(None if parent is None else OciDigest.parse(parent), tombstones, destroy,
                       str(document["reason"]))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise BrainUnreadableError(
                f"{where} (an unfinished redaction) cannot be read: {e}",
                hint="restore it from a copy of the brain; or redact the blocks again, then delete it",
            ) from None


def intent_path(root: Path) -> Path:
    """Where the intent lives in the brain at `root`."""
    return REDACTION.path(root)


def unfinished(root: Path) -> bool:
    """Whether a redaction started here has not finished destroying its bytes (one stat)."""
    return intent_path(root).exists()


def read_intent(root: Path) -> RedactionIntent | None:
    """The unfinished redaction, or None."""
    where = intent_path(root)
    try:
        data = where.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BrainUnreadableError(f"{where} cannot be read: {e.strerror}") from None
    return RedactionIntent.decode(data, where)


def write_intent(root: Path, intent: RedactionIntent) -> None:
    """Record the intent (fsynced) before the head moves; the caller holds the writer lock."""
    where = intent_path(root)
    where.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(where, intent.to_bytes())


def clear_intent(root: Path) -> None:
    """The redaction is complete: remove the intent (and make the removal durable)."""
    where = intent_path(root)
    where.unlink(missing_ok=True)
    fsync_directory(where.parent)


def refuse_if_unfinished(root: Path, what: str) -> None:
    """Raise `RefusedError` (exit 5) naming `brain redact --resume` while a redaction is unfinished."""
    if unfinished(root):
        raise RefusedError(f"{what} refused: a redaction in {root} was interrupted before its bytes were destroyed",
                           hint=RESUME)
