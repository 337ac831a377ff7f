"""A module of a brain at one snapshot: its reference, its members, and reading their blocks (§7.1-7.2).

The derived views of the provenance module (`Ledger`) live in `brain.ledger` and are re-exported here, so
the documented `from brain.module import Ledger; Ledger.of(brain.modules())` works (`tests/test_public_api.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brain.blocks.base import Block, BlockDecodeError
from brain.blocks.memory_type import MemoryType
from brain.errors import BrainError, IntegrityError, NotFoundError
from brain.identity import BlockId
from brain.ledger import Ledger
from brain.store.blobs import BlobStore

if TYPE_CHECKING:
    from brain.composition import ModuleRef


class DestroyedBlockError(NotFoundError):
    """The block is a member whose bytes were destroyed by redaction (a tombstone), not a missing one."""


def read_block(blobs: BlobStore, block_id: BlockId, tombstones: frozenset[BlockId] = frozenset()) -> Block:
    """Load, re-hash and decode one stored block (§1.5); errors name the block and its file."""
    if block_id in tombstones:
        raise DestroyedBlockError(f"block {block_id} was redacted: it stays a member but its bytes are destroyed")
    data = blobs.get(block_id)
    try:
        return Block.decode(data, block_id)
    except BlockDecodeError as e:
        raise IntegrityError(
            f"block {block_id} at {blobs.path(block_id)} is not a valid block: {e.message}",
            hint="restore the file from a copy of the brain, then run `brain verify`",
        ) from e


@dataclass(frozen=True)
class Unread:
    """In place of a block that could not be read: whether it is not stored at all, and why."""

    missing: bool
    message: str


# Many blocks read at once, in order, each a block or why it is not (`read_blocks`).
ReadBlocks = Callable[[Sequence[BlockId]], Iterable["Block | Unread"]]


def read_blocks(root: Path, block_ids: Sequence[BlockId]) -> list[Block | Unread]:
    """Worker (`brain.concurrency.parallel_map`): `read_block` of each id, in order, `Unread` where it raised."""
    blobs = BlobStore(root)
    found: list[Block | Unread] = []
    for block_id in block_ids:
        try:
            found.append(read_block(blobs, block_id))
        except NotFoundError as e:
            found.append(Unread(True, e.message))
        except BrainError as e:
            found.append(Unread(False, e.message))
    return found


class Module:
    """One memory type's members at a snapshot, as committed to by `ref.root`.

    The member list is read from the composition on first use, so listing modules (e.g. `status`)
    costs nothing beyond the snapshot.
    """

    def __init__(
        self,
        memory_type: MemoryType,
        ref: ModuleRef,
        blobs: BlobStore,
        block_ids: Iterable[BlockId] | None = None,
        *,
        load: Callable[[], Iterable[BlockId]] | None = None,
    ) -> None:
        if block_ids is None and load is None:
            raise ValueError("Module needs block_ids or a loader")
        self.memory_type = memory_type
        self.ref = ref
        self.blobs = blobs
        self._block_ids = None if block_ids is None else tuple(block_ids)
        self._load = load
        self._members: frozenset[BlockId] | None = None

    def __repr__(self) -> str:
        return f"Module({self.memory_type.value}, root={self.ref.root}, block_count={self.ref.block_count})"

    @property
    def block_ids(self) -> tuple[BlockId, ...]:
        """The members in ascending id order (reads and verifies the composition on first use)."""
        if self._block_ids is None:
            assert self._load is not None
            self._block_ids = tuple(self._load())
        return self._block_ids

    @property
    def members(self) -> frozenset[BlockId]:
        """The member ids as a set (membership tests are O(1))."""
        if self._members is None:
            self._members = frozenset(self.block_ids)
        return self._members

    @property
    def tombstones(self) -> frozenset[BlockId]:
        """Members whose bytes were destroyed by redaction."""
        return frozenset(self.ref.tombstones or ())

    def __contains__(self, block_id: object) -> bool:
        return block_id in self.members

    def __len__(self) -> int:
        return len(self.block_ids)

    def __iter__(self) -> Iterator[BlockId]:
        return iter(self.block_ids)

    def read(self, block_id: BlockId) -> Block:
        """Decode one member (refuses non-members and redacted members)."""
        if block_id not in self.members:
            raise NotFoundError(f"block {block_id} is not a member of the {self.memory_type} module")
        return read_block(self.blobs, block_id, self.tombstones)

    def blocks(self) -> Iterator[Block]:
        """Decode every member in id order, skipping redacted ones; a missing or bad block raises."""
        tombstones = self.tombstones
        for block_id in self.block_ids:
            if block_id in tombstones:
                continue
            try:
                block = read_block(self.blobs, block_id)
            except NotFoundError:
                raise IntegrityError(
                    f"block {block_id}, a member of the {self.memory_type} module, is not stored "
                    f"at {self.blobs.path(block_id)}",
                    hint="the brain is incomplete: pull or restore it again, then run `brain verify`",
                ) from None
            if block.memory_type is not self.memory_type:
                raise IntegrityError(
                    f"block {block_id} in the {self.memory_type} module is a {block.memory_type} block"
                )
            yield block


__all__ = ["DestroyedBlockError", "Ledger", "Module", "ReadBlocks", "Unread", "read_block", "read_blocks"]
