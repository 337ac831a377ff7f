"""The content-addressed blob store: `blobs/sha256/<hex>`, every read re-hashed.

Files are written once under the SHA-256 of their bytes. An existing file is never trusted by name or
size: `put` re-hashes it and replaces it with the good bytes if it is corrupt.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import stat
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path

from brain.errors import (
    BrainUnreadableError,
    IntegrityError,
    InvalidInputError,
    NotFoundError,
    NotRegularFileError,
)
from brain.identity import Digest, OciDigest
from brain.store.atomic import (
    TEMP_PREFIX,
    fsync_directory,
    open_temp,
    publish,
    sync_tree,
    temp_file,
)
from brain.store.sidecars import TOMBSTONES
from brain.store.user_files import file_kind
from brain.store.write_behind import WriteBehind
from brain.identity.rehash import DigestMismatch, rehashed

BLOB_DIR = ("blobs", "sha256")
TOMBSTONES_FILE = TOMBSTONES.parts  # digests destroyed by redaction → reason (§5.5, §7.5)
CHUNK = 1 << 20
_UNNAMED_TEMPS = hasattr(os, "O_TMPFILE") and hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd")
_NO_UNNAMED = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOSYS)
_PERMISSION = "check the owner and mode of the file (chmod u+r) and its directory, then run `brain verify`"
_REMOVE = "move it away (the store holds only regular files), then pull or restore the blob and run `brain verify`"
_FIX = "the file is corrupt: restore it from a copy of the brain or pull it again, then run `brain verify`"


_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def _unreadable(path: str, error: OSError) -> BrainUnreadableError:
    return BrainUnreadableError(
        f"blob {path} cannot be read: {error.strerror}", hint="check the disk and the file, then run `brain verify`"
    )


def _corrupt(path: Path, digest: Digest, actual: str) -> IntegrityError:
    return IntegrityError(f"blob {path} does not hash to its name {digest} (it hashes to sha256:{actual})", hint=_FIX)


def open_regular(path: str | Path) -> io.BufferedReader:
    """Open a stored file for reading only if it is a regular file.

    `O_NONBLOCK` keeps the open itself from waiting for a FIFO's writer, and `fstat` on the opened
    descriptor (not the name, which could be swapped) decides: anything but a regular file raises
    `NotRegularFileError` (damage to report), so no read ever hangs. `FileNotFoundError` passes through.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except PermissionError as e:
        raise BrainUnreadableError(f"{path} cannot be read: permission denied", hint=_PERMISSION) from e
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = file_kind(mode)
            raise NotRegularFileError(f"{path} is {kind}, not a stored blob", hint=_REMOVE)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _hash_file(path: Path) -> str:
    sha = hashlib.sha256()
    with open_regular(path) as handle:
        while chunk := handle.read(CHUNK):
            sha.update(chunk)
    return sha.hexdigest()


class VerifyingReader(io.RawIOBase):
    """A read-only stream over one blob that raises `IntegrityError` at EOF if the bytes were wrong."""

    def __init__(self, path: Path, digest: Digest) -> None:
        super().__init__()
        self._path, self._digest = path, digest
        self._handle = open_regular(path)
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
        self._directory_name = str(self.directory)
        self._destroyed: frozenset[str] | None = None
        self._dir_fd: list[int] = []  # the blob directory opened O_PATH, once; closed with the store
        weakref.finalize(self, _close_all, self._dir_fd)
        self._unnamed = _UNNAMED_TEMPS  # O_TMPFILE + linkat work here (cleared at the first refusal)

    def destroyed(self) -> frozenset[str]:
        """Hex digests whose bytes a redaction destroyed (`boltzmann/tombstones.json`): never stored again."""
        if self._destroyed is None:
            self._destroyed = read_destroyed(self.root)
        return self._destroyed

    def forget_destroyed(self) -> None:
        """Re-read `tombstones.json` on the next `destroyed()` (after a redaction wrote it)."""
        self._destroyed = None

    def delete(self, digest: Digest) -> bool:
        """Remove the blob file named `digest` (redaction, prune); False if there was none."""
        try:
            os.unlink(self.path(digest))
            return True
        except FileNotFoundError:
            return False

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
        """The bytes of `digest`, re-hashed; raises `NotFoundError` or `IntegrityError`.

        `open_regular`'s checks in bare os calls (no path or file objects): an index build or a verify reads
        back a blob per block, and on small blobs the object layers cost more than the syscalls."""
        path = os.path.join(self._directory_name, digest.hex)
        try:
            fd = os.open(path, _READ_FLAGS)
        except FileNotFoundError:
            raise self._missing(digest) from None
        except PermissionError as e:
            raise BrainUnreadableError(f"{path} cannot be read: permission denied", hint=_PERMISSION) from e
        except OSError as e:
            raise _unreadable(path, e) from e
        try:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode):
                raise NotRegularFileError(f"{path} is {file_kind(found.st_mode)}, not a stored blob", hint=_REMOVE)
            data = os.read(fd, found.st_size + 1)  # one read of the whole file and one byte more
            if len(data) != found.st_size:  # a short read, or the file grew since: read to the end
                chunks = [data]
                while chunk := os.read(fd, CHUNK):
                    chunks.append(chunk)
                data = b"".join(chunks)
        except NotRegularFileError:
            raise
        except OSError as e:
            raise _unreadable(path, e) from e
        finally:
            os.close(fd)
        try:
            return rehashed(data, digest)
        except DigestMismatch as e:
            raise _corrupt(Path(path), digest, e.actual_hex) from None

    def open(self, digest: Digest) -> VerifyingReader:
        """A stream over the blob that verifies its hash when the end is reached."""
        path = self.path(digest)
        try:
            return VerifyingReader(path, digest)
        except FileNotFoundError:
            raise self._missing(digest) from None

    def verify_file(self, digest: Digest) -> bool:
        """True iff the blob exists and its bytes hash to `digest` (streamed)."""
        path = self.path(digest)
        try:
            return _hash_file(path) == digest.hex
        except (FileNotFoundError, NotRegularFileError):
            return False

    def put(self, data: bytes, *, sync: bool = True) -> OciDigest:
        """Store `data` under its digest; a good existing copy is kept, a corrupt one is replaced."""
        digest = OciDigest.of(data)
        if digest.hex in self.destroyed():
            return digest  # redacted bytes are never written back (§7.5)
        if self._unnamed and self._link_new(digest.hex, data, sync):
            return digest
        target = os.path.join(self.directory, digest.hex)
        try:
            with open_regular(target) as handle:
                if hashlib.sha256(handle.read()).hexdigest() == digest.hex:
                    return digest
        except (FileNotFoundError, NotRegularFileError):
            pass  # written (over a FIFO or the like, a directory is reported by the rename) below
        self._write_new(target, data, sync)
        return digest

    def _link_new(self, name: str, data: bytes, sync: bool) -> bool:
        """Write `data` into an unnamed file of the blob directory and link it as `name`; False if that
        name exists (the caller checks the existing copy) or this filesystem has no unnamed files.

        Four syscalls (open O_TMPFILE, write, linkat, close) where a named temp file takes nine (a probe of
        the name, a random temp name, open, flock, two stats, write, rename, close): half the kernel time
        of creating a small file here. The link is atomic and comes after the last byte is written, so the
        name never shows a torn file; a kill before it leaves nothing behind (the inode was never named),
        so there is no temp file to sweep. Durability is the caller's, as for `_write_new`.
        """
        for attempt in (1, 2):
            directory = self._directory_fd()
            if directory is None:
                return False
            try:
                fd = os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o666, dir_fd=directory)
            except OSError as e:
                if e.errno in _NO_UNNAMED:
                    self._unnamed = False
                    return False
                # The directory was removed (EPERM/ENOENT on the old one) or made again: open it afresh once;
                # after that the named-temp path tries, and reports a real problem in its own words.
                self._close_directory()
                if attempt == 1:
                    continue
                return False
            break
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if sync:
                os.fsync(fd)
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=directory, follow_symlinks=True)
        except FileExistsError:
            return False
        except OSError as e:
            if e.errno in (*_NO_UNNAMED, errno.ENOENT, errno.EXDEV):  # no /proc, or a filesystem without it
                self._unnamed = False
                return False
            if e.filename is None or str(e.filename).startswith("/proc/"):
                e.filename = os.path.join(self.directory, name)  # name the blob being written, not /proc
            raise
        finally:
            os.close(fd)
        if sync:
            fsync_directory(self.directory)
        return True

    def _directory_fd(self) -> int | None:
        if not self._dir_fd:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._dir_fd.append(os.open(self.directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC))
            except OSError:
                return None  # the named-temp path reports the problem with its own message
        return self._dir_fd[0]

    def _close_directory(self) -> None:
        _close_all(self._dir_fd)

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
        except BaseException as e:
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            if isinstance(e, OSError) and e.filename is None:
                e.filename = target  # a full disk reports no file name: name the blob being written
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
            except OSError as e:
                if e.filename is None:
                    e.filename = str(temp)  # a full disk reports no file name: name the file being written
                raise
            finally:
                writer.close()
            digest = OciDigest(sha.hexdigest())
            if expected is not None and digest.hex != expected.hex:
                raise IntegrityError(
                    f"refused to store a blob announced as {expected}: its {size} bytes hash to {digest}",
                    hint="the source changed or was tampered with; fetch it again",
                )
            if digest.hex not in self.destroyed() and not self.verify_file(digest):
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


def _close_all(fds: list[int]) -> None:
    while fds:
        with contextlib.suppress(OSError):
            os.close(fds.pop())


def read_destroyed(root: Path) -> frozenset[str]:
    """The hex digests `boltzmann/tombstones.json` lists (absent or unreadable: none)."""
    try:
        mapping = json.loads(Path(root).joinpath(*TOMBSTONES_FILE).read_bytes())
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return frozenset()
    if not isinstance(mapping, dict):
        return frozenset()
    return frozenset(key.removeprefix("sha256:") for key in mapping if isinstance(key, str))


__all__ = ["BLOB_DIR", "TEMP_PREFIX", "TOMBSTONES_FILE", "BlobStore", "VerifyingReader", "read_destroyed"]
