"""What the decision reads from a brain, as a protocol, and the one implementation over a blob store.

The decision (`brain.authn.decision`) asks for snapshots, compositions, provenance blocks and signature
records by digest; "not held" and "unreadable" are both None, because §9.6-§9.7 treat them alike
(an open question, a truncation). Tests and the pull path hand in other implementations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from brain.authn.records import RecordDecodeError, SignatureRecord
from brain.blocks.base import Block
from brain.blocks.provenance import Record
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.ledger import record_of
from brain.snapshot import Snapshot
from brain.store.blobs import BlobStore


class ChainStore(Protocol):
    """Read access to snapshots, compositions, ledger records and signature records."""

    def snapshot(self, digest: OciDigest) -> Snapshot | None:
        """The stored snapshot `digest`, or None when it is not held or unreadable."""
        ...

    def composition(self, ref: ModuleRef) -> Composition | None:
        """The composition a module reference names, or None when not held or unreadable."""
        ...

    def ledger_record(self, block_id: BlockId) -> Record | None:
        """The record of provenance block `block_id`, or None when not held or unreadable."""
        ...

    def records(self, snapshot: OciDigest) -> Sequence[SignatureRecord]:
        """The signature records held over `snapshot`."""
        ...


class StoreChain:
    """`ChainStore` over a brain's blob store and a snapshot -> record digests map (its signature index)."""

    def __init__(self, blobs: BlobStore, index: Mapping[str, Sequence[OciDigest]]) -> None:
        self.blobs = blobs
        self.index = index
        self._snapshots: dict[OciDigest, Snapshot | None] = {}

    def snapshot(self, digest: OciDigest) -> Snapshot | None:
        if digest not in self._snapshots:
            try:
                self._snapshots[digest] = Snapshot.decode(self.blobs.get(digest), digest)
            except BrainError:
                self._snapshots[digest] = None
        return self._snapshots[digest]

    def composition(self, ref: ModuleRef) -> Composition | None:
        try:
            composition = Composition.decode(self.blobs.get(ref.composition), ref.composition)
        except BrainError:
            return None
        return composition if composition.root == ref.root else None

    def ledger_record(self, block_id: BlockId) -> Record | None:
        try:
            return record_of(Block.decode(self.blobs.get(block_id), block_id))
        except BrainError:
            return None

    def records(self, snapshot: OciDigest) -> list[SignatureRecord]:
        found = []
        for digest in self.index.get(str(snapshot), ()):
            try:
                found.append(SignatureRecord.decode(self.blobs.get(digest), digest))
            except (RecordDecodeError, BrainError):
                continue
        return found


def first_parent_walk(chain: ChainStore, start: OciDigest, snapshot: Snapshot) -> tuple[list[tuple[OciDigest, Snapshot]], bool]:
    """`start` and its first-parent ancestors while held, and whether the walk was truncated."""
    walk = [(start, snapshot)]
    seen = {start}
    parent = snapshot.first_parent
    while parent is not None:
        if parent in seen:
            return walk, True  # a cycle cannot be a real history
        held = chain.snapshot(parent)
        if held is None:
            return walk, True
        walk.append((parent, held))
        seen.add(parent)
        parent = held.first_parent
    return walk, False


def descends_from(chain: ChainStore, start: OciDigest, snapshot: Snapshot, marker: OciDigest) -> bool | None:
    """Whether `start` is `marker` or descends from it through any parent; None when undecidable."""
    pending = [(start, snapshot)]
    seen: set[OciDigest] = set()
    complete = True
    while pending:
        digest, current = pending.pop()
        if digest == marker:
            return True
        if digest in seen:
            continue
        seen.add(digest)
        for parent in current.parent_digests:
            if parent == marker:
                return True
            held = chain.snapshot(parent)
            if held is None:
                complete = False
            else:
                pending.append((parent, held))
    return False if complete else None
