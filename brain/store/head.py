"""`boltzmann/head.json`: the one mutable pointer naming the current snapshot (§5.5).

Written as JCS bytes without a newline, always last in a commit; read with the strict parser but
without requiring canonical form, as the reference does. A missing file means an empty brain.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from brain.errors import BrainUnreadableError, CanonicalFormError
from brain.frozen import FrozenModel
from brain.identity import OciDigest, canonicalize, parse_strict
from brain.store.atomic import atomic_write
from brain.store.sidecars import HEAD

HEAD_FILE = HEAD.parts
DEFAULT_RETAINED = 10
_FIX = "restore boltzmann/head.json from a copy of the brain, or point it at a stored snapshot"


class Origin(FrozenModel):
    """Where the current snapshot was pulled from (only after a pull)."""

    partial: bool
    reference: str
    snapshot: OciDigest
    tag: str | None = None


class Head(FrozenModel):
    """The current snapshot and the snapshots kept reachable (newest first, head first)."""

    boltzmann: Literal[1] = 1
    snapshot: OciDigest
    retained: tuple[OciDigest, ...] = ()
    origin: Origin | None = None

    def to_bytes(self) -> bytes:
        """The JCS bytes stored on disk."""
        return canonicalize(self.model_dump(mode="json", exclude_none=True))

    def advance(self, snapshot: OciDigest, keep: int = DEFAULT_RETAINED, origin: Origin | None = None) -> Head:
        """The head after committing `snapshot` on top of this one (origin is dropped unless given)."""
        return Head.first(snapshot, keep, origin, previous=(self.snapshot, *self.retained))

    @staticmethod
    def first(
        snapshot: OciDigest,
        keep: int = DEFAULT_RETAINED,
        origin: Origin | None = None,
        previous: tuple[OciDigest, ...] = (),
    ) -> Head:
        """A head naming `snapshot`, followed by up to `keep - 1` of `previous` (deduplicated)."""
        retained = [snapshot, *(d for d in dict.fromkeys(previous) if d != snapshot)]
        return Head(snapshot=snapshot, retained=tuple(retained[: max(keep, 1)]), origin=origin)


def head_path(root: Path) -> Path:
    """Where a brain's head pointer lives."""
    return Path(root).joinpath(*HEAD_FILE)


def read_head(root: Path) -> Head | None:
    """The brain's head, or None when `head.json` does not exist (an empty brain)."""
    where = head_path(root)
    try:
        data = where.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BrainUnreadableError(f"{where} cannot be read: {e.strerror}", hint=_FIX) from e
    if not data.strip():
        raise BrainUnreadableError(f"{where} is empty", hint=_FIX)
    try:
        return Head.model_validate(parse_strict(data))
    except CanonicalFormError as e:
        # e.message says what is wrong ("not JSON: ...", "duplicate key ..."): prefixing only the file reads once.
        raise BrainUnreadableError(f"{where}: {e.message}", hint=_FIX) from e
    except ValidationError as e:
        first = e.errors()[0]
        place = ".".join(str(p) for p in first["loc"]) or "document"
        raise BrainUnreadableError(f"{where} is not a head pointer: {place}: {first['msg']}", hint=_FIX) from e


def write_head(root: Path, head: Head) -> None:
    """Atomically replace the head pointer (the last step of every commit), then tell the listeners."""
    where = head_path(root)
    where.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(where, head.to_bytes())
    head_moved(root)


# Called with the brain's root after every head move (ingest, pull, lifecycle commands all write the head
# here, under the writer lock): keeps sidecars that describe the head current as part of the command's
# work. `brain` imports none of its users; the CLI registers them (`retrieval.index.follow_head`).
_HEAD_LISTENERS: list[Callable[[Path], None]] = []


def on_head_moved(listener: Callable[[Path], None]) -> None:
    """Register `listener(root)` to run after each head move in this process (once per listener)."""
    if listener not in _HEAD_LISTENERS:
        _HEAD_LISTENERS.append(listener)


def head_moved(root: Path) -> None:
    """Run the listeners (each handles its own failures: the head has moved whatever they do)."""
    for listener in tuple(_HEAD_LISTENERS):
        listener(root)
