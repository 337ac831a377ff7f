"""Crash-safe file writes: every byte the store writes goes through this module.

A file is written to a unique `.tmp-<hex>` sibling (readers ignore dot-names), flushed, renamed over its
final name with `os.replace`, and the directory is fsynced, so a reader sees the old file or the new
one, never a torn one. Blob writes may defer durability (`sync=False`) and make a whole batch durable
with one `sync_tree` call before the pointer that makes them reachable is written.

A temp file is `flock`ed by its writer for as long as it is open, so `sweep_temps` (run by a writer that
has just taken the brain's lock) can tell the leftovers of a killed process, which nobody holds, from the
temp file of a live one (a pull downloads without the brain's lock). A writer whose fresh temp file was
swept between its creation and its `flock` notices and starts another.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

TEMP_PREFIX = ".tmp-"


def fsync_directory(directory: Path) -> None:
    """Make a rename or creation inside `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_temp(directory: str | Path, mode: int = 0o666) -> tuple[str, int]:
    """A new `.tmp-<hex>` file in `directory`, opened for writing and locked against `sweep_temps`: (path, fd).

    `mode` (less the umask) applies from creation: a secret is never readable by others, even briefly.
    """
    while True:
        temp = os.path.join(directory, f"{TEMP_PREFIX}{secrets.token_hex(8)}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        except FileExistsError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # blocks only while a sweep holds it, just before it unlinks it
            if os.stat(temp).st_ino == os.fstat(fd).st_ino:
                return temp, fd
        except FileNotFoundError:
            pass  # swept between os.open and flock: start another
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def sweep_temps(directory: Path, before: float) -> int:
    """Delete the `.tmp-*` files in `directory` that dead writers left: unlocked, last written before `before`."""
    removed = 0
    try:
        entries = os.scandir(directory)
    except OSError:
        return 0
    with entries:
        for entry in entries:
            if entry.name.startswith(TEMP_PREFIX) and _remove_abandoned(entry, before):
                removed += 1
    return removed


def _remove_abandoned(entry: os.DirEntry[str], before: float) -> bool:
    try:
        if not entry.is_file(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_mtime >= before:
            return False
        fd = os.open(entry.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live writer holds its temp file's lock
        if os.stat(entry.path).st_ino != os.fstat(fd).st_ino:
            return False
        os.unlink(entry.path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


@contextlib.contextmanager
def temp_file(directory: Path, mode: int = 0o666) -> Iterator[tuple[Path, BinaryIO]]:
    """A new, exclusively created `.tmp-<hex>` file in `directory`; deleted on exit unless renamed away."""
    name, fd = open_temp(directory, mode)
    temp = Path(name)
    handle = os.fdopen(fd, "wb")
    try:
        with handle:
            yield temp, handle
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def publish(temp: Path, handle: BinaryIO, target: Path, *, sync: bool = True) -> None:
    """Flush `handle` and rename `temp` over `target`; with `sync`, fsync the file and the directory."""
    handle.flush()
    if sync:
        os.fsync(handle.fileno())
    os.replace(temp, target)
    if sync:
        fsync_directory(target.parent)


def atomic_write(path: Path, data: bytes, *, sync: bool = True, mode: int = 0o666) -> None:
    """Replace `path` with exactly `data`, atomically (and durably unless `sync=False`); `mode` as `open_temp`."""
    path = Path(path)
    with temp_file(path.parent, mode) as (temp, handle):
        handle.write(data)
        publish(temp, handle, path, sync=sync)


def atomic_write_stream(path: Path, chunks: Iterable[bytes], *, sync: bool = True) -> int:
    """Replace `path` with the concatenated `chunks` in constant memory; returns the byte count."""
    path = Path(path)
    size = 0
    with temp_file(path.parent) as (temp, handle):
        for chunk in chunks:
            handle.write(chunk)
            size += len(chunk)
        publish(temp, handle, path, sync=sync)
    return size


def _libc(function: str) -> object | None:
    # The process's own symbols: libc is already loaded, and `ctypes.util.find_library` would run
    # `ldconfig` in a subprocess at every start of the CLI.
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), function, None)
    except OSError:
        return None


_SYNCFS = _libc("syncfs")
_SYNC_FILE_RANGE = _libc("sync_file_range")
if _SYNC_FILE_RANGE is not None:
    _SYNC_FILE_RANGE.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]  # type: ignore[attr-defined]
_SYNC_FILE_RANGE_WRITE = 2
_SYNC_FILE_RANGE_WAIT_ALL = 1 | 2 | 4  # wait before, write, wait after


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Ask the kernel to start writing a range of `fd` to disk now, without waiting (Linux; else nothing).

    Not durability (the commit's sync still provides that): a large blob's pages then reach the disk while
    the rest is hashed and written, instead of all at once when the commit syncs.
    """
    if _SYNC_FILE_RANGE is not None:
        _SYNC_FILE_RANGE(fd, offset, length, _SYNC_FILE_RANGE_WRITE)  # type: ignore[operator]


def settle_and_drop(fd: int, offset: int, length: int) -> None:
    """Wait until a range of `fd` is on disk, then drop it from the page cache (Linux; else nothing).

    For a large blob written once and rarely read back: its pages would otherwise crowd the cache (and
    make every later page the kernel needs cost a reclaim), and the commit's sync waits for less.
    """
    if _SYNC_FILE_RANGE is not None:
        _SYNC_FILE_RANGE(fd, offset, length, _SYNC_FILE_RANGE_WAIT_ALL)  # type: ignore[operator]
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, offset, length, os.POSIX_FADV_DONTNEED)


def sync_tree(directory: Path) -> None:
    """Make every file written under `directory` durable (one `syncfs`, else a global `sync`)."""
    # One filesystem-wide flush is far cheaper than an fsync per blob when a commit adds thousands.
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        if _SYNCFS is None or _SYNCFS(fd) != 0:  # type: ignore[operator]
            os.sync()
        os.fsync(fd)
    finally:
        os.close(fd)
