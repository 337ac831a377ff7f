"""Crash-safe file writes: every byte the store writes goes through this module.

A file is written to a unique `.tmp-<hex>` sibling (readers ignore dot-names), flushed, renamed over its
final name with `os.replace`, and the directory is fsynced, so a reader sees the old file or the new
one, never a torn one. Blob writes may defer durability (`sync=False`) and make a whole batch durable
with one `sync_tree` call before the pointer that makes them reachable is written.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
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


@contextlib.contextmanager
def temp_file(directory: Path) -> Iterator[tuple[Path, BinaryIO]]:
    """A new, exclusively created `.tmp-<hex>` file in `directory`; deleted on exit unless renamed away."""
    while True:
        temp = directory / f"{TEMP_PREFIX}{secrets.token_hex(8)}"
        try:
            handle = open(temp, "xb")  # noqa: SIM115 - closed below, renamed by the caller
        except FileExistsError:
            continue
        break
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


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Replace `path` with exactly `data`, atomically (and durably unless `sync=False`)."""
    path = Path(path)
    with temp_file(path.parent) as (temp, handle):
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


def _libc_syncfs() -> object | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return getattr(ctypes.CDLL(name, use_errno=True), "syncfs", None)
    except OSError:
        return None


_SYNCFS = _libc_syncfs()


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
