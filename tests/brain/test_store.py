"""Atomic writes, the blob store, the OCI layout files and the head pointer."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import threading

import pytest

from brain.errors import BrainUnreadableError, IntegrityError, InvalidInputError, NotABrainError, NotFoundError
from brain.identity import BlockId, OciDigest
from brain.store import BlobStore, Descriptor, Head, Layout, atomic_write, atomic_write_stream, read_head, write_head
from brain.store import write_behind
from brain.store.head import head_path


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    target = tmp_path / "f"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert atomic_write_stream(target, [b"a", b"bc"]) == 3
    assert target.read_bytes() == b"abc"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_atomic_write_stream_failure_keeps_old_file(tmp_path):
    target = tmp_path / "f"
    atomic_write(target, b"old")

    def chunks():
        yield b"new"
        raise RuntimeError("source broke")

    with pytest.raises(RuntimeError):
        atomic_write_stream(target, chunks())
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_blob_roundtrip_and_any_digest_kind(tmp_path):
    store = BlobStore(tmp_path)
    digest = store.put(b"hello")
    assert digest == OciDigest.of(b"hello")
    assert store.path(digest) == tmp_path / "blobs" / "sha256" / digest.hex
    assert store.get(digest) == b"hello"
    assert store.get(BlockId(digest.hex)) == b"hello"
    assert store.has(digest) and store.verify_file(digest)
    assert list(store.digests()) == [digest]
    with store.open(digest) as stream:
        assert stream.read() == b"hello"


def test_missing_blob_is_not_found(tmp_path):
    store = BlobStore(tmp_path)
    missing = OciDigest.of(b"absent")
    with pytest.raises(NotFoundError, match=missing.hex):
        store.get(missing)
    assert not store.verify_file(missing)


@pytest.mark.parametrize("damage", [b"hell", b"hello\n", b"HELLO", b""])
def test_corrupt_blob_is_refused_with_path_and_fix(tmp_path, damage):
    store = BlobStore(tmp_path)
    digest = store.put(b"hello")
    store.path(digest).write_bytes(damage)
    with pytest.raises(IntegrityError) as info:
        store.get(digest)
    assert str(store.path(digest)) in str(info.value) and "brain verify" in str(info.value)
    assert not store.verify_file(digest)
    with pytest.raises(IntegrityError), store.open(digest) as stream:
        stream.read()


def test_put_replaces_a_corrupt_existing_blob(tmp_path):
    store = BlobStore(tmp_path)
    digest = store.put(b"hello")
    store.path(digest).write_bytes(b"rotten")
    assert store.put(b"hello") == digest
    assert store.get(digest) == b"hello"
    store.path(digest).write_bytes(b"rotten")
    assert store.put_stream([b"he", b"llo"]) == (digest, 5)
    assert store.get(digest) == b"hello"


def test_put_stream_checks_expected_and_stores_nothing_on_mismatch(tmp_path):
    store = BlobStore(tmp_path)
    good = OciDigest.of(b"abc")
    assert store.put_stream(iter([b"a", b"b", b"c"]), expected=good) == (good, 3)
    with pytest.raises(IntegrityError, match="hash to"):
        store.put_stream([b"abd"], expected=OciDigest.of(b"xyz"))
    assert list(store.digests()) == [good]
    assert not any(p.name.startswith(".") for p in store.directory.iterdir())


def test_put_stream_is_constant_memory(tmp_path):
    import tracemalloc

    store = BlobStore(tmp_path)
    chunk = b"x" * (1 << 16)
    expected = hashlib.sha256(chunk * 256).hexdigest()
    tracemalloc.start()
    digest, size = store.put_stream(chunk for _ in range(256))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert digest.hex == expected and size == 256 * len(chunk)
    assert peak < 4 * len(chunk) * 4  # far below the 16 MiB stream


def test_put_stream_writes_behind_starts_the_writeback_in_steps_and_drops_settled_steps(tmp_path, monkeypatch):
    monkeypatch.setattr(write_behind, "WRITEBACK_STEP", 100_000)
    started: list[tuple[int, int]] = []
    real = write_behind.start_writeback
    monkeypatch.setattr(write_behind, "start_writeback", lambda fd, at, n: (started.append((at, n)), real(fd, at, n)))
    settled: list[tuple[int, int]] = []
    settle = write_behind.settle_and_drop
    monkeypatch.setattr(write_behind, "settle_and_drop", lambda fd, at, n: (settled.append((at, n)), settle(fd, at, n)))
    store = BlobStore(tmp_path)
    chunks = [bytes([i]) * 50_000 for i in range(9)]
    digest, size = store.put_stream(iter(chunks))
    assert store.get(digest) == b"".join(chunks) and size == 450_000
    assert started == [(0, 100_000), (100_000, 100_000), (200_000, 100_000), (300_000, 100_000)]
    assert settled == started[:-1]  # a step is waited for and dropped from the cache one step later


def test_a_failing_stream_stops_the_writer_thread_and_leaves_no_temp_file(tmp_path):
    def chunks():
        yield b"a" * 1000
        yield b"b" * 1000
        raise OSError(5, "the source vanished")

    store = BlobStore(tmp_path)
    with pytest.raises(OSError, match="vanished"):
        store.put_stream(chunks())
    assert not any(t.name == "blob-write-behind" for t in threading.enumerate())
    assert list(store.directory.iterdir()) == []


def test_a_write_error_on_the_writer_thread_reaches_the_caller(tmp_path):
    fd = os.open(tmp_path / "read-only", os.O_RDONLY | os.O_CREAT)
    try:
        writer = write_behind.WriteBehind(fd)
        with pytest.raises(OSError) as raised:  # raised by a later write, or at the latest by close
            for _ in range(50):
                writer.write(b"x" * 10)
            writer.close()
        assert raised.value.errno == errno.EBADF
        with pytest.raises(OSError):
            writer.close()
    finally:
        os.close(fd)
    assert not any(t.name == "blob-write-behind" for t in threading.enumerate())


def test_digests_ignore_dot_names_and_strays(tmp_path):
    store = BlobStore(tmp_path)
    digest = store.put(b"x")
    (store.directory / ".tmp-abc").write_bytes(b"partial")
    (store.directory / "README").write_bytes(b"stray")
    assert list(store.digests()) == [digest]


def test_layout_create_and_exact_bytes(tmp_path):
    layout = Layout(tmp_path)
    layout.create()
    assert (tmp_path / "oci-layout").read_bytes() == b'{\n  "imageLayoutVersion": "1.0.0"\n}\n'
    assert (tmp_path / "index.json").read_bytes() == (
        b'{\n  "manifests": [],\n  "mediaType": "application/vnd.oci.image.index.v1+json",\n'
        b'  "schemaVersion": 2\n}\n'
    )
    layout.check()


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "missing"), (b"", "not readable"), (b"{", "not readable"), (b'{"imageLayoutVersion": "1.1.0"}', "1.1.0")],
)
def test_layout_check_refuses(tmp_path, content, message):
    if content is not None:
        (tmp_path / "oci-layout").write_bytes(content)
    with pytest.raises(NotABrainError, match=message):
        Layout(tmp_path).check()


def _descriptor(data: bytes) -> Descriptor:
    return Descriptor(
        mediaType="application/vnd.oci.image.manifest.v1+json", digest=OciDigest.of(data), size=len(data)
    )


def test_tags_replace_old_entry_and_append(tmp_path):
    layout = Layout(tmp_path)
    layout.create()
    layout.set_tag("v1", _descriptor(b"a"))
    layout.set_tag("v2", _descriptor(b"b"))
    layout.add_manifest(_descriptor(b"c"))
    layout.set_tag("v1", _descriptor(b"d"))
    assert [(t, d.digest) for t, d in layout.tags()] == [("v2", OciDigest.of(b"b")), ("v1", OciDigest.of(b"d"))]
    assert layout.resolve_tag("v1").digest == OciDigest.of(b"d")
    assert len(layout.index().manifests) == 3
    with pytest.raises(NotFoundError, match="v3"):
        layout.resolve_tag("v3")
    with pytest.raises(InvalidInputError):
        layout.set_tag("bad tag", _descriptor(b"e"))
    assert layout.remove_tag("v2") and not layout.remove_tag("v2")
    raw = (tmp_path / "index.json").read_bytes()
    assert raw.endswith(b"}\n") and json.loads(raw)["manifests"][-1]["annotations"] == {
        "org.opencontainers.image.ref.name": "v1"
    }


def test_index_keeps_unknown_members(tmp_path):
    layout = Layout(tmp_path)
    layout.create()
    doc = json.loads(layout.index_path.read_bytes())
    doc["annotations"] = {"x": "y"}
    doc["manifests"] = [{**_descriptor(b"a").model_dump(mode="json", exclude_none=True), "platform": {"os": "z"}}]
    layout.index_path.write_text(json.dumps(doc))
    layout.set_tag("t", _descriptor(b"b"))
    written = json.loads(layout.index_path.read_bytes())
    assert written["annotations"] == {"x": "y"} and written["manifests"][0]["platform"] == {"os": "z"}


@pytest.mark.parametrize(("content", "message"), [(None, "missing"), (b"", "empty"), (b"nope", "not a valid")])
def test_index_unreadable(tmp_path, content, message):
    layout = Layout(tmp_path)
    layout.create()
    if content is None:
        layout.index_path.unlink()
    else:
        layout.index_path.write_bytes(content)
    with pytest.raises(BrainUnreadableError, match=message):
        layout.index()


def test_head_roundtrip_jcs_and_retained(tmp_path):
    assert read_head(tmp_path) is None
    digests = [OciDigest.of(bytes([i])) for i in range(12)]
    head = Head.first(digests[0])
    for d in digests[1:]:
        head = head.advance(d)
    assert head.snapshot == digests[-1]
    assert list(head.retained) == list(reversed(digests))[:10]
    write_head(tmp_path, head)
    raw = head_path(tmp_path).read_bytes()
    assert raw.startswith(b'{"boltzmann":1,"retained":["sha256:') and not raw.endswith(b"\n")
    assert read_head(tmp_path) == head


def test_head_read_accepts_non_canonical_but_strict(tmp_path):
    digest = OciDigest.of(b"s")
    head_path(tmp_path).parent.mkdir(parents=True)
    head_path(tmp_path).write_text(json.dumps({"snapshot": str(digest), "boltzmann": 1, "retained": []}, indent=1))
    assert read_head(tmp_path).snapshot == digest


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"   ", "empty"),
        (b"{not json", "head.json: not JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        (b'{"boltzmann":1,"boltzmann":1,"snapshot":"sha256:' + b"0" * 64 + b'"}', "head.json: duplicate key"),
        (b'{"boltzmann":1,"snapsh', "head.json: not JSON: Unterminated string starting at line 1 column 16 "),
        (b'{"boltzmann":1,"snapshot":"sha256:XYZ"}', "snapshot"),
        (b'{"boltzmann":2,"snapshot":"sha256:' + b"0" * 64 + b'"}', "boltzmann"),
        (b"[]", "not a head pointer"),
    ],
)
def test_head_unreadable(tmp_path, content, message):
    head_path(tmp_path).parent.mkdir(parents=True)
    head_path(tmp_path).write_bytes(content)
    with pytest.raises(BrainUnreadableError, match=message) as info:
        read_head(tmp_path)
    assert "head.json" in str(info.value) and "\n" not in str(info.value)
