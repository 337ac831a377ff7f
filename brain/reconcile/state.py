"""`boltzmann/reconcile.json`: a halted reconciliation (§10.6), read as hostile input and written as JCS.

The shape is exactly §10.6's; reading refuses non-strict JSON, unknown keys, a wrong type anywhere and any
document whose JCS re-serialization differs. An empty file (the reference's "cleared") reads as absent;
ours deletes the file instead. Writes go through the one atomic helper, under the writer lock (the
caller's).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError, model_validator
from typing_extensions import Self

from brain.blocks.fields import Timestamp
from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import Actor
from brain.errors import BrainUnreadableError, CanonicalFormError
from brain.frozen import FrozenModel
from brain.identity import BlockId, OciDigest, canonicalize, parse_strict
from brain.store.atomic import atomic_write, fsync_directory
from brain.store.sidecars import RECONCILE

Strategy = Literal["merge", "rebase", "squash"]
STRATEGIES: tuple[Strategy, ...] = ("merge", "rebase", "squash")
_MAX_STATE = 64 << 20
_FIX = "see `brain reconcile status`; `brain reconcile abort` discards it"


class Resolution(FrozenModel):
    """An answer to one open question."""

    kind: Literal["admit", "reject", "prefer"]
    prefer: BlockId | None = None
    actor: Actor
    reason: Annotated[str, Field(min_length=1)] | None = None
    at: Timestamp

    @model_validator(mode="after")
    def _prefer_names_a_winner(self) -> Self:
        if (self.kind == "prefer") != (self.prefer is not None):
            raise ValueError("`prefer` is given exactly when kind is prefer")
        return self


class AcceptedRemovals(FrozenModel):
    """The one statement accepting the plan's withdrawn blocks."""

    blocks: dict[MemoryType, tuple[BlockId, ...]]
    actor: Actor
    reason: Annotated[str, Field(min_length=1)] | None = None
    at: Timestamp


class ReconcileState(FrozenModel):
    """The §10.6 document."""

    boltzmann: Literal[1] = 1
    theirs: OciDigest
    ancestor: OciDigest
    strategy: Strategy
    actor: Actor
    reason: Annotated[str, Field(min_length=1)]
    head: OciDigest
    resolutions: dict[BlockId, Resolution] = Field(default_factory=dict)
    accepted_removals: AcceptedRemovals | None = None

    def to_bytes(self) -> bytes:
        """JCS bytes, no trailing newline (`resolutions` always present, absent optionals omitted)."""
        document = self.model_dump(mode="json", exclude_none=True)
        document.setdefault("resolutions", {})  # always present, `{}` when empty (§10.6)
        return canonicalize(document)


def state_path(root: Path) -> Path:
    """Where a brain keeps its halted reconciliation."""
    return RECONCILE.path(root)


def read_state(root: Path) -> ReconcileState | None:
    """The halted reconciliation, or None (no file, or an empty one); a hostile file is refused in one line."""
    where = state_path(root)
    try:
        with open(where, "rb") as handle:
            data = handle.read(_MAX_STATE + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BrainUnreadableError(f"{where} cannot be read: {e.strerror}", hint=_FIX) from e
    if not data:
        return None
    if len(data) > _MAX_STATE:
        raise BrainUnreadableError(f"{where} is over {_MAX_STATE >> 20} MiB: not a reconciliation state", hint=_FIX)
    try:
        state = ReconcileState.model_validate(parse_strict(data))
    except CanonicalFormError as e:
        raise BrainUnreadableError(f"{where}: {e.message}", hint=_FIX) from e
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        place = ".".join(str(p) for p in first["loc"]) or "document"
        raise BrainUnreadableError(f"{where} is not a reconciliation state: {place}: {first['msg']}", hint=_FIX) from e
    if state.to_bytes() != data:
        raise BrainUnreadableError(f"{where} is not in canonical form (JCS, §10.6)", hint=_FIX)
    return state


def write_state(root: Path, state: ReconcileState) -> None:
    """Replace the state atomically (fsynced); the caller holds the writer lock."""
    where = state_path(root)
    where.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(where, state.to_bytes())


def clear_state(root: Path) -> bool:
    """Delete the state (ours deletes; it never leaves an empty file); whether there was one."""
    where = state_path(root)
    try:
        os.unlink(where)
    except FileNotFoundError:
        return False
    with contextlib.suppress(OSError):
        fsync_directory(where.parent)
    return True
