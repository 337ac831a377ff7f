"""The hostile-safe layer reader: well-formed layers round-trip; every trick in §6.8 and the brief is refused."""

from __future__ import annotations

import io
import tarfile
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.errors import UntrustedArtifactError
from oci.tarball import BLOCK_SIZE, Member, gzip_chunks, layer_bytes, tar_chunks
from oci.tarball_reader import LayerReader, inflate_bound, read_all, spool


def _header(name: bytes, size: int, kind: bytes = b"0", *, prefix: bytes = b"", link: bytes = b"") -> bytes:
    header = bytearray(BLOCK_SIZE)
    header[0 : len(name)] = name
    header[100:108] = b"0000644\0"
    header[124:136] = b"%011o\0" % size
    header[136:148] = b"00000000000\0"
    header[148:156] = b" " * 8
    header[156:157] = kind
    header[157 : 157 + len(link)] = link
    header[257:265] = b"ustar\x0000"
    header[345 : 345 + len(prefix)] = prefix
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header)


def _pax(key: str, value: str) -> bytes:
    body = f" {key}={value}\n"
    length = len(body) + 2
    return f"{length}{body}".encode()


def _raw_layer(*entries: tuple[bytes, bytes]) -> bytes:
    """A gzip tar built from (header, data) pairs, for crafting archives our writer would never produce."""
    body = b"".join(h + d + b"\0" * (-len(d) % BLOCK_SIZE) for h, d in entries) + b"\0" * 1024
    return b"".join(gzip_chunks([body]))


def _read(layer: bytes, cap: int | None = None) -> dict[str, bytes]:
    reader = LayerReader(io.BytesIO(layer), compressed_size=len(layer), what="layer", cap=cap)
    return {entry.name: read_all(chunks, 1 << 30, "m") for entry, chunks in reader.members()}


def test_round_trip_of_written_layer() -> None:
    members = [Member("composition.json", data=b"{}"), Member("blobs/" + "a" * 64, data=b"x" * 5000)]
    assert _read(layer_bytes(members)) == {"composition.json": b"{}", "blobs/" + "a" * 64: b"x" * 5000}


def test_unread_members_are_skipped_correctly() -> None:
    members = [Member(f"m{i}", data=bytes([i]) * (i * 300)) for i in range(1, 8)]
    layer = layer_bytes(members)
    reader = LayerReader(io.BytesIO(layer), compressed_size=len(layer), what="layer")
    seen = []
    for entry, chunks in reader.members():
        seen.append(entry.name)
        if entry.name == "m4":
            assert read_all(chunks, 1 << 20, "m") == bytes([4]) * 1200
    assert seen == [f"m{i}" for i in range(1, 8)]


def test_spool_hashes_into_a_temp_file_that_is_removed(tmp_path: Path) -> None:
    layer = layer_bytes([Member("blobs/b", data=b"hello")])
    reader = LayerReader(io.BytesIO(layer), compressed_size=len(layer), what="layer")
    for _, chunks in reader.members():
        with spool(chunks, tmp_path) as spooled:
            assert spooled.path.read_bytes() == b"hello" and spooled.size == 5
            assert spooled.sha256 == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([(_header(b"/etc/passwd", 1), b"x")], "refused member name"),
        ([(_header(b"blobs/../../x", 1), b"x")], "refused member name"),
        ([(_header(b"../x", 1), b"x")], "refused member name"),
        ([(_header(b"x", 1, prefix=b".."), b"x")], "refused member name"),
        ([(_header(b"blobs//x", 1), b"x")], "refused member name"),
        ([(_header(b"a\\..\\b", 1), b"x")], "refused member name"),
        ([(_header(b"link", 0, b"2", link=b"/etc/passwd"), b"")], "symbolic link"),
        ([(_header(b"hard", 0, b"1", link=b"composition.json"), b"")], "hard link"),
        ([(_header(b"dev", 0, b"3"), b"")], "character device"),
        ([(_header(b"dev", 0, b"4"), b"")], "block device"),
        ([(_header(b"fifo", 0, b"6"), b"")], "FIFO"),
        ([(_header(b"dir", 3, b"5"), b"abc")], "carries data"),
        ([(_header(b"././@LongLink", 4, b"L"), b"evil")], "GNU long name"),
        ([(_header(b"a", 1), b"1"), (_header(b"a", 1), b"2")], "duplicate member"),
        ([(_header(b"pax", 18, b"x"), _pax("path", "/etc/pass")), (_header(b"a", 1), b"1")], "pax header setting path"),
        ([(_header(b"pax", 17, b"x"), _pax("size", "99999999"))], "pax header setting size"),
        ([(_header("caf\u00e9".encode(), 1), b"x")], "non-ASCII"),
    ],
)
def test_hostile_members_are_refused(entries: list[tuple[bytes, bytes]], message: str) -> None:
    with pytest.raises(UntrustedArtifactError, match=message):
        _read(_raw_layer(*entries))


def test_harmless_pax_header_and_empty_directory_are_tolerated() -> None:
    layer = _raw_layer(
        (_header(b"pax", 11, b"x"), _pax("mtime", "0")), (_header(b"d/", 0, b"5"), b""), (_header(b"f", 1), b"1")
    )
    assert _read(layer) == {"f": b"1"}


def test_bad_checksum_is_refused() -> None:
    header = bytearray(_header(b"a", 1))
    header[0:1] = b"b"
    with pytest.raises(UntrustedArtifactError, match="checksum"):
        _read(_raw_layer((bytes(header), b"1")))


def test_gzip_bomb_is_stopped_at_the_bound() -> None:
    # 64 MiB of zeros inside one member compresses to ~64 KiB: 100 × that is far below 64 MiB, and 8 MiB < 64 MiB.
    body = _header(b"bomb", 64 << 20) + b"\0" * (64 << 20)
    layer = b"".join(gzip_chunks([body]))
    assert len(layer) * 100 < 64 << 20
    with pytest.raises(UntrustedArtifactError, match="decompression bomb"):
        _read(layer)


def test_caller_cap_tightens_the_bound() -> None:
    layer = layer_bytes([Member("a", data=b"z" * 100_000)])
    assert inflate_bound(len(layer), 50_000) == 50_000
    with pytest.raises(UntrustedArtifactError, match="bound"):
        _read(layer, cap=50_000)
    assert inflate_bound(10) == 8 << 20 and inflate_bound(10**12) == 4 << 30


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda b: b[: len(b) // 2], "truncated"),
        (lambda b: b + b"junk", "after the end of the gzip stream"),
        (lambda b: b[:-8] + b"\0\0\0\0" + b[-4:], "corrupt"),
        (lambda b: b"\x1f\x8b\x09" + b[3:], "corrupt"),
    ],
)
def test_broken_gzip_is_refused(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    layer = layer_bytes([Member("a", data=b"hello" * 1000)])
    with pytest.raises(UntrustedArtifactError, match=message):
        _read(mutate(layer))


def test_data_after_end_marker_is_refused() -> None:
    body = b"".join(tar_chunks([Member("a", data=b"1")]))
    body += _header(b"hidden", 1) + b"x" + b"\0" * 511
    with pytest.raises(UntrustedArtifactError, match="after the end-of-archive"):
        _read(b"".join(gzip_chunks([body])))


def test_non_gzip_input_is_refused() -> None:
    with pytest.raises(UntrustedArtifactError):
        _read(zlib.compress(b"not a tar"))


_names = st.from_regex(r"[a-z0-9]{1,20}(/[a-z0-9._-]{1,20}){0,2}", fullmatch=True).filter(
    lambda n: all(part not in (".", "..") for part in n.split("/"))
)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(_names, st.binary(max_size=3000), min_size=1, max_size=8))
def test_writer_and_reader_agree_with_tarfile(files: dict[str, bytes]) -> None:
    layer = layer_bytes([Member(name, data=data) for name, data in files.items()])
    assert _read(layer) == files
    with tarfile.open(fileobj=io.BytesIO(layer), mode="r:gz") as archive:
        assert {m.name: archive.extractfile(m).read() for m in archive.getmembers()} == files  # type: ignore[union-attr]


def test_max_inflate_raises_the_bound_up_to_the_trusted_ceiling() -> None:
    from oci.tarball_reader import MAX_TRUSTED_BOUND

    assert inflate_bound(10, max_inflate=100 << 20) == 100 << 20
    assert inflate_bound(10**6, max_inflate=1) == 100 * 10**6  # never lowers the reference bound
    assert inflate_bound(10, max_inflate=1 << 50) == MAX_TRUSTED_BOUND == 64 << 30
    layer = b"".join(gzip_chunks([b"\0" * (9 << 20)]))
    with pytest.raises(UntrustedArtifactError, match="decompression bomb") as refused:
        list(LayerReader(io.BytesIO(layer), compressed_size=len(layer), what="layer").members())
    assert "--max-inflate" in (refused.value.hint or "")
    assert list(
        LayerReader(io.BytesIO(layer), compressed_size=len(layer), what="layer", max_inflate=10 << 20).members()
    ) == []
