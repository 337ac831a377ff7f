"""The byte-exact layer writer of §6.5: POSIX ustar members, gzip with a fixed header, zlib level 9.

Two implementations that follow this module produce identical layer digests for identical members, which
is what makes packing reproducible and lets registries deduplicate layers. Member data is streamed from
files in chunks, so memory stays constant however large a source is; the compressed layer is written to
a temp file while it is hashed, so its digest is known without a second pass.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from brain.errors import IntegrityError, InvalidInputError, NotRegularFileError
from brain.identity import OciDigest
from brain.store.atomic import publish, temp_file
from brain.store.blobs import open_regular

BLOCK_SIZE = 512
RECORD_SIZE = 10240
GZIP_HEADER = bytes.fromhex("1f8b08000000000002ff")
CHUNK_SIZE = 1 << 20
# Compressing in batches of this many tar bytes keeps zlib calls few when members are tiny blocks.
_BATCH = 1 << 20


@dataclass(frozen=True, slots=True)
class Member:
    """One tar member: its path inside the archive and where its bytes come from (a file or bytes)."""

    name: str
    path: Path | None = None
    data: bytes | None = None
    # When set, the streamed bytes must hash to this hex digest (a blob is trusted only after re-hashing).
    sha256: str | None = None


@dataclass(frozen=True, slots=True)
class LayerFile:
    """A layer written to disk: where it lives, its OCI digest and its compressed size."""

    path: Path
    digest: OciDigest
    size: int


# The fixed parts of every header (§6.5); only the name, size and checksum vary.
_MODE_IDS = b"0000644\0" + b"0000000\0" * 2
_MTIME = b"00000000000\0"
_TAIL = b"0" + b"\0" * 100 + b"ustar\x0000" + b"\0" * 247
_CHECKSUM_BASE = sum(_MODE_IDS) + sum(_MTIME) + 8 * 32 + sum(_TAIL)


def ustar_header(name: str, size: int) -> bytes:
    """The 512-byte ustar header §6.5 prescribes for a regular file `name` of `size` bytes."""
    encoded = name.encode("ascii")
    if not 0 < len(encoded) <= 100:
        raise InvalidInputError(f"tar member name {name!r} must be 1-100 ASCII bytes")
    if not 0 <= size < 8**11:
        raise InvalidInputError(f"tar member {name!r} is too large for a ustar header ({size} bytes)")
    size_field = b"%011o\0" % size
    checksum = _CHECKSUM_BASE + sum(encoded) + sum(size_field)
    return encoded.ljust(100, b"\0") + _MODE_IDS + size_field + _MTIME + b"%06o\0 " % checksum + _TAIL


def _padding(size: int, unit: int) -> bytes:
    return b"\0" * (-size % unit)


def _member_chunks(member: Member) -> Iterator[bytes]:
    """Header, data and padding of one member; data is checked against `member.sha256` when given."""
    if member.data is not None:
        data = member.data
        _check_digest(member, hashlib.sha256(data).hexdigest())
        yield ustar_header(member.name, len(data))
        yield data
        yield _padding(len(data), BLOCK_SIZE)
        return
    if member.path is None:
        raise InvalidInputError(f"tar member {member.name!r} has neither data nor a source path")
    with open_regular(member.path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= CHUNK_SIZE:
            data = handle.read()
            if len(data) != size:
                raise IntegrityError(f"{member.path} changed while it was being packed")
            yield from _member_chunks(Member(member.name, data=data, sha256=member.sha256))
            return
        yield ustar_header(member.name, size)
        hasher = hashlib.sha256()
        remaining = size
        while remaining:
            chunk = handle.read(min(CHUNK_SIZE, remaining))
            if not chunk:
                raise IntegrityError(f"{member.path} shrank while it was being packed")
            hasher.update(chunk)
            remaining -= len(chunk)
            yield chunk
        if handle.read(1):
            raise IntegrityError(f"{member.path} grew while it was being packed")
        _check_digest(member, hasher.hexdigest())
        yield _padding(size, BLOCK_SIZE)


def _check_digest(member: Member, actual: str) -> None:
    if member.sha256 is not None and actual != member.sha256:
        where = member.path if member.path is not None else member.name
        raise IntegrityError(
            f"{where} does not hash to sha256:{member.sha256} (got sha256:{actual}); the blob is corrupt, "
            "run `brain verify`"
        )


def tar_chunks(members: Iterable[Member]) -> Iterator[bytes]:
    """The uncompressed tar stream: members in the given order, two zero blocks, padded to 10240."""
    total = 0
    for member in members:
        for chunk in _member_chunks(member):
            total += len(chunk)
            yield chunk
    end = b"\0" * (2 * BLOCK_SIZE)
    total += len(end)
    yield end + _padding(total, RECORD_SIZE)


def gzip_chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Gzip `chunks` exactly as §6.5 requires: fixed header, raw DEFLATE level 9, CRC-32 and ISIZE."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY)
    crc = 0
    length = 0
    batch = bytearray()
    yield GZIP_HEADER
    for chunk in chunks:
        crc = zlib.crc32(chunk, crc)
        length += len(chunk)
        if len(chunk) >= _BATCH:
            if batch:
                yield compressor.compress(bytes(batch))
                batch.clear()
            yield compressor.compress(chunk)
            continue
        batch += chunk
        if len(batch) >= _BATCH:
            yield compressor.compress(bytes(batch))
            batch.clear()
    if batch:
        yield compressor.compress(bytes(batch))
    yield compressor.flush(zlib.Z_FINISH)
    yield crc.to_bytes(4, "little") + (length & 0xFFFFFFFF).to_bytes(4, "little")


def _intact(path: Path, digest: OciDigest) -> bool:
    hasher = hashlib.sha256()
    try:
        with open_regular(path) as handle:
            while chunk := handle.read(CHUNK_SIZE):
                hasher.update(chunk)
    except (FileNotFoundError, NotRegularFileError):
        return False
    return hasher.hexdigest() == digest.hex


def layer_chunks(members: Iterable[Member]) -> Iterator[bytes]:
    """The compressed layer bytes for `members`, as a stream."""
    return gzip_chunks(tar_chunks(members))


def layer_bytes(members: Iterable[Member]) -> bytes:
    """The whole compressed layer in memory (small layers and tests)."""
    return b"".join(layer_chunks(members))


def write_layer(members: Iterable[Member], directory: Path, *, sync: bool = False) -> LayerFile:
    """Write the layer for `members` into `directory/<hex>` atomically, hashing while writing.

    An existing file of the same name is kept only if it re-hashes to its name; a corrupt one is replaced.
    """
    directory = Path(directory)
    hasher = hashlib.sha256()
    size = 0
    with temp_file(directory) as (temp, handle):
        for chunk in layer_chunks(members):
            if chunk:
                hasher.update(chunk)
                handle.write(chunk)
                size += len(chunk)
        digest = OciDigest(hasher.hexdigest())
        target = directory / digest.hex
        if not _intact(target, digest):
            publish(temp, handle, target, sync=sync)
    return LayerFile(path=target, digest=digest, size=size)
