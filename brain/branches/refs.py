"""`boltzmann/refs.json` (§10.2): the branches of a brain, which one is current, and a checkout in progress.

JCS bytes without a newline, `{"boltzmann":1,"branches":{name:{"snapshot","tag","reference"?,"origin"?}},
"current":name,"switching"?:name}`. No file (or an empty one, as another implementation may leave) means one
implicit branch `main` at the head. The file is hostile until read here: it must be strict JSON in canonical
form, hold only the keys above, name valid branches and tags, and `current`/`switching` must be branches.
Whether each branch's snapshot is a stored snapshot is checked by `brain.branches.operations`, which has
the blob store. Written only through `brain.store.atomic.atomic_write`, under the writer lock.

For the current branch `head.json` is the truth: its entry lags between rewrites (`Refs.brought_up`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import ValidationError, model_validator
from typing_extensions import Self

from brain.branches.names import DEFAULT_MAIN_TAG, MAIN, TAG_PREFIX, branch_tag, is_branch_name, is_tag
from brain.errors import BrainUnreadableError, CanonicalFormError
from brain.frozen import FrozenModel
from brain.identity import OciDigest, canonicalize, parse_strict
from brain.store.atomic import atomic_write
from brain.store.origin import Origin
from brain.store.sidecars import REFS

MAX_REFS_BYTES = 16 << 20
_FIX = "restore boltzmann/refs.json from a copy of the brain, or delete it to keep only the current branch as main"


class BranchEntry(FrozenModel):
    """One branch: its head snapshot, the tag it publishes to, where it was pulled from."""

    snapshot: OciDigest
    tag: str
    reference: str | None = None
    origin: Origin | None = None

    @model_validator(mode="after")
    def _tag(self) -> Self:
        if not is_tag(self.tag):
            raise ValueError(f"tag {self.tag[:40]!r} is not an OCI tag (1-128 of [A-Za-z0-9_.-])")
        return self


class Refs(FrozenModel):
    """The whole of `refs.json`."""

    boltzmann: Literal[1] = 1
    current: str
    branches: dict[str, BranchEntry]
    switching: str | None = None

    @model_validator(mode="after")
    def _names(self) -> Self:
        for name, entry in self.branches.items():
            if not is_branch_name(name):
                raise ValueError(f"branch name {name[:40]!r} is outside the grammar of §10.1")
            # A br.* tag is a branch's own (§10.1): publishing another branch under it would overwrite that one.
            if entry.tag.startswith(TAG_PREFIX) and entry.tag != branch_tag(name, entry.tag):
                raise ValueError(f"branch {name[:40]!r} has tag {entry.tag[:40]!r}, which names another branch or none")
        if self.current not in self.branches:
            raise ValueError(f"current branch {self.current[:40]!r} is not one of its branches")
        if self.switching is not None and self.switching not in self.branches:
            raise ValueError(f"switching names {self.switching[:40]!r}, which is not one of its branches")
        return self

    def to_bytes(self) -> bytes:
        """The JCS bytes stored on disk (no trailing newline)."""
        return canonicalize(self.model_dump(mode="json", exclude_none=True))

    @property
    def main_tag(self) -> str:
        """The tag `main` publishes to: its entry's, else `latest`."""
        entry = self.branches.get(MAIN)
        return DEFAULT_MAIN_TAG if entry is None else entry.tag

    def heads(self) -> list[OciDigest]:
        """Every branch's snapshot, in name order (the order JCS reads back), repeats dropped."""
        return list(dict.fromkeys(self.branches[name].snapshot for name in sorted(self.branches)))

    def brought_up(self, head: OciDigest, origin: Origin | None) -> Refs:
        """These refs with the current branch's entry brought up to the head (§10.2)."""
        entry = self.branches[self.current]
        reference = origin.reference if origin is not None else entry.reference
        updated = BranchEntry(snapshot=head, tag=entry.tag, reference=reference, origin=origin)
        return self.with_branch(self.current, updated)

    def with_branch(self, name: str, entry: BranchEntry) -> Refs:
        """These refs with `name` set to `entry`."""
        return self.model_copy(update={"branches": {**self.branches, name: entry}})

    def without_branch(self, name: str) -> Refs:
        """These refs without `name` (never the current branch)."""
        return self.model_copy(update={"branches": {k: v for k, v in self.branches.items() if k != name}})


def main_tag_for(origin: Origin | None) -> str:
    """Main's tag when `refs.json` is first written: the origin's tag if the brain was pulled, else `latest`."""
    if origin is not None and origin.tag is not None and is_tag(origin.tag):
        return origin.tag
    return DEFAULT_MAIN_TAG


def implicit_refs(head: OciDigest, origin: Origin | None) -> Refs:
    """The refs a brain without `refs.json` has: one branch `main` at the head."""
    entry = BranchEntry(
        snapshot=head, tag=main_tag_for(origin), reference=None if origin is None else origin.reference, origin=origin
    )
    return Refs(current=MAIN, branches={MAIN: entry})


def refs_path(root: Path) -> Path:
    """Where a brain's `refs.json` lives."""
    return REFS.path(root)


def read_refs(root: Path) -> Refs | None:
    """The brain's refs, or None when `refs.json` is absent or empty (one implicit `main`).

    Raises `BrainUnreadableError` (exit 2) for anything else that is not exactly a §10.2 document.
    """
    where = refs_path(root)
    try:
        with open(where, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_REFS_BYTES:
                raise BrainUnreadableError(f"{where} is {size} bytes, more than a refs document can be", hint=_FIX)
            data = handle.read(MAX_REFS_BYTES + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise BrainUnreadableError(f"{where} is a directory, not a refs document", hint=_FIX) from None
    except OSError as e:
        raise BrainUnreadableError(f"{where} cannot be read: {e.strerror}", hint=_FIX) from e
    if not data:
        return None
    try:
        document = parse_strict(data)
    except CanonicalFormError as e:
        raise BrainUnreadableError(f"{where}: {e.message}", hint=_FIX) from e
    if not isinstance(document, dict):
        raise BrainUnreadableError(f"{where} is not a refs document: expected a JSON object", hint=_FIX)
    try:
        refs = Refs.model_validate(document)
    except ValidationError as e:
        first = e.errors()[0]
        place = ".".join(str(p) for p in first["loc"]) or "document"
        raise BrainUnreadableError(f"{where} is not a refs document: {place}: {first['msg']}", hint=_FIX) from e
    if data != refs.to_bytes():
        raise BrainUnreadableError(f"{where} is not in canonical form (JCS bytes, no trailing newline)", hint=_FIX)
    return refs


def write_refs(root: Path, refs: Refs) -> None:
    """Atomically replace `refs.json` (fsynced); the caller holds the writer lock."""
    where = refs_path(root)
    where.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(where, refs.to_bytes())


__all__ = [
    "BranchEntry",
    "Origin",
    "Refs",
    "implicit_refs",
    "main_tag_for",
    "read_refs",
    "refs_path",
    "write_refs",
]
