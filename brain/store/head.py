"""`boltzmann/head.json`: the one mutable pointer naming the current snapshot (§5.5).

Written as JCS bytes without a newline, always last in a commit; read with the strict parser but
without requiring canonical form, as the reference does. A missing file means an empty brain.

`retained` with branches (§10.2), exactly: start from [new head, snapshots the write asks to retain, the old
`retained`...]; drop repeats and every branch head except the new head itself; cut to the bound (10 by
default); then append every branch head not yet listed, in `refs.json`'s name order. `Head.first` and
`Head.advance` remember that uncut start, and `write_head` applies the rule against the branch heads of
`refs.json` (or of the refs a write is about to store), so every writer of `head.json` keeps every branch
reachable for a prune that reads only `head.json`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import PrivateAttr, ValidationError

from brain.errors import BrainUnreadableError, CanonicalFormError
from brain.frozen import FrozenModel
from brain.identity import OciDigest, canonicalize, parse_strict
from brain.store.atomic import atomic_write
from brain.store.origin import Origin
from brain.store.sidecars import HEAD

if TYPE_CHECKING:
    from brain.branches.refs import Refs

HEAD_FILE = HEAD.parts
DEFAULT_RETAINED = 10
_FIX = "restore boltzmann/head.json from a copy of the brain, or point it at a stored snapshot"


class Head(FrozenModel):
    """The current snapshot and the snapshots kept reachable (newest first, head first)."""

    boltzmann: Literal[1] = 1
    snapshot: OciDigest
    retained: tuple[OciDigest, ...] = ()
    origin: Origin | None = None
    # The uncut start of `retained` and its bound, when this head was made by `first`/`advance`.
    _start: tuple[OciDigest, ...] | None = PrivateAttr(default=None)
    _keep: int | None = PrivateAttr(default=None)
    _made: tuple[OciDigest, ...] | None = PrivateAttr(default=None)  # the `retained` they produced

    def __eq__(self, other: object) -> bool:
        # The remembered start is bookkeeping for `with_branch_heads`: two heads are equal when their fields are.
        if not isinstance(other, Head):
            return NotImplemented
        return (self.snapshot, self.retained, self.origin) == (other.snapshot, other.retained, other.origin)

    __hash__ = FrozenModel.__hash__

    def to_bytes(self) -> bytes:
        """The JCS bytes stored on disk."""
        return canonicalize(self.model_dump(mode="json", exclude_none=True))

    def advance(
        self,
        snapshot: OciDigest,
        keep: int = DEFAULT_RETAINED,
        origin: Origin | None = None,
        also: Sequence[OciDigest] = (),
        branch_heads: Sequence[OciDigest] = (),
    ) -> Head:
        """The head after committing `snapshot` on top of this one (origin is dropped unless given).

        `also`: snapshots the write asks to retain (after the new head, before the old retained ones).
        """
        return Head.first(snapshot, keep, origin, previous=(*also, self.snapshot, *self.retained),
                          branch_heads=branch_heads)

    @staticmethod
    def first(
        snapshot: OciDigest,
        keep: int = DEFAULT_RETAINED,
        origin: Origin | None = None,
        previous: tuple[OciDigest, ...] = (),
        branch_heads: Sequence[OciDigest] = (),
    ) -> Head:
        """A head naming `snapshot`, then up to `keep - 1` of `previous`, then the branch heads (§10.2)."""
        start = tuple(dict.fromkeys((snapshot, *previous)))
        return Head(snapshot=snapshot, retained=retained_with(start, keep, branch_heads), origin=origin)._remember(
            start, keep
        )

    def _remember(self, start: tuple[OciDigest, ...], keep: int) -> Head:
        self._start, self._keep, self._made = start, keep, self.retained
        return self

    def with_branch_heads(self, branch_heads: Sequence[OciDigest]) -> Head:
        """This head with `retained` recomputed by §10.2's rule for `branch_heads` (same snapshot and origin)."""
        # The uncut start counts only while `retained` is still what it made (a `model_copy` may have changed it).
        known = self._start is not None and self._made == self.retained
        start = self._start if known and self._start is not None else (self.snapshot, *self.retained)
        keep = self._keep if known and self._keep is not None else DEFAULT_RETAINED
        retained = retained_with(start, keep, branch_heads)
        head = self if retained == self.retained else self.model_copy(update={"retained": retained})
        return head._remember(start, keep)


def retained_with(start: Sequence[OciDigest], keep: int, branch_heads: Sequence[OciDigest]) -> tuple[OciDigest, ...]:
    """§10.2: `start` (new head first) without repeats and other branch heads, cut to `keep`, then the branch heads."""
    ordered = list(dict.fromkeys(start))
    if not ordered:
        return ()
    new = ordered[0]
    others = {b for b in branch_heads if b != new}
    kept = [d for d in ordered if d not in others][: max(keep, 1)]
    listed = set(kept)
    for branch_head in branch_heads:
        if branch_head not in listed:
            kept.append(branch_head)
            listed.add(branch_head)
    return tuple(kept)


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


def write_head(root: Path, head: Head, refs: Refs | None = None) -> Head:
    """Atomically replace the head pointer (the last step of every commit), tell the listeners
    (`on_head_moved`); returns the head written.

    `retained` gets every branch head of `refs` (default: the brain's `refs.json`) by §10.2's rule.
    """
    from brain.branches.refs import read_refs

    where = head_path(root)
    where.parent.mkdir(parents=True, exist_ok=True)
    if refs is None:
        refs = read_refs(root)
    if refs is not None:
        head = head.with_branch_heads(refs.heads())
    atomic_write(where, head.to_bytes())
    head_moved(root)
    return head


# Called with the brain's root after every head move (ingest, pull, lifecycle commands all write the head
# here, under the writer lock): keeps sidecars that describe the head current as part of the command's
# work. `brain` imports none of its users; the CLI registers them (`cli.index_upkeep`). The second argument
# is 0 for a final move, else what the interim move committed (`interim_moves`).
_HEAD_LISTENERS: list[Callable[[Path, int], None]] = []
_INTERIM: list[int] = []  # what each `interim_moves` block the process is inside commits, innermost last


def on_head_moved(listener: Callable[[Path, int], None]) -> None:
    """Register `listener(root, interim)` to run after each head move in this process (once per listener);
    `interim` is 0 for a final move, else the work an interim move committed (`interim_moves`)."""
    if listener not in _HEAD_LISTENERS:
        _HEAD_LISTENERS.append(listener)


@contextlib.contextmanager
def interim_moves(work: int) -> Iterator[None]:
    """Mark the head moves inside as interim: the command that makes them moves the head again before it ends
    (an ingest's checkpoints before its last), so a listener may start its work on them in the background
    instead of doing it all when the command ends. `work` (≥ 1): how much such a move commits, in the command's
    own unit (sources, for an ingest), for a listener to judge whether background work is worth its start."""
    _INTERIM.append(max(1, work))
    try:
        yield
    finally:
        _INTERIM.pop()


def head_moved(root: Path) -> None:
    """Run the listeners (each handles its own failures: the head has moved whatever they do)."""
    interim = _INTERIM[-1] if _INTERIM else 0
    for listener in tuple(_HEAD_LISTENERS):
        listener(root, interim)


__all__ = [
    "DEFAULT_RETAINED", "HEAD_FILE", "Head", "Origin", "head_moved", "head_path", "interim_moves", "on_head_moved",
    "read_head", "retained_with", "write_head",
]
