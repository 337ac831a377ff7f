"""The fingerprint index and one-pass hashing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import blake3
import pytest

from brain.errors import InvalidInputError
from brain.identity import BlockId, OciDigest
from ingest.fingerprints import SIDECAR, Blake3Tee, FingerprintIndex, hash_file, iter_file_chunks

BLOCK = BlockId.of(b"block")
OLD_NS = 1_600_000_000_000_000_000


def _record(index: FingerprintIndex, path: Path | str, **overrides: object) -> None:
    fields: dict[str, object] = {
        "size": 5,
        "mtime_ns": OLD_NS,
        "blake3": "ab" * 32,
        "sha256": OciDigest.of(b"hello"),
        "block": BLOCK,
        "media_type": "text/plain",
        "pipeline": "text-nfc",
        "pipeline_version": "1+unicode-14.0.0",
    }
    fields.update(overrides)
    index.record(path, **fields)  # type: ignore[arg-type]


def test_hash_file_matches_hashlib_and_blake3(tmp_path: Path) -> None:
    data = bytes(range(256)) * 10_000 + b"tail"
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    hashes = hash_file(path, chunk_size=4096)
    assert hashes.sha256 == OciDigest(hashlib.sha256(data).hexdigest())
    assert hashes.blake3 == blake3.blake3(data).hexdigest()
    assert hashes.size == len(data)
    sha, b3, size = hash_file(path)  # still a plain tuple for callers who unpack
    assert (sha, b3, size) == tuple(hashes)


def test_tee_passes_chunks_through_and_hashes_them(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 3000)
    tee = Blake3Tee(iter_file_chunks(path, chunk_size=1024))
    chunks = list(tee)
    assert [len(c) for c in chunks] == [1024, 1024, 952]
    assert tee.hexdigest() == blake3.blake3(b"x" * 3000).hexdigest()
    assert tee.size == 3000


def test_empty_index_when_no_sidecar(tmp_path: Path) -> None:
    index = FingerprintIndex.load(tmp_path)
    assert len(index) == 0 and index.discarded is None
    assert index.lookup(tmp_path / "a", 1, 1) is None
    assert index.save() is False  # nothing changed, nothing written
    assert not (tmp_path / SIDECAR).exists()


def test_round_trip_and_lookup_rules(tmp_path: Path) -> None:
    index = FingerprintIndex.load(tmp_path)
    _record(index, tmp_path / "src" / "a.md")
    assert index.save() is True
    again = FingerprintIndex.load(tmp_path)
    entry = again.lookup(tmp_path / "src" / "a.md", 5, OLD_NS)
    assert entry is not None
    assert entry.block == BLOCK and entry.sha256 == OciDigest.of(b"hello")
    assert (entry.pipeline, entry.pipeline_version, entry.media_type) == ("text-nfc", "1+unicode-14.0.0", "text/plain")
    assert again.lookup(tmp_path / "src" / "a.md", 6, OLD_NS) is None  # size changed
    assert again.lookup(tmp_path / "src" / "a.md", 5, OLD_NS + 1) is None  # mtime changed
    assert again.lookup(tmp_path / "src" / "b.md", 5, OLD_NS) is None
    # Relative and absolute spellings of one path are one key.
    assert again.paths() == [str(tmp_path / "src" / "a.md")]


def test_racy_entry_is_never_a_hit(tmp_path: Path) -> None:
    index = FingerprintIndex.load(tmp_path)
    _record(index, tmp_path / "a", mtime_ns=OLD_NS, recorded_ns=OLD_NS + 1_000_000)
    assert index.lookup(tmp_path / "a", 5, OLD_NS) is None
    assert index.get(tmp_path / "a") is not None


def test_by_blake3_finds_moved_content_and_forget(tmp_path: Path) -> None:
    index = FingerprintIndex.load(tmp_path)
    _record(index, tmp_path / "b", blake3="cd" * 32)
    _record(index, tmp_path / "a", blake3="cd" * 32)
    found = index.by_blake3("cd" * 32)
    assert found is not None and found.path == str(tmp_path / "a")
    assert index.forget(tmp_path / "a") is True
    found = index.by_blake3("cd" * 32)
    assert found is not None and found.path == str(tmp_path / "b")
    assert index.forget(tmp_path / "a") is False
    assert index.by_blake3("00" * 32) is None


def test_record_refuses_a_digest_of_the_wrong_kind(tmp_path: Path) -> None:
    index = FingerprintIndex.load(tmp_path)
    with pytest.raises(InvalidInputError, match="block id"):
        _record(index, tmp_path / "a", block=OciDigest.of(b"x"))


@pytest.mark.parametrize(
    "content",
    [
        b"{not json", b'{"format": "other/1", "entries": {}}',
        b'{"format": "brain.fingerprints/1", "entries": {"/a": [1]}}',
    ],
)
def test_unusable_sidecar_starts_empty_and_says_why(tmp_path: Path, content: bytes) -> None:
    (tmp_path / SIDECAR).parent.mkdir(parents=True)
    (tmp_path / SIDECAR).write_bytes(content)
    index = FingerprintIndex.load(tmp_path)
    assert len(index) == 0
    assert index.discarded is not None and "fingerprints.json" in index.discarded


def test_damaged_row_is_a_miss(tmp_path: Path) -> None:
    row = [5, OLD_NS, "ab" * 32, "not-hex", BLOCK.hex, "text/plain", None, None, OLD_NS + 10**10]
    (tmp_path / SIDECAR).parent.mkdir(parents=True)
    document = {"format": "brain.fingerprints/1", "entries": {str(tmp_path / "a"): row}}
    (tmp_path / SIDECAR).write_text(json.dumps(document))
    assert FingerprintIndex.load(tmp_path).lookup(tmp_path / "a", 5, OLD_NS) is None


def test_saved_file_is_compact_sorted_json(tmp_path: Path) -> None:
    index = FingerprintIndex.load(tmp_path)
    _record(index, "/z", recorded_ns=OLD_NS + 10**10)
    _record(index, "/a", recorded_ns=OLD_NS + 10**10)
    index.save()
    text = (tmp_path / SIDECAR).read_text()
    assert text.startswith('{"entries":{"/a":[5,')
    assert text.endswith('"format":"brain.fingerprints/1"}')
