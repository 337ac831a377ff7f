"""The content-addressed blob store: `blobs/sha256/<hex>`, every read re-hashed.

Files are written once under the SHA-256 of their bytes. An existing file is never trusted by name or
size: `put` re-hashes it and replaces it with the good bytes if it is corrupt.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from brain.errors import IntegrityError, InvalidInputError, NotFoundError
from brain.identity import Digest, OciDigest
from brain.store.atomic import TEMP_PREFIX, fsync_directory, open_temp, publish, sync_tree, temp_file
from brain.store.write_behind import WriteBehind

BLOB_DIR = ("blobs", "sha256")
CHUNK = 1 << 20
_FIX = "the file is corrupt: restore it from a copy of the brain or pull it again, then run `brain verify`"


def _corrupt(path: Path, digest: Digest, actual: str) -> IntegrityError:
    return IntegrityError(f"blob {path} does not hash to its name {digest} (it hashes to sha256:{actual})", hint=_FIX)


def _hash_file(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            sha.update(chunk)
    return sha.hexdigest()


class VerifyingReader(io.RawIOBase):
    """A read-only stream over one blob that raises `IntegrityError` at EOF if the bytes were wrong."""

    def __init__(self, path: Path, digest: Digest) -> None:
        super().__init__()
        self._path, self._digest = path, digest
        self._handle = open(path, "rb")  # noqa: SIM115 - closed in close()
        self._sha = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1, /) -> bytes:
        """Up to `size` bytes (all that is left by default); never None: the file is blocking."""
        return super().read(size) or b""

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        count = self._handle.readinto(buffer)
        if count:
            self._sha.update(memoryview(buffer)[:count])
        elif len(buffer) and self._sha.hexdigest() != self._digest.hex:
            raise _corrupt(self._path, self._digest, self._sha.hexdigest())
        return count or 0

    def close(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.close()
        super().close()


class BlobStore:
    """Blobs of one brain directory, named by the hex of their SHA-256."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.directory = self.root.joinpath(*BLOB_DIR)

    def path(self, digest: Digest) -> Path:
        """Where the blob named `digest` lives (whether or not it exists)."""
        return self.directory / digest.hex

    def has(self, digest: Digest) -> bool:
        """Whether a file exists under `digest` (not a proof that its bytes are right)."""
        return self.path(digest).is_file()

    def size(self, digest: Digest) -> int:
        """The stored length of the blob named `digest`."""
        try:
            return self.path(digest).stat().st_size
        except FileNotFoundError:
            raise self._missing(digest) from None

    def get(self, digest: Digest) -> bytes:
        """The bytes of `digest`, re-hashed; raises `NotFoundError` or `IntegrityError`."""
        path = self.path(digest)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            raise self._missing(digest) from None
        actual = hashlib.sha256(data).hexdigest()
        if actual != digest.hex:
            raise _corrupt(path, digest, actual)
        return data

    def open(self, digest: Digest) -> VerifyingReader:
        """A stream over the blob that verifies its hash when the end is reached."""
        path = self.path(digest)
        try:
            return VerifyingReader(path, digest)
        except (FileNotFoundError, IsADirectoryError):
            raise self._missing(digest) from None

    def verify_file(self, digest: Digest) -> bool:
        """True iff the blob exists and its bytes hash to `digest` (streamed)."""
        path = self.path(digest)
        try:
            return _hash_file(path) == digest.hex
        except (FileNotFoundError, IsADirectoryError):
            return False

    def put(self, data: bytes, *, sync: bool = True) -> OciDigest:
        """Store `data` under its digest; a good existing copy is kept, a corrupt one is replaced."""
        digest = OciDigest.of(data)
        target = os.path.join(self.directory, digest.hex)
        try:
            with open(target, "rb") as handle:
                if hashlib.sha256(handle.read()).hexdigest() == digest.hex:
                    return digest
        except (FileNotFoundError, IsADirectoryError):
            pass
        self._write_new(target, data, sync)
        return digest

    def _write_new(self, target: str, data: bytes, sync: bool) -> None:
        # atomic_write's protocol (unique .tmp- sibling, rename over the name) in bare os calls: an ingest
        # creates a file per block, and the file-object layers cost more than the syscalls on small blobs.
        while True:
            try:
                temp, fd = open_temp(self.directory)
                break
            except FileNotFoundError:
                self.directory.mkdir(parents=True, exist_ok=True)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if sync:
                os.fsync(fd)
            os.replace(temp, target)  # before closing: the temp file stays locked against sweep_temps until renamed
        except BaseException:
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise
        os.close(fd)
        if sync:
            fsync_directory(self.directory)

    def put_stream(
        self, chunks: Iterable[bytes], expected: Digest | None = None, *, sync: bool = True
    ) -> tuple[OciDigest, int]:
        """Store a stream in constant memory; refuses (stores nothing) if it does not hash to `expected`."""
        self.directory.mkdir(parents=True, exist_ok=True)
        sha, size = hashlib.sha256(), 0
        with temp_file(self.directory) as (temp, handle):
            writer = WriteBehind(handle.fileno())  # unbuffered: `handle` itself is never written to
            try:
                for chunk in chunks:
                    sha.update(chunk)
                    writer.write(chunk)
                    size += len(chunk)
            finally:
                writer.close()
            digest = OciDigest(sha.hexdigest())
            if expected is not None and digest.hex != expected.hex:
                raise IntegrityError(
                    f"refused to store a blob announced as {expected}: its {size} bytes hash to {digest}",
                    hint="the source changed or was tampered with; fetch it again",
                )
            if not self.verify_file(digest):
                publish(temp, handle, self.path(digest), sync=sync)
        return digest, size

    def digests(self, prefix: str = "") -> Iterator[OciDigest]:
        """Every stored blob name starting with the hex `prefix` (temporary files and other dot-names are ignored)."""
        try:
            entries = os.scandir(self.directory)
        except FileNotFoundError:
            return
        with entries:
            for entry in entries:
                if entry.name.startswith(prefix) and not entry.name.startswith(".") and entry.is_file():
                    try:
                        yield OciDigest(entry.name)
                    except InvalidInputError:
                        continue

    def sync(self) -> None:
        """Make every blob written with `sync=False` durable."""
        if self.directory.is_dir():
            sync_tree(self.directory)

    def _missing(self, digest: Digest) -> NotFoundError:
        return NotFoundError(f"blob {digest} is not stored in {self.directory}")


__all__ = ["BLOB_DIR", "TEMP_PREFIX", "BlobStore", "VerifyingReader"]
