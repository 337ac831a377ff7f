"""`BackgroundPuts`: small writers store inline, large ones through a forked helper; drain means stored."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from brain.identity import OciDigest
from brain.store.background import START_AFTER, BackgroundPuts
from brain.store.blobs import BlobStore


def _blobs(count: int) -> list[bytes]:
    return [f"blob {i}".encode() for i in range(count)]


def test_everything_put_is_stored_once_drained(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    puts = BackgroundPuts(store)
    data = _blobs(START_AFTER + 700)
    for item in data:
        puts.put(item)
    puts.drain()
    assert all(store.get(OciDigest.of(item)) == item for item in data)
    assert puts._process is not None  # the helper did take part
    puts.close()
    assert puts._process is None


def test_a_small_writer_never_forks(tmp_path: Path) -> None:
    puts = BackgroundPuts(BlobStore(tmp_path))
    for item in _blobs(10):
        puts.put(item)
    puts.drain()
    assert puts._process is None and len(list(BlobStore(tmp_path).digests())) == 10


def test_a_failed_put_is_raised_at_the_next_drain(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    puts = BackgroundPuts(store)
    for item in _blobs(START_AFTER + 1):
        puts.put(item)
    puts.drain()
    shutil.rmtree(store.directory)
    store.directory.write_bytes(b"not a directory")  # every later put fails
    for item in _blobs(600)[300:]:
        puts.put(item + b"!")
    with pytest.raises(OSError):
        puts.drain()
    puts.close()
