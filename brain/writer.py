"""The only write path (§3.7, §5.3): blocks and blobs in, one new snapshot per `commit()`.

Order (restic's rule): blobs and block envelopes, then compositions and the snapshot, one filesystem
sync, then `boltzmann/head.json` by atomic rename, all under the exclusive writer lock. A crash before
the rename leaves the previous head intact; the unreachable blobs it leaves behind are harmless.

Membership is kept in memory across checkpoints (a sorted list per touched module), so repeated
`commit()` calls inside one `with` never re-read compositions; only modules that changed are rewritten.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING

from brain.blocks.base import Block
from brain.blocks.memory_type import MemoryType
from brain.composition import Composition, ModuleRef
from brain.errors import ConflictError, NotFoundError
from brain.identity import BlockId, OciDigest, utc_timestamp, validate_actor_id
from brain.snapshot import Snapshot
from brain.store.redaction import refuse_if_unfinished
from brain.store import Head, WriterLock, read_head, write_head
from brain.store.background import BackgroundPuts

if TYPE_CHECKING:
    from brain.brain import Brain


def _hex(block_id: BlockId) -> str:
    return block_id.hex


class _Membership:
    """One module's staged members: a sorted list, a set for lookups, and pending adds and removals.

    Keeping the list sorted means a checkpoint merges two sorted runs (linear for timsort) instead of
    re-sorting every member, and `Composition.of` receives ids already in leaf order.
    """

    def __init__(self, ordered: Iterable[BlockId]) -> None:
        self.ordered = list(ordered)
        self.members = set(self.ordered)
        self.added: dict[BlockId, None] = {}  # an ordered set: O(1) removal of a just-added id
        self.removed: set[BlockId] = set()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)

    def add(self, block_id: BlockId) -> bool:
        if block_id in self.members:
            return False
        self.members.add(block_id)
        if block_id in self.removed:
            self.removed.discard(block_id)
        else:
            self.added[block_id] = None
        return True

    def remove(self, block_id: BlockId) -> None:
        self.members.discard(block_id)
        if block_id in self.added:
            del self.added[block_id]
        else:
            self.removed.add(block_id)

    def settle(self) -> list[BlockId]:
        """Fold the pending changes into the sorted list and return it."""
        if self.removed:
            self.ordered = [i for i in self.ordered if i not in self.removed]
        if self.added:
            self.ordered = sorted(self.ordered + sorted(self.added, key=_hex), key=_hex)
        self.added, self.removed = {}, set()
        return self.ordered


class Writer:
    """Holds the writer lock; stages blobs, blocks and removals; `commit()` makes one new snapshot.

    Leaving the `with` block without `commit()` discards staged membership changes (stored blobs stay,
    unreachable, until pruned).
    """

    def __init__(
        self,
        brain: Brain,
        actor: str,
        *,
        lock_timeout: float | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.brain = brain
        self.actor = validate_actor_id(actor)
        self._lock = WriterLock(brain.path, lock_timeout, on_wait)
        self._head: Head | None = None
        self._snapshot: Snapshot | None = None
        self._refs: dict[MemoryType, ModuleRef] = {}
        self._staged: dict[MemoryType, _Membership] = {}
        self._tombstones: dict[MemoryType, set[BlockId]] = {}
        self._puts = BackgroundPuts(brain.blobs)

    # --- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> Writer:
        self._lock.acquire()
        try:
            # An interrupted redaction must be finished before anything else is written (`brain redact --resume`).
            refuse_if_unfinished(self.brain.path, "writing")
            # Read the head only once the lock is ours: another writer may have just committed.
            self._head = read_head(self.brain.path)
            self._snapshot = None if self._head is None else self.brain.snapshot(self._head.snapshot)
            self._refs = {} if self._snapshot is None else {MemoryType(k): v for k, v in self._snapshot.modules.items()}
        except BaseException:
            self._lock.release()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._staged.clear()
        self._tombstones.clear()
        try:
            self._puts.close()
        finally:
            self._lock.release()

    def _require_lock(self) -> None:
        if not self._lock.held:
            raise ConflictError("the writer is not open: use it as `with brain.writer(actor) as w:`")

    # --- state --------------------------------------------------------------------------------------

    @property
    def head(self) -> Head | None:
        """The head as of the last commit (or as found when the lock was taken)."""
        return self._head

    @property
    def snapshot(self) -> Snapshot | None:
        """The snapshot the next commit builds on."""
        return self._snapshot

    @property
    def refs(self) -> Mapping[MemoryType, ModuleRef]:
        """The module references of that snapshot."""
        return dict(self._refs)

    def members(self, memory_type: MemoryType) -> frozenset[BlockId]:
        """The staged membership of a module (committed members plus pending changes)."""
        self._require_lock()
        return frozenset(self._membership(memory_type).members)

    def _membership(self, memory_type: MemoryType) -> _Membership:
        staged = self._staged.get(memory_type)
        if staged is None:
            ref = self._refs.get(memory_type)
            staged = _Membership(() if ref is None else self.brain.composition(ref).block_ids)
            self._staged[memory_type] = staged
        return staged

    # --- staging ------------------------------------------------------------------------------------

    def put_blob(self, data: bytes) -> OciDigest:
        """Store raw bytes (source files, views, content); durable by the next commit."""
        self._require_lock()
        return self.brain.blobs.put(data, sync=False)

    def put_blob_later(self, data: bytes) -> OciDigest:
        """`put_blob` for bytes nothing reads before the next commit: stored in the background, like blocks."""
        self._require_lock()
        self._puts.put(data)
        return OciDigest.of(data)

    def put_blob_stream(self, chunks: Iterable[bytes], expected: OciDigest | None = None) -> tuple[OciDigest, int]:
        """Store a stream in constant memory; refuses it if it does not hash to `expected`."""
        self._require_lock()
        return self.brain.blobs.put_stream(chunks, expected, sync=False)

    def add(self, block: Block) -> bool:
        """Store `block` and stage it as a member of its module.

        Returns True if it became a member, False if it already was one (the call is then a no-op
        apart from repairing a missing or corrupt stored copy).
        """
        self._require_lock()
        # Stored in the background: nothing reads a staged block before the commit that drains them.
        self._puts.put(block.canonical_bytes())
        return self._membership(block.memory_type).add(block.block_id)

    def remove(self, memory_type: MemoryType, block_ids: Iterable[BlockId]) -> int:
        """Stage removing members (drops; the blocks' bytes are untouched); all must be members."""
        self._require_lock()
        staged = self._membership(memory_type)
        wanted = list(dict.fromkeys(block_ids))
        missing = [i for i in wanted if i not in staged.members]
        if missing:
            raise NotFoundError(f"block {missing[0]} is not a member of the {memory_type} module; nothing was removed")
        for block_id in wanted:
            staged.remove(block_id)
        return len(wanted)

    def tombstone(self, memory_type: MemoryType, block_ids: Iterable[BlockId]) -> int:
        """Stage listing members in their module reference's `tombstones` (redaction, §7.5): membership,
        composition and root are unchanged. The caller destroys the bytes after the commit."""
        self._require_lock()
        staged = self._membership(memory_type)
        wanted = list(dict.fromkeys(block_ids))
        missing = [i for i in wanted if i not in staged.members]
        if missing:
            raise NotFoundError(f"block {missing[0]} is not a member of the {memory_type} module; nothing was redacted")
        self._tombstones.setdefault(memory_type, set()).update(wanted)
        return len(wanted)

    # --- commit -------------------------------------------------------------------------------------

    def commit(self, labels: Mapping[str, str] | None = None) -> OciDigest | None:
        """Write one new snapshot (and move the head) if anything changed; returns its digest or None.

        `labels` are merged over the carried-forward labels.
        """
        self._require_lock()
        self._puts.drain()
        blobs = self.brain.blobs
        refs = dict(self._refs)
        for memory_type, staged in self._staged.items():
            if not staged.changed:
                continue
            ids = staged.settle()
            old = refs.get(memory_type)
            if old is None and not ids:
                continue
            composition = Composition.of(memory_type, ids)
            if old is not None and composition.digest == old.composition:
                continue
            blobs.put(composition.to_bytes(), sync=False)
            refs[memory_type] = _module_ref(composition, old)
        for memory_type, tombstoned in self._tombstones.items():
            refs[memory_type] = _with_tombstones(refs[memory_type], tombstoned)
        self._tombstones = {}
        old_labels = dict(self._snapshot.labels or {}) if self._snapshot is not None else {}
        new_labels = {**old_labels, **(labels or {})}
        if refs == self._refs and new_labels == old_labels:
            return None
        snapshot = _next_snapshot(self._snapshot, self._head, refs, new_labels)
        digest = blobs.put(snapshot.to_bytes(), sync=False)
        blobs.sync()
        head = Head.first(digest) if self._head is None else self._head.advance(digest, origin=self._head.origin)
        write_head(self.brain.path, head)
        self._head, self._snapshot, self._refs = head, snapshot, refs
        return digest


def _module_ref(composition: Composition, old: ModuleRef | None) -> ModuleRef:
    """The reference to a new version of a module; tombstones that are still members are kept, and a
    vector index (which described the old membership) is not carried over."""
    tombstones: tuple[BlockId, ...] = ()
    if old is not None and old.tombstones:
        members = set(composition.block_ids)
        tombstones = tuple(i for i in old.tombstones if i in members)
    return composition.module_ref(tombstones=tombstones or None)


def _with_tombstones(ref: ModuleRef, tombstoned: Iterable[BlockId]) -> ModuleRef:
    """`ref` listing `tombstoned` too (sorted); a vector index is dropped, it may describe destroyed text."""
    tombstones = sorted({*(ref.tombstones or ()), *tombstoned}, key=_hex)
    fields = ref.model_dump(exclude={"tombstones", "embedding_model", "index_digest"})
    return ModuleRef(**fields, tombstones=tuple(tombstones) or None)


def _next_snapshot(
    previous: Snapshot | None, head: Head | None, refs: Mapping[MemoryType, ModuleRef], labels: dict[str, str]
) -> Snapshot:
    return Snapshot.with_lineage(
        () if head is None else (head.snapshot,),
        created_at=utc_timestamp(),
        modules={t.value: refs[t] for t in refs},
        labels=labels or None,
        trust_root=None if previous is None else previous.trust_root,
    )
