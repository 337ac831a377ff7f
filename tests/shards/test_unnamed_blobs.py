"""Blob puts through unnamed files (O_TMPFILE + linkat): one file per blob and never a temp name, a corrupt
existing copy still replaced, a removed-and-recreated directory still written, and the named-temp path kept
for filesystems without unnamed files."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from brain.identity import OciDigest
from brain.store.blobs import BlobStore


def _names(store: BlobStore) -> list[str]:
    return sorted(os.listdir(store.directory))


def test_a_put_creates_exactly_its_blob(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    digests = [store.put(f"blob {i}".encode(), sync=False) for i in range(50)]
    assert _names(store) == sorted(d.hex for d in digests)  # no .tmp- file left, nothing else
    assert all(store.get(d) == f"blob {i}".encode() for i, d in enumerate(digests))
    if store._unnamed:  # noqa: SLF001 - the path this test is about, where the filesystem has it
        assert store._dir_fd  # noqa: SLF001


def test_a_corrupt_existing_copy_is_replaced(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    digest = store.put(b"the good bytes")
    path = store.path(digest)
    path.write_bytes(b"rotten")
    assert store.put(b"the good bytes") == digest
    assert path.read_bytes() == b"the good bytes" and _names(store) == [digest.hex]


def test_a_good_existing_copy_is_kept(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    digest = store.put(b"kept")
    inode = store.path(digest).stat().st_ino
    assert store.put(b"kept", sync=False) == digest
    assert store.path(digest).stat().st_ino == inode and _names(store) == [digest.hex]


def test_the_directory_removed_and_made_again(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    store.put(b"first")
    shutil.rmtree(store.directory)
    store.directory.mkdir(parents=True)
    digest = store.put(b"second", sync=False)
    assert _names(store) == [digest.hex] and store.get(digest) == b"second"


@pytest.mark.parametrize("sync", [True, False])
def test_without_unnamed_files_the_named_temp_path_stores_the_same(tmp_path: Path, sync: bool) -> None:
    store = BlobStore(tmp_path)
    store._unnamed = False  # noqa: SLF001 - as on a filesystem without O_TMPFILE
    digest = store.put(b"named temp", sync=sync)
    assert digest == OciDigest(hashlib.sha256(b"named temp").hexdigest())
    assert _names(store) == [digest.hex] and store.get(digest) == b"named temp"
