"""What a module layer (§6.3) and the history layer (§6.4) must contain, computed from a brain's blobs.

Shared by packing (which writes exactly these members) and artifact verification (which compares a
layer's members with them). Blocks are read with a cheap envelope parse rather than a full §1.5 decode:
packing re-hashes every member it streams, and `brain verify` is where blocks are fully checked.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from brain.blocks.memory_type import MemoryType
from brain.composition import Composition, ModuleRef
from brain.errors import IntegrityError, NotFoundError
from brain.identity import BlockId, OciDigest, is_digest_string
from brain.snapshot import Snapshot
from brain.store.blobs import BlobStore, open_regular
from brain.identity.rehash import DigestMismatch, rehashed
from oci.tarball import Member

COMPOSITION_MEMBER = "composition.json"
BLOBS_PREFIX = "blobs/"
SNAPSHOTS_PREFIX = "snapshots/"
COMPOSITIONS_PREFIX = "compositions/"
# Block bytes read while scanning are kept for the layer writer up to this budget, then re-read from disk.
_KEEP_BYTES = 256 << 20
# Content up to this size is read (and hashed) while scanning; bigger sources are streamed by the writer.
_KEEP_CONTENT = 64 << 10


def content_hexes(memory_type: str, payload: Any) -> list[str]:
    """The content digests (hex) a block names: canonical `blob` and `normalized_view.blob`; any `content.blob`."""
    if not isinstance(payload, dict):
        return []
    found: list[Any] = []
    if memory_type == MemoryType.CANONICAL.value:
        found.append(payload.get("blob"))
        view = payload.get("normalized_view")
        if isinstance(view, dict):
            found.append(view.get("blob"))
    content = payload.get("content")
    if isinstance(content, dict):
        found.append(content.get("blob"))
    return [value[7:] for value in found if is_digest_string(value)]


def composition_size(ref: ModuleRef) -> int:
    """The exact length of the composition document `ref` names, from its block count (§5.1).

    Each member id is `"sha256:<64 hex>"` (73 bytes with its quotes) plus a comma between members, so a
    layer's `composition.json` can be bounded by what it is instead of by one constant.
    """
    count = ref.block_count
    frame = len(b'{"block_ids":[],"boltzmann":1,"layout":"","memory_type":""}')
    return frame + len(ref.layout) + len(str(ref.memory_type)) + 73 * count + max(count - 1, 0)


def tombstones_of(ref: ModuleRef) -> frozenset[BlockId]:
    """The module reference's tombstones as a set (empty when absent)."""
    return frozenset(ref.tombstones or ())


@dataclass
class ModuleContents:
    """The §6.3 members of one module: its composition, the blobs to carry, and facts learnt on the way."""

    memory_type: MemoryType
    composition: OciDigest
    composition_bytes: bytes
    block_ids: tuple[BlockId, ...]
    blob_hexes: list[str]
    schema_versions: tuple[int, ...]
    kept: dict[str, bytes] = field(default_factory=dict, repr=False)

    def member_names(self) -> list[str]:
        """Member names in layer order."""
        return [COMPOSITION_MEMBER, *(BLOBS_PREFIX + h for h in self.blob_hexes)]

    def members(self, blobs: BlobStore) -> Iterator[Member]:
        """The tar members, each checked against its name while it is streamed."""
        yield Member(COMPOSITION_MEMBER, data=self.composition_bytes)
        for hex_digest in self.blob_hexes:
            data = self.kept.get(hex_digest)
            if data is not None:
                yield Member(BLOBS_PREFIX + hex_digest, data=data)  # hashed when it was scanned
            else:
                yield Member(BLOBS_PREFIX + hex_digest, path=blobs.directory / hex_digest, sha256=hex_digest)


def scan_module(blobs: BlobStore, memory_type: MemoryType, ref: ModuleRef) -> ModuleContents:
    """Read one module's composition and readable blocks to find every blob its layer must carry."""
    composition_bytes = blobs.get(ref.composition)
    composition = Composition.decode(composition_bytes, ref.composition)
    tombstones = tombstones_of(ref)
    required: set[str] = set()
    versions: set[int] = set()
    kept: dict[str, bytes] = {}
    budget = _KEEP_BYTES
    directory = str(blobs.directory)
    for block_id in composition.block_ids:
        if block_id in tombstones:
            continue
        data = _read_verified(directory, block_id.hex, f"{memory_type} member")
        try:
            envelope = json.loads(data)
            version = envelope["schema_version"]
            payload = envelope["payload"]
        except (ValueError, KeyError, TypeError) as e:
            where = blobs.path(block_id)
            message = f"block {block_id} at {where} is not a block envelope"
            raise IntegrityError(message, hint="run `brain verify`") from e
        versions.add(int(version))
        required.add(block_id.hex)
        if budget >= len(data):
            kept[block_id.hex] = data
            budget -= len(data)
        for hex_digest in content_hexes(str(envelope.get("memory_type")), payload):
            if hex_digest in required:
                continue
            required.add(hex_digest)
            try:
                size = os.stat(os.path.join(directory, hex_digest)).st_size
            except FileNotFoundError:
                raise NotFoundError(
                    f"content sha256:{hex_digest} named by {memory_type} block {block_id} is not stored",
                    hint="restore the source bytes before packing",
                ) from None
            if size <= _KEEP_CONTENT and budget >= size:
                kept[hex_digest] = _read_verified(directory, hex_digest, f"content named by {block_id}")
                budget -= size
    return ModuleContents(
        memory_type=memory_type,
        composition=ref.composition,
        composition_bytes=composition_bytes,
        block_ids=tuple(composition.block_ids),
        blob_hexes=sorted(required),
        schema_versions=tuple(sorted(versions)),
        kept=kept,
    )


def _read_verified(directory: str, hex_digest: str, what: str) -> bytes:
    # Plain os paths: at 10^5 members pathlib's overhead is a visible share of a pack.
    path = os.path.join(directory, hex_digest)
    try:
        with open_regular(path) as handle:
            data = handle.read()
    except FileNotFoundError:
        raise NotFoundError(
            f"{what} sha256:{hex_digest} is not stored at {path}",
            hint="restore it or pull the brain again, then run `brain verify`",
        ) from None
    try:
        return rehashed(data, hex_digest)
    except DigestMismatch:
        raise IntegrityError(f"{what} at {path} does not hash to its name", hint="run `brain verify`") from None


@dataclass(frozen=True)
class HistoryContents:
    """The §6.4 members: every stored reachable snapshot and the compositions they reference (hex, sorted)."""

    snapshots: tuple[str, ...]
    compositions: tuple[str, ...]

    def member_names(self) -> list[str]:
        """Member names in layer order."""
        return [SNAPSHOTS_PREFIX + h for h in self.snapshots] + [COMPOSITIONS_PREFIX + h for h in self.compositions]

    def members(self, blobs: BlobStore) -> Iterator[Member]:
        """The tar members, each checked against its name while it is streamed."""
        for prefix, hexes in ((SNAPSHOTS_PREFIX, self.snapshots), (COMPOSITIONS_PREFIX, self.compositions)):
            for hex_digest in hexes:
                yield Member(prefix + hex_digest, path=blobs.directory / hex_digest, sha256=hex_digest)


def walk_history(blobs: BlobStore, start: OciDigest) -> Iterable[tuple[OciDigest, Snapshot]]:
    """Every stored snapshot reachable from `start` through `parent`/`parents`, `start` first."""
    seen: set[OciDigest] = set()
    pending = [start]
    while pending:
        digest = pending.pop()
        if digest in seen or not blobs.has(digest):
            continue
        seen.add(digest)
        snapshot = Snapshot.decode(blobs.get(digest), digest)
        yield digest, snapshot
        pending.extend(snapshot.parent_digests)


def scan_history(blobs: BlobStore, start: OciDigest) -> HistoryContents:
    """The history layer's member list for the snapshot `start`."""
    snapshots: set[str] = set()
    compositions: set[str] = set()
    for digest, snapshot in walk_history(blobs, start):
        snapshots.add(digest.hex)
        for ref in snapshot.modules.values():
            if blobs.has(ref.composition):
                compositions.add(ref.composition.hex)
    return HistoryContents(tuple(sorted(snapshots)), tuple(sorted(compositions)))
