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
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO

from brain.blocks.base import Block
from brain.blocks.memory_type import MemoryType
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError, RedactedBytesRefusedError, UntrustedArtifactError
from brain.identity import BlockId, OciDigest
from brain.snapshot import Snapshot
from brain.store.atomic import atomic_write
from brain.store.blobs import BlobStore
from brain.identity.rehash import DigestMismatch, decode_rehashed, rehashed
from oci.manifest import Descriptor
from oci.members import (
    BLOBS_PREFIX,
    COMPOSITION_MEMBER,
    COMPOSITIONS_PREFIX,
    SNAPSHOTS_PREFIX,
    composition_size,
    content_hexes,
    tombstones_of,
)
from oci.tarball_reader import ByteStream, LayerReader, read_all, spool_file

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


def _redacted(hex_digest: str) -> RedactedBytesRefusedError:
    """Redacted here (§7.5): never written back, whatever the artifact holds."""
    return RedactedBytesRefusedError(
        f"the artifact holds sha256:{hex_digest[:12]}, whose bytes were redacted in this brain; nothing was installed",
        hint="pull a tag packed after the redaction",
    )


class Staging:
    """Blob files added by one install, removable again if the install is refused."""

    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs
        self.added: list[Path] = []
        blobs.directory.mkdir(parents=True, exist_ok=True)

    def put(self, hex_digest: str, data: bytes) -> None:
        """Store verified bytes under their name unless a good copy already exists."""
        if hex_digest in self.blobs.destroyed():
            raise _redacted(hex_digest)
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
        if hex_digest in self.blobs.destroyed():
            temp.unlink(missing_ok=True)
            raise _redacted(hex_digest)
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


class _Held:
    """Verified members of one module layer, kept out of the blob store until the whole layer has checked out.

    Small members stay in memory (up to a budget); bigger ones wait in `.tmp-` files of the blob directory
    (invisible to readers, removed by `discard`). Only members the module references are ever adopted.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.data: dict[str, bytes] = {}
        self.files: dict[str, Path] = {}
        self._size = 0

    def keep(self, what: str, name: str, hex_digest: str, chunks: Iterator[bytes], size: int) -> None:
        """Hash one member against its name and hold it."""
        if size <= _SMALL and self._size + size <= _PENDING_BUDGET:
            data = read_all(chunks, _SMALL, what)
            try:
                self.data[hex_digest] = rehashed(data, hex_digest)
            except DigestMismatch:
                raise UntrustedArtifactError(f"{what}: member {name} does not hash to its name") from None
            self._size += len(data)
            return
        spooled = spool_file(chunks, self.directory)
        self.files[hex_digest] = spooled.path
        if spooled.sha256 != hex_digest:
            raise UntrustedArtifactError(f"{what}: member {name} does not hash to its name")

    def read(self, hex_digest: str, limit: int) -> bytes | None:
        """A held member's bytes (None if not held); a spooled one is read only up to `limit`."""
        data = self.data.get(hex_digest)
        if data is not None:
            return data
        path = self.files.get(hex_digest)
        if path is None:
            return None
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise UntrustedArtifactError(f"member blobs/{hex_digest} is larger than {limit} bytes for a block envelope")
        return data

    def adopt(self, hex_digest: str, staging: Staging) -> None:
        """Move one held member into the blob store."""
        data = self.data.pop(hex_digest, None)
        if data is not None:
            staging.put(hex_digest, data)
        path = self.files.pop(hex_digest, None)
        if path is not None:
            staging.adopt(hex_digest, path)

    def discard(self) -> None:
        """Remove every spooled member that was not adopted."""
        for path in self.files.values():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self.files.clear()
        self.data.clear()


@dataclass(frozen=True)
class UnpackedModule:
    """A module layer that was adopted: its composition and the schema versions of its readable blocks."""

    composition: Composition
    schema_versions: tuple[int, ...]


def unpack_module(
    stream: ByteStream,
    descriptor: Descriptor,
    memory_type: MemoryType,
    ref: ModuleRef,
    staging: Staging,
    max_inflate: int | None = None,
) -> UnpackedModule:
    """Adopt one module layer; refuses anything §6.8 refuses, members whose blocks do not decode, and members
    nothing in the module references (§6.3: a publisher cannot plant bytes in a consumer's store)."""
    what = f"{memory_type} layer {descriptor.digest}"
    held = _Held(staging.blobs.directory)
    try:
        composition_bytes = _read_module_members(stream, descriptor, what, ref, held, max_inflate)
        composition = _module_composition(what, memory_type, ref, composition_bytes)
        tombstones = tombstones_of(ref)
        if not tombstones <= set(composition.block_ids):
            raise UntrustedArtifactError(f"{what}: tombstones name blocks that are not members")
        referenced: set[str] = set()
        versions: set[int] = set()
        for block_id in composition.block_ids:
            if block_id not in tombstones:
                block = _check_block(staging.blobs, what, block_id, memory_type, held)
                versions.add(block.schema_version)
                referenced.add(block_id.hex)
                referenced.update(content_hexes(str(memory_type), block.payload()))
        unreferenced = sorted((set(held.data) | set(held.files)) - referenced)
        if unreferenced:
            raise UntrustedArtifactError(
                f"{what}: refused member blobs/{unreferenced[0]}"
                + (f" and {len(unreferenced) - 1} more" if len(unreferenced) > 1 else "")
                + ": nothing in the module references it (§6.3)",
                hint="the publisher packed bytes no block names; nothing was installed",
            )
        for hex_digest in sorted(referenced):
            held.adopt(hex_digest, staging)
        staging.put(ref.composition.hex, composition_bytes)
    finally:
        held.discard()
    return UnpackedModule(composition, tuple(sorted(versions)))


def _read_module_members(
    stream: ByteStream, descriptor: Descriptor, what: str, ref: ModuleRef, held: _Held, max_inflate: int | None
) -> bytes:
    """Read every member into `held`; the composition's bytes (bounded by the size its block count implies)."""
    composition_bytes: bytes | None = None
    reader = LayerReader(stream, compressed_size=descriptor.size, what=what, max_inflate=max_inflate)
    for entry, chunks in reader.members():
        if entry.name == COMPOSITION_MEMBER:
            composition_bytes = read_all(chunks, composition_size(ref), what)
            continue
        hex_digest = entry.name[len(BLOBS_PREFIX) :]
        if not entry.name.startswith(BLOBS_PREFIX) or not _HEX.fullmatch(hex_digest):
            raise UntrustedArtifactError(
                f"{what}: refused member {entry.name!r} (only composition.json and blobs/<hex>)"
            )
        held.keep(what, entry.name, hex_digest, chunks, entry.size)
    if composition_bytes is None:
        raise UntrustedArtifactError(f"{what}: composition.json is missing")
    return composition_bytes


def _module_composition(what: str, memory_type: MemoryType, ref: ModuleRef, composition_bytes: bytes) -> Composition:
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
    return composition


def _check_block(blobs: BlobStore, what: str, block_id: BlockId, memory_type: MemoryType, held: _Held) -> Block:
    try:
        data = held.read(block_id.hex, MAX_DOCUMENT)
    except UntrustedArtifactError as e:
        raise UntrustedArtifactError(f"{what}: {e.message}") from None
    if data is None:
        raise UntrustedArtifactError(f"{what}: member block {block_id} is missing from the layer")
    try:
        block = Block.decode(data, block_id)
    except BrainError as e:
        raise UntrustedArtifactError(f"{what}: member block {block_id} is not a valid block: {e.message}") from None
    if block.memory_type is not memory_type:
        raise UntrustedArtifactError(f"{what}: member block {block_id} is a {block.memory_type} block")
    for hex_digest in content_hexes(str(memory_type), block.payload()):
        present = hex_digest in held.data or hex_digest in held.files
        if not present and not blobs.verify_file(OciDigest(hex_digest)):
            raise UntrustedArtifactError(f"{what}: content sha256:{hex_digest} named by block {block_id} is missing")
    return block


def unpack_history(
    stream: ByteStream, descriptor: Descriptor, staging: Staging | None, max_inflate: int | None = None
) -> dict[OciDigest, Snapshot]:
    """Check the history layer's snapshots and compositions (each must hash to its name and decode);
    adopt them into `staging` unless it is None."""
    what = f"history layer {descriptor.digest}"
    snapshots: dict[OciDigest, Snapshot] = {}
    reader = LayerReader(stream, compressed_size=descriptor.size, what=what, max_inflate=max_inflate)
    for entry, chunks in reader.members():
        prefix, _, hex_digest = entry.name.partition("/")
        if prefix + "/" not in (SNAPSHOTS_PREFIX, COMPOSITIONS_PREFIX) or not _HEX.fullmatch(hex_digest):
            continue  # §6.8: other member names are ignored (the reader has already refused unsafe ones)
        data = read_all(chunks, MAX_DOCUMENT, what)
        digest = OciDigest(hex_digest)
        try:
            if prefix + "/" == SNAPSHOTS_PREFIX:
                snapshots[digest] = decode_rehashed(data, digest, partial(Snapshot.decode, expected=digest))
            else:
                decode_rehashed(data, digest, partial(Composition.decode, expected=digest))
        except DigestMismatch:
            raise UntrustedArtifactError(f"{what}: member {entry.name} does not hash to its name") from None
        except BrainError as e:
            raise UntrustedArtifactError(f"{what}: member {entry.name} is not a valid document: {e.message}") from None
        if staging is not None:
            staging.put(hex_digest, data)
    return snapshots
