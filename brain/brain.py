"""The `Brain` facade: opens a brain directory and hands out reads, proofs, history and the writer.

Thin on purpose: bytes live in `brain.store`, membership in `brain.module`, the ledger in `brain.ledger`
and the write path in `brain.writer`. Reads never modify the directory; opening reads only `oci-layout`,
and `snapshot()` reads only `head.json` and the snapshot blob, so `status` is cheap at any size.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from brain.blocks.base import Block
from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.composition import Composition, ModuleRef
from brain.errors import (
    AmbiguousIdError,
    BrainError,
    BrainUnreadableError,
    ConflictError,
    IntegrityError,
    InvalidInputError,
    NotABrainError,
    NotFoundError,
)
from brain.identity import BlockId, OciDigest
from brain.identity.names import id_digits, shown
from brain.ledger import Ledger
from brain.merkle import InclusionProof
from brain.module import DestroyedBlockError, Module, read_block
from brain.snapshot import Snapshot
from brain.store import BlobStore, Head, Layout, read_head
from brain.branches.refs import read_refs
from brain.store.head import head_path
from brain.store.lock import WriterLock
from brain.writer import Writer

_HEX = frozenset("0123456789abcdef")
_MAX_SNAPSHOT = 16 << 20
D = TypeVar("D", BlockId, OciDigest)
_FIX = "restore the file from a copy of the brain or pull it again, then run `brain verify`"


def _hex(block_id: BlockId) -> str:
    return block_id.hex


class Brain:
    """A brain directory: an OCI image layout plus `boltzmann/head.json`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.blobs = BlobStore(self.path)
        self.layout = Layout(self.path)
        self._compositions: dict[OciDigest, Composition] = {}

    @classmethod
    def init(cls, path: Path) -> Brain:
        """Create an empty brain at `path` (a missing or empty directory)."""
        path = Path(path)
        if (path / "oci-layout").exists():
            raise ConflictError(f"{path} is already a brain", hint="open it instead, or choose another directory")
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise ConflictError(f"{path} exists and is not an empty directory", hint="choose a new or empty directory")
        path.mkdir(parents=True, exist_ok=True)
        Layout(path).create()
        head_path(path).parent.mkdir(exist_ok=True)
        return cls(path)

    @classmethod
    def open(cls, path: Path) -> Brain:
        """Open an existing brain; raises `NotABrainError` if `path` is not one.

        A checkout a crash interrupted is repaired here, before anything can write (§10.2, §10.8 item 10).
        """
        path = Path(path)
        if not path.is_dir():
            raise NotABrainError(f"{path} is not a brain: no such directory", hint="create one with `brain init`")
        Layout(path).check()
        _repair_checkout(path)
        return cls(path)

    # --- the current state -------------------------------------------------------------------------

    def head(self) -> Head | None:
        """The head pointer, or None for an empty brain."""
        return read_head(self.path)

    def snapshot_digest(self) -> OciDigest | None:
        """The digest of the current snapshot, or None for an empty brain."""
        head = self.head()
        return None if head is None else head.snapshot

    def snapshot(self, digest: OciDigest | None = None) -> Snapshot | None:
        """The snapshot `digest` (default: the head's), verified; None for an empty brain."""
        if digest is None:
            digest = self.snapshot_digest()
            if digest is None:
                return None
            return self._load_snapshot(digest, "the head pointer boltzmann/head.json")
        return self._load_snapshot(digest, None)

    def _load_snapshot(self, digest: OciDigest, named_by: str | None) -> Snapshot:
        try:
            data = self.blobs.get(digest)
        except NotFoundError:
            if named_by is None:
                raise NotFoundError(f"snapshot {digest} is not stored in {self.path}") from None
            raise BrainUnreadableError(
                f"{named_by} names snapshot {digest}, which is not stored at {self.blobs.path(digest)}",
                hint="restore the blob or point head.json at a stored snapshot",
            ) from None
        try:
            return Snapshot.decode(data, digest)
        except (IntegrityError, InvalidInputError) as e:
            raise IntegrityError(
                f"snapshot {digest} at {self.blobs.path(digest)} is unreadable: {e.message}", hint=_FIX
            ) from e

    def composition(self, ref: ModuleRef) -> Composition:
        """The composition a module reference names, verified against its root, type and count."""
        cached = self._compositions.get(ref.composition)
        if cached is not None:
            return cached
        where = self.blobs.path(ref.composition)
        try:
            data = self.blobs.get(ref.composition)
        except NotFoundError:
            raise BrainUnreadableError(
                f"the {ref.memory_type} module names composition {ref.composition}, which is not stored at {where}",
                hint="restore the blob or pull the brain again",
            ) from None
        try:
            composition = Composition.decode(data, ref.composition)
        except (IntegrityError, InvalidInputError) as e:
            raise IntegrityError(
                f"composition {ref.composition} at {where} is unreadable: {e.message}", hint=_FIX
            ) from e
        self._decoded(composition)
        problem = _ref_mismatch(ref, composition)
        if problem is not None:
            raise IntegrityError(f"composition {ref.composition} at {where} {problem}", hint=_FIX)
        self._compositions[ref.composition] = composition
        return composition

    def _decoded(self, composition: Composition) -> None:
        """Called with each composition read, before its root is checked (a server keeps its tree here)."""

    def member_set(self, ref: ModuleRef) -> frozenset[BlockId]:
        """The members of the composition `ref` names, as a set (a long-lived brain keeps it)."""
        return frozenset(self.composition(ref).block_ids)

    def built(
        self, composition: Composition, members: Callable[[], frozenset[BlockId]], replaced: OciDigest | None = None
    ) -> None:
        """The writer just stored `composition` (`members()` its member set, root computed from them) and committed
        a snapshot naming it in place of the composition `replaced` (None: the module is new): a long-lived brain
        (a server's) keeps it; a command lets it go (and never copies the set)."""

    def modules(self, snapshot: Snapshot | OciDigest | None = None) -> dict[MemoryType, Module]:
        """Every module of `snapshot` (default: the head), in module order; {} for an empty brain."""
        snap = self._resolve_snapshot(snapshot)
        if snap is None:
            return {}
        refs: Mapping[MemoryType, ModuleRef] = {MemoryType(k): v for k, v in snap.modules.items()}
        return {t: self._module(refs[t]) for t in MODULE_ORDER if t in refs}

    def module(self, memory_type: MemoryType, snapshot: Snapshot | OciDigest | None = None) -> Module:
        """One module of `snapshot` (default: the head); raises `NotFoundError` if it is not installed."""
        snap = self._resolve_snapshot(snapshot)
        refs = {} if snap is None else {MemoryType(k): v for k, v in snap.modules.items()}
        if memory_type not in refs:
            raise NotFoundError(f"the brain at {self.path} has no {memory_type} module")
        return self._module(refs[memory_type])

    def _module(self, ref: ModuleRef) -> Module:
        return Module(ref.memory_type, ref, self.blobs, load=lambda: self.composition(ref).block_ids)

    def _resolve_snapshot(self, snapshot: Snapshot | OciDigest | None) -> Snapshot | None:
        if isinstance(snapshot, Snapshot):
            return snapshot
        return self.snapshot(snapshot)

    # --- blocks, proofs, history, ledger --------------------------------------------------------

    def resolve(self, block_id: BlockId) -> Block:
        """The stored block `block_id`, re-hashed and decoded (§1.5)."""
        try:
            return read_block(self.blobs, block_id)
        except NotFoundError:
            snapshot = self.snapshot()
            for ref in () if snapshot is None else snapshot.modules.values():
                if block_id in (ref.tombstones or ()):
                    raise DestroyedBlockError(
                        f"block {block_id} of the {ref.memory_type} module was redacted: "
                        "it stays a member but its bytes are destroyed"
                    ) from None
            raise NotFoundError(f"block {block_id} is not stored in {self.path}") from None

    def resolve_prefix(self, prefix: str) -> BlockId:
        """The unique member id of the current modules starting with `prefix` (`sha256:` optional)."""
        text = id_digits(prefix)
        found: set[BlockId] = set()
        for module in self.modules().values():
            ids = module.block_ids  # sorted, so the matches are one contiguous run
            start = bisect.bisect_left(ids, text, key=_hex)
            while start < len(ids) and ids[start].hex.startswith(text) and len(found) < 1000:
                found.add(ids[start])
                start += 1
        return _unique(
            sorted(found), prefix, "block", none=f"no block in the current snapshot starts with {shown(prefix)}"
        )

    def resolve_snapshot_prefix(self, prefix: str) -> OciDigest:
        """The stored snapshot whose digest starts with `prefix` (at least 4 hex digits, `sha256:` optional).

        A full digest is taken as given once stored (checking what it holds is the caller's job); a shorter
        prefix must match exactly one stored blob that decodes as a snapshot, as `brain log` prints them.
        """
        text = prefix.removeprefix("sha256:").lower()
        if not 4 <= len(text) <= 64 or not set(text) <= _HEX:
            raise InvalidInputError(
                f"invalid snapshot {shown(prefix)}: expected a digest or at least 4 of its hex digits "
                "(optionally after 'sha256:')"
            )
        if len(text) == 64:
            digest = OciDigest(text)
            if not self.blobs.has(digest):
                message = f"snapshot {digest} is not stored in {self.path}"
                raise NotFoundError(message, hint="see `brain log` for snapshots")
            return digest
        matches = sorted(d for d in self.blobs.digests(text) if self._is_snapshot(d))
        return _unique(matches, prefix, "snapshot", none=f"no stored snapshot starts with {shown(prefix)}",
                       hint="see `brain log` for snapshots")

    def _is_snapshot(self, digest: OciDigest) -> bool:
        try:
            # Snapshot documents are small; a large blob sharing the prefix is never read into memory.
            if self.blobs.size(digest) > _MAX_SNAPSHOT:
                return False
            Snapshot.decode(self.blobs.get(digest), digest)
            return True
        except BrainError:
            return False

    def prove(
        self, block_id: BlockId, memory_type: MemoryType, snapshot: Snapshot | OciDigest | None = None
    ) -> InclusionProof:
        """An inclusion proof of `block_id` in the `memory_type` module's root."""
        module = self.module(memory_type, snapshot)
        if block_id not in module:
            raise NotFoundError(f"block {block_id} is not a member of the {memory_type} module")
        return self.composition(module.ref).prove(block_id)

    def history(self, start: OciDigest | None = None) -> list[tuple[OciDigest, Snapshot]]:
        """Snapshots from `start` (default: the head) back along first parents, while they are stored."""
        digest = start if start is not None else self.snapshot_digest()
        first = self.snapshot(start)
        if digest is None or first is None:
            return []
        result = [(digest, first)]
        seen = {digest}
        parent = first.first_parent
        # History before a partial pull is simply not stored: stop there quietly.
        while parent is not None and parent not in seen and self.blobs.has(parent):
            snapshot = self._load_snapshot(parent, None)
            result.append((parent, snapshot))
            seen.add(parent)
            parent = snapshot.first_parent
        return result

    def ledger(self, snapshot: Snapshot | OciDigest | None = None) -> Ledger:
        """The ledger of `snapshot` (default: the head)."""
        return Ledger.of(self.modules(snapshot))

    def writer(
        self,
        actor: str,
        lock_timeout: float | None = None,
        on_wait: Callable[[str], None] | None = None,
        branch: str | None = None,
        pointers_only: bool = False,
        *,
        reconciling: bool = False,
        sweep_blobs: bool = True,
    ) -> Writer:
        """The only write path: a context manager holding the writer lock (see `Writer`).

        `branch`: commit onto that branch instead of the current one (created from the head if absent);
        `pointers_only`: the caller moves pointers and writes no blob (branch operations). It refuses while a
        reconciliation is open, unless it is the reconciliation's own (`reconciling`). `sweep_blobs=False`: a
        long-lived writer that swept recently skips listing `blobs/sha256` (`WriterLock`).
        """
        return Writer(
            self, actor, lock_timeout=lock_timeout, on_wait=on_wait, branch=branch, pointers_only=pointers_only,
            reconciling=reconciling, sweep_blobs=sweep_blobs,
        )


def _repair_checkout(path: Path) -> None:
    """Finish or undo a checkout a crash interrupted (a `switching` left in refs.json), under the writer lock.

    Cheap when there is nothing to repair (one failed open of a missing file, or one small read). A brain this
    process cannot lock (read-only, or locked by a writer, which repaired it when it took the lock) is left as
    it is: reads interpret `switching` the same way. A refs.json that cannot be read is reported by the
    commands that need it.
    """
    try:
        refs = read_refs(path)
    except BrainError:
        return
    if refs is None or refs.switching is None:
        return
    try:
        with WriterLock(path, timeout=0, sweep_blobs=False):  # taking the lock repairs it
            pass
    except (BrainError, OSError):
        return  # busy (its holder repaired it) or read-only


def _unique(matches: list[D], prefix: str, kind: str, *, none: str, hint: str | None = None) -> D:
    """The one match of an id prefix; `NotFoundError(none)` for none, `AmbiguousIdError` for several."""
    if not matches:
        raise NotFoundError(none, hint=hint)
    if len(matches) > 1:
        listed = ", ".join(m.short for m in matches[:5])
        message = f"{kind} id prefix {shown(prefix)} matches {len(matches)} {kind}s ({listed}); type more digits"
        raise AmbiguousIdError(message)
    return matches[0]


def _ref_mismatch(ref: ModuleRef, composition: Composition) -> str | None:
    if composition.memory_type != ref.memory_type:
        return f"is a {composition.memory_type} composition, but the snapshot files it under {ref.memory_type}"
    if composition.root != ref.root:
        return f"has root {composition.root}, but the snapshot says {ref.root}"
    if len(composition.block_ids) != ref.block_count:
        return f"has {len(composition.block_ids)} members, but the snapshot says {ref.block_count}"
    return None
