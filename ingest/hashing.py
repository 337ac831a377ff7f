"""Read a source file once, in constant memory, and get both its SHA-256 and its BLAKE3.

SHA-256 names the blob (storage identity); BLAKE3 is the local change-detection fingerprint. The store's
`put_stream(chunks)` hashes SHA-256 itself while writing, so registration feeds it `Blake3Tee(...)` over
`iter_file_chunks(path)`: the file is read once, and both digests come out of the same pass.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

import blake3

from brain.identity import OciDigest

CHUNK_SIZE = 1 << 20


def _new_blake3() -> blake3.blake3:
    # Multi-threaded BLAKE3 pays off only on large updates; 1 MiB chunks qualify.
    return blake3.blake3(max_threads=blake3.blake3.AUTO)


class FileHashes(NamedTuple):
    """Both digests of one file, and its size in bytes."""

    sha256: OciDigest
    blake3: str
    size: int


def iter_file_chunks(path: Path, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """The bytes of `path`, `chunk_size` at a time (the file stays open until the iterator ends)."""
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            yield chunk


class Blake3Tee:
    """Pass chunks through unchanged while hashing them with BLAKE3; read `.hexdigest()` afterwards."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = chunks
        self._hasher = _new_blake3()
        self.size = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            self._hasher.update(chunk)
            self.size += len(chunk)
            yield chunk

    def hexdigest(self) -> str:
        """BLAKE3 (256-bit, hex) of every chunk that has passed through so far."""
        return self._hasher.hexdigest()


def hash_file(path: Path, chunk_size: int = CHUNK_SIZE) -> FileHashes:
    """SHA-256 and BLAKE3 of `path` in one pass with constant memory."""
    sha, b3, size = hashlib.sha256(), _new_blake3(), 0
    buffer = bytearray(chunk_size)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as handle:
        while n := handle.readinto(buffer):
            sha.update(view[:n])
            b3.update(view[:n])
            size += n
    return FileHashes(OciDigest(sha.hexdigest()), b3.hexdigest(), size)
