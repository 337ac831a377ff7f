"""Adopt the members of untrusted layers into a brain's blob store, checking everything §6.8 asks.

Every member is hashed against its name before it gets a blob name; module layers must carry their
composition (which must re-root to the module reference), every non-tombstoned member block (which must
decode as a block of that module) and the content those blocks name. `Staging` remembers which blob files
this install created so that a refusal can remove them again: nothing a refused artifact brought stays.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from brain.blocks.base import Block
from brain.blocks.memory_type import MemoryType
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError, UntrustedArtifactError
from brain.identity import BlockId, OciDigest
from brain.snapshot import Snapshot
from brain.store.atomic import atomic_write
from brain.store.blobs import BlobStore
from oci.manifest import Descriptor
from oci.members import (
    BLOBS_PREFIX,
    COMPOSITION_MEMBER,
    COMPOSITIONS_PREFIX,
    SNAPSHOTS_PREFIX,
    content_hexes,
    tombstones_of,
)
from oci.tarball_reader import ByteStream, LayerReader, read_all, spool

BlobSource = Callable[[Descriptor], "Path | BinaryIO"]
_HEX = re.compile(r"[0-9a-f]{64}")
_SMALL = 1 << 20
_PENDING_BUDGET = 256 << 20
MAX_DOCUMENT = 512 << 20


class _VerifyingStream:
    """Reads a fetched blob while hashing; `finish` drains it and refuses a digest or size mismatch."""

    def __init__(self, handle: BinaryIO, descriptor: Descriptor) -> None:
        self._handle, self._descriptor = handle, descriptor
        self._sha = hashlib.sha256()
        self._size = 0

    def read(self, size: int = -1) -> bytes:
        data = self._handle.read(size)
        self._sha.update(data)
        self._size += len(data)
        if self._size > self._descriptor.size:
            digest, size = self._descriptor.digest, self._descriptor.size
            raise UntrustedArtifactError(f"blob {digest} is longer than its announced {size} bytes")
        return data

    def finish(self) -> None:
        while self.read(1 << 20):
            pass
        if self._size != self._descriptor.size or self._sha.hexdigest() != self._descriptor.digest.hex:
            raise UntrustedArtifactError(
                f"blob {self._descriptor.digest} does not match its descriptor "
                f"({self._size} bytes hashing to sha256:{self._sha.hexdigest()})"
            )


@contextlib.contextmanager
def open_blob(fetch: BlobSource, descriptor: Descriptor) -> Iterator[_VerifyingStream]:
    """The blob `descriptor` names, re-verified against it however the fetcher obtained it."""
    source = fetch(descriptor)
    handle: BinaryIO = open(source, "rb") if isinstance(source, (str, Path)) else source  # noqa: SIM115
    with handle:
        stream = _VerifyingStream(handle, descriptor)
        yield stream
        stream.finish()


def read_blob(fetch: BlobSource, descriptor: Descriptor, limit: int = 16 << 20) -> bytes:
    """A small fetched blob in memory, verified against its descriptor."""
    if descriptor.size > limit:
        raise UntrustedArtifactError(f"blob {descriptor.digest} announces {descriptor.size} bytes, more than {limit}")
    data = bytearray()
    with open_blob(fetch, descriptor) as stream:
        while chunk := stream.read(1 << 20):
            data += chunk
    return bytes(data)


class Staging:
    """Blob files added by one install, removable again if the install is refused."""

    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs
        self.added: list[Path] = []
        blobs.directory.mkdir(parents=True, exist_ok=True)

    def put(self, hex_digest: str, data: bytes) -> None:
        """Store verified bytes under their name unless a good copy already exists."""
        path = self.blobs.directory / hex_digest
        existed = os.path.exists(path)
        if existed and self.blobs.verify_file(OciDigest(hex_digest)):
            return
        atomic_write(path, data, sync=False)
        if not existed:
            self.added.append(path)

    def adopt(self, hex_digest: str, temp: Path) -> None:
        """Rename a verified spooled temp file into place unless a good copy already exists."""
        digest = OciDigest(hex_digest)
        if not self.blobs.verify_file(digest):
            existed = self.blobs.has(digest)
            os.replace(temp, self.blobs.path(digest))
            if not existed:
                self.added.append(self.blobs.path(digest))

    def rollback(self) -> None:
        """Delete every blob this install created."""
        for path in self.added:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self.added.clear()


class _Pending:
    """Verified small members held in memory until their blocks have decoded, so refused ones are never written."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.size = 0

    def keep(self, hex_digest: str, data: bytes) -> bool:
        if self.size + len(data) > _PENDING_BUDGET:
            return False
        self.data[hex_digest] = data
        self.size += len(data)
        return True


def _member(
    what: str, name: str, chunks: Iterator[bytes], size: int, staging: Staging, hex_digest: str, pending: _Pending
) -> None:
    """Hash one member against its name; hold it in `pending` while the budget lasts, else adopt it now."""
    if size <= _SMALL:
        data = read_all(chunks, _SMALL, what)
        if hashlib.sha256(data).hexdigest() != hex_digest:
            raise UntrustedArtifactError(f"{what}: member {name} does not hash to its name")
        if not pending.keep(hex_digest, data):
            staging.put(hex_digest, data)
        return
    with spool(chunks, staging.blobs.directory) as spooled:
        if spooled.sha256 != hex_digest:
            raise UntrustedArtifactError(f"{what}: member {name} does not hash to its name")
        staging.adopt(hex_digest, spooled.path)


def unpack_module(
    stream: ByteStream,
    descriptor: Descriptor,
    memory_type: MemoryType,
    ref: ModuleRef,
    staging: Staging,
    max_inflate: int | None = None,
) -> Composition:
    """Adopt one module layer; refuses anything §6.8 refuses, and members whose blocks do not decode."""
    what = f"{memory_type} layer {descriptor.digest}"
    composition_bytes: bytes | None = None
    present: set[str] = set()
    pending = _Pending()
    reader = LayerReader(stream, compressed_size=descriptor.size, what=what, max_inflate=max_inflate)
    for entry, chunks in reader.members():
        if entry.name == COMPOSITION_MEMBER:
            composition_bytes = read_all(chunks, MAX_DOCUMENT, what)
            continue
        hex_digest = entry.name[len(BLOBS_PREFIX) :]
        if not entry.name.startswith(BLOBS_PREFIX) or not _HEX.fullmatch(hex_digest):
            raise UntrustedArtifactError(
                f"{what}: refused member {entry.name!r} (only composition.json and blobs/<hex>)"
            )
        _member(what, entry.name, chunks, entry.size, staging, hex_digest, pending)
        present.add(hex_digest)
    if composition_bytes is None:
        raise UntrustedArtifactError(f"{what}: composition.json is missing")
    if OciDigest.of(composition_bytes) != ref.composition:
        raise UntrustedArtifactError(f"{what}: composition.json is not {ref.composition}, which the config names")
    try:
        composition = Composition.decode(composition_bytes, ref.composition)
    except BrainError as e:
        raise UntrustedArtifactError(f"{what}: composition.json is invalid: {e.message}") from None
    same_type = str(composition.memory_type) == str(memory_type)
    if composition.root != ref.root or not same_type or len(composition.block_ids) != ref.block_count:
        raise UntrustedArtifactError(
            f"{what}: composition does not re-root to {ref.root} with {ref.block_count} {memory_type} members"
        )
    tombstones = tombstones_of(ref)
    members = set(composition.block_ids)
    if not tombstones <= members:
        raise UntrustedArtifactError(f"{what}: tombstones name blocks that are not members")
    for block_id in composition.block_ids:
        if block_id not in tombstones:
            _check_block(staging.blobs, what, block_id, memory_type, present, pending.data)
    for hex_digest, data in pending.data.items():
        staging.put(hex_digest, data)
    staging.put(ref.composition.hex, composition_bytes)
    return composition


def _check_block(
    blobs: BlobStore, what: str, block_id: BlockId, memory_type: MemoryType, present: set[str], held: dict[str, bytes]
) -> None:
    if block_id.hex not in present:
        raise UntrustedArtifactError(f"{what}: member block {block_id} is missing from the layer")
    try:
        data = held.get(block_id.hex)
        block = Block.decode(blobs.get(block_id) if data is None else data, block_id)
    except BrainError as e:
        raise UntrustedArtifactError(f"{what}: member block {block_id} is not a valid block: {e.message}") from None
    if block.memory_type is not memory_type:
        raise UntrustedArtifactError(f"{what}: member block {block_id} is a {block.memory_type} block")
    for hex_digest in content_hexes(str(memory_type), block.payload()):
        if hex_digest not in present and not blobs.verify_file(OciDigest(hex_digest)):
            raise UntrustedArtifactError(f"{what}: content sha256:{hex_digest} named by block {block_id} is missing")


def unpack_history(
    stream: ByteStream, descriptor: Descriptor, staging: Staging, max_inflate: int | None = None
) -> dict[OciDigest, Snapshot]:
    """Adopt the history layer's snapshots and compositions (each must hash to its name and decode)."""
    what = f"history layer {descriptor.digest}"
    snapshots: dict[OciDigest, Snapshot] = {}
    reader = LayerReader(stream, compressed_size=descriptor.size, what=what, max_inflate=max_inflate)
    for entry, chunks in reader.members():
        prefix, _, hex_digest = entry.name.partition("/")
        if prefix + "/" not in (SNAPSHOTS_PREFIX, COMPOSITIONS_PREFIX) or not _HEX.fullmatch(hex_digest):
            continue  # §6.8: other member names are ignored (the reader has already refused unsafe ones)
        data = read_all(chunks, MAX_DOCUMENT, what)
        digest = OciDigest(hex_digest)
        if OciDigest.of(data) != digest:
            raise UntrustedArtifactError(f"{what}: member {entry.name} does not hash to its name")
        try:
            if prefix + "/" == SNAPSHOTS_PREFIX:
                snapshots[digest] = Snapshot.decode(data, digest)
            else:
                Composition.decode(data, digest)
        except BrainError as e:
            raise UntrustedArtifactError(f"{what}: member {entry.name} is not a valid document: {e.message}") from None
        staging.put(hex_digest, data)
    return snapshots
