"""The only write path (§3.7, §5.3): blocks and blobs in, one new snapshot per `commit()`.

Order (restic's rule): blobs and block envelopes, then compositions and the snapshot, one filesystem
sync, then `boltzmann/head.json` by atomic rename, all under the exclusive writer lock. A crash before
the rename leaves the previous head intact; the unreachable blobs it leaves behind are harmless.

With `branch=` naming a branch other than the current one (e.g. `proposals/<agent>`), the writer builds on
that branch's head instead and its final pointer write updates the branch's `refs.json` entry (after
`head.json`'s `retained`, rewritten with the same snapshot, so a prune keeps the new branch head) instead of
moving `head.json`; a branch that does not exist yet is created from the current head by its first commit.

Membership is kept in memory across checkpoints (a sorted list per touched module), so repeated
`commit()` calls inside one `with` never re-read compositions; only modules that changed are rewritten.
"""

from __future__ import annotations

import bisect
from functools import partial
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING

from brain.blocks.base import Block
from brain.branches.names import MAIN, branch_tag, validate_branch_name
from brain.branches.pointers import refs_or_implicit
from brain.branches.refs import BranchEntry, Refs, read_refs, write_refs
from brain.blocks.memory_type import MemoryType
from brain.composition import Composition, ModuleRef
from brain.errors import ConflictError, NotFoundError
from brain.identity import BlockId, OciDigest, utc_timestamp, validate_actor_id
from brain.snapshot import Snapshot
from brain.store.redaction import refuse_if_unfinished
from brain.store import Head, WriterLock, read_head, write_head
from brain.store.atomic import sweep_temps
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

    def __init__(
        self, ordered: Iterable[BlockId], members: frozenset[BlockId] | None = None, base: Composition | None = None
    ) -> None:
        self.ordered = list(ordered)
        self.base = base  # the composition `ordered` is, when it keeps its Merkle tree (`Composition.of_sorted`)
        # Copying a set reuses its stored hashes; building one calls `BlockId.__hash__` per member.
        self.members = set(self.ordered) if members is None else set(members)
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
        if len(self.added) * 64 < len(self.ordered):  # a few into many: insert each in place (memmove)
            ordered = list(self.ordered)
            for block_id in self.added:
                bisect.insort(ordered, block_id, key=_hex)
            self.ordered = ordered
        elif self.added:
            self.ordered = sorted(self.ordered + sorted(self.added, key=_hex), key=_hex)
        self.added, self.removed = {}, set()
        return self.ordered


class Writer:
    """Holds the writer lock; stages blobs, blocks and removals; `commit()` makes one new snapshot.

    Leaving the `with` block without `commit()` discards staged membership changes (stored blobs stay,
    unreachable, until pruned).

    `branch`: commit onto that branch rather than the current one (see the module docstring); `head` is
    then that branch's head (a `Head` with no `retained`), and `head.json` keeps naming the current branch.
    `pointers_only`: the holder writes no blob (a checkout), so taking the lock does not sweep `blobs/sha256`;
    nor does it with `sweep_blobs=False` (a server that swept recently), unless the previous holder died holding it.
    Taking the lock first repairs an interrupted checkout (§10.2, `WriterLock`), so no commit lands under the
    wrong branch; a `refs.json` that cannot be read refuses the write (exit 2) before anything is staged.
    """

    def __init__(
        self,
        brain: Brain,
        actor: str,
        *,
        lock_timeout: float | None = None,
        on_wait: Callable[[str], None] | None = None,
        branch: str | None = None,
        pointers_only: bool = False,
        reconciling: bool = False,
        sweep_blobs: bool = True,
    ) -> None:
        self.brain = brain
        self.actor = validate_actor_id(actor)
        self.branch = None if branch is None else validate_branch_name(branch)
        self._lock = WriterLock(
            brain.path, lock_timeout, on_wait, reconciling=reconciling, sweep_blobs=sweep_blobs and not pointers_only
        )
        self._head: Head | None = None
        # The brain's own head and refs (they differ from `_head` only when committing onto another branch).
        self._brain_head: Head | None = None
        self._branch_refs: Refs | None = None
        self._other_branch = False
        self._snapshot: Snapshot | None = None
        self._refs: dict[MemoryType, ModuleRef] = {}
        self._base_refs: dict[MemoryType, ModuleRef] = {}
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
            # Taking the lock repaired an interrupted checkout; a refs.json that cannot be read refuses the write.
            self._branch_refs = read_refs(self.brain.path)
            self._brain_head = self._head = read_head(self.brain.path)
            self._enter_branch()
            self._snapshot = None if self._head is None else self.brain.snapshot(self._head.snapshot)
            self._refs = {} if self._snapshot is None else {MemoryType(k): v for k, v in self._snapshot.modules.items()}
            self._base_refs = dict(self._refs)
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

    def _enter_branch(self) -> None:
        """Point `_head` at the branch being committed onto, when it is not the current one."""
        refs = refs_or_implicit(self._branch_refs, self._brain_head)
        current = MAIN if refs is None else refs.current
        if self.branch is None or self.branch == current:
            return
        if self._brain_head is None or refs is None:
            raise ConflictError(
                f"cannot commit onto branch {self.branch}: the brain at {self.brain.path} is empty",
                hint="commit on the current branch first",
            )
        self._other_branch = True
        entry = refs.branches.get(self.branch)
        if entry is None:  # created from the current head by the first commit
            self._head = Head(snapshot=self._brain_head.snapshot)
        else:
            self._head = Head(snapshot=entry.snapshot, origin=entry.origin)

    def _move_pointers(self, digest: OciDigest) -> Head:
        """The last step of a commit: `head.json`, or the branch's entry in `refs.json` (head.json first)."""
        if not self._other_branch:
            branch_heads = () if self._branch_refs is None else self._branch_refs.heads()
            if self._head is None:
                head = Head.first(digest, branch_heads=branch_heads)
            else:
                head = self._head.advance(digest, origin=self._head.origin, branch_heads=branch_heads)
            self._brain_head = written = write_head(self.brain.path, head, self._branch_refs)
            return written
        assert self.branch is not None and self._brain_head is not None and self._head is not None
        brain_head = self._brain_head
        refs = refs_or_implicit(self._branch_refs, brain_head)
        assert refs is not None
        refs = refs.brought_up(brain_head.snapshot, brain_head.origin)
        old = refs.branches.get(self.branch)
        if old is None:
            current = refs.branches[refs.current]
            old = BranchEntry(snapshot=digest, tag=branch_tag(self.branch, refs.main_tag), reference=current.reference)
        refs = refs.with_branch(self.branch, old.model_copy(update={"snapshot": digest}))
        rewritten = Head.first(
            brain_head.snapshot, origin=brain_head.origin, previous=brain_head.retained, branch_heads=refs.heads()
        )
        self._brain_head = write_head(self.brain.path, rewritten, refs)
        write_refs(self.brain.path, refs)
        self._branch_refs = refs
        return Head(snapshot=digest, origin=old.origin)

    def _require_lock(self) -> None:
        if not self._lock.held:
            raise ConflictError("the writer is not open: use it as `with brain.writer(actor) as w:`")

    # --- state --------------------------------------------------------------------------------------

    @property
    def swept_blobs(self) -> bool:
        """Whether taking the lock swept `blobs/sha256` of dead writers' temp files."""
        return self._lock.swept_blobs

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

    def live_members(self, memory_type: MemoryType) -> set[BlockId]:
        """The staged member set itself, kept current by `add` and `remove`: read it, never change it."""
        self._require_lock()
        return self._membership(memory_type).members

    def _membership(self, memory_type: MemoryType) -> _Membership:
        staged = self._staged.get(memory_type)
        if staged is None:
            ref = self._refs.get(memory_type)
            base = None if ref is None else self.brain.composition(ref)
            staged = _Membership((), None) if base is None or ref is None else _Membership(
                base.block_ids, self.brain.member_set(ref), base if base.keeps_tree else None)
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

    # --- garbage (prune) -----------------------------------------------------------------------------

    def collect(self, garbage: Iterable[OciDigest], *, retained: tuple[OciDigest, ...] | None = None) -> int:
        """Delete blobs the caller found unreachable under this lock (`brain prune`), after narrowing the head's
        `retained` list to `retained` (if given and different), then the cache's stale temporary files; the
        number of blobs deleted. The head's snapshot never changes here."""
        self._require_lock()
        head = self._brain_head
        if head is not None and retained is not None and retained != head.retained:
            # write_head appends every branch head again (§10.2): narrowing never drops a branch.
            written = write_head(self.brain.path, head.model_copy(update={"retained": retained}), self._branch_refs)
            self._brain_head = written
            if not self._other_branch:
                self._head = written
        deleted = sum(1 for digest in garbage if self.brain.blobs.delete(digest))
        sweep_temps(self.brain.path / "boltzmann" / "cache", float("inf"))
        return deleted

    # --- commit -------------------------------------------------------------------------------------

    def adopt(self, memory_type: MemoryType, ref: ModuleRef) -> None:
        """Stage a module reference verbatim (a reconciliation adopting the one side's module, §10.4)."""
        self._require_lock()
        self._staged.pop(memory_type, None)
        self._tombstones.pop(memory_type, None)
        self._refs[memory_type] = ref

    def commit(
        self,
        labels: Mapping[str, str] | None = None,
        *,
        merged: tuple[OciDigest, ...] = (),
        publish: bool = True,
        before_head: Callable[[OciDigest], None] | None = None,
    ) -> OciDigest | None:
        """Write one new snapshot (and move the head) if anything changed; returns its digest or None.

        `labels` are merged over the carried-forward labels. `merged` are further parents after the head (a
        reconciliation, §5.3): such a snapshot is always written. With `publish=False` the head moves only
        in memory (a chain of snapshots, e.g. a rebase, becomes the head at once with `publish_head()`);
        `before_head` is called with the new digest once the snapshot is durable, before `head.json` moves.
        """
        self._require_lock()
        self._puts.drain()
        blobs = self.brain.blobs
        refs = dict(self._refs)
        built: list[tuple[Composition, _Membership, OciDigest | None]] = []
        for memory_type, staged in self._staged.items():
            if not staged.changed:
                continue
            added, removed = list(staged.added), list(staged.removed)
            ids = staged.settle()
            old = refs.get(memory_type)
            if old is None and not ids:
                continue
            composition = Composition.of_sorted(memory_type, ids, staged.base, added, removed)
            staged.base = composition if composition.keeps_tree else None
            # Stored first: the store hashes the bytes it writes, and that digest is the composition's. Streamed: a
            # 10^6-member document is ~74 MB, never held whole (an unchanged one is already stored, nothing is written).
            composition.stored_as(blobs.put_stream(composition.chunks(), sync=False)[0])
            if old is not None and composition.digest == old.composition:
                continue
            refs[memory_type] = _module_ref(composition, old)
            built.append((composition, staged, None if old is None else old.composition))
        for memory_type, tombstoned in self._tombstones.items():
            refs[memory_type] = _with_tombstones(refs[memory_type], tombstoned)
        self._tombstones = {}
        old_labels = dict(self._snapshot.labels or {}) if self._snapshot is not None else {}
        new_labels = {**old_labels, **(labels or {})}
        if refs == self._refs and new_labels == old_labels and not merged and self._committed_refs_same():
            return None
        snapshot = _next_snapshot(self._snapshot, self._head, refs, new_labels, merged)
        digest = blobs.put(snapshot.to_bytes(), sync=False)
        blobs.sync()
        if before_head is not None:
            before_head(digest)
        if publish:
            head = self._move_pointers(digest)
        else:
            head = Head.first(digest) if self._head is None else self._head.advance(digest, origin=self._head.origin)
        self._head, self._snapshot, self._refs = head, snapshot, refs
        self._base_refs = dict(refs)
        for composition, staged, replaced in built:
            # The member set copied only for a brain that keeps it (a server's), not by every command's commit.
            self.brain.built(composition, partial(frozenset, staged.members), replaced)
        return digest

    def publish_head(self) -> None:
        """Write the in-memory head (after `commit(publish=False)` steps)."""
        self._require_lock()
        if self._head is not None:
            self._head = self._move_pointers(self._head.snapshot)

    def move_head(self, digest: OciDigest) -> None:
        """Point the head at a stored snapshot without writing one (a fast-forward, §10.2)."""
        self._require_lock()
        snapshot = self.brain.snapshot(digest)
        self._head = self._move_pointers(digest)
        self._snapshot = snapshot
        self._refs = {} if snapshot is None else {MemoryType(k): v for k, v in snapshot.modules.items()}
        self._base_refs = dict(self._refs)

    def _committed_refs_same(self) -> bool:
        """Whether the staged references equal the snapshot's (an `adopt` changes them without staging)."""
        return self._snapshot is None or self._base_refs == self._refs


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
    previous: Snapshot | None,
    head: Head | None,
    refs: Mapping[MemoryType, ModuleRef],
    labels: dict[str, str],
    merged: tuple[OciDigest, ...] = (),
) -> Snapshot:
    return Snapshot.with_lineage(
        (*(() if head is None else (head.snapshot,)), *merged),
        created_at=utc_timestamp(),
        modules={t.value: refs[t] for t in refs},
        labels=labels or None,
        trust_root=None if previous is None else previous.trust_root,
    )
