"""Byte-exact layer writing (§6.5), golden digests of the reference brain (§8), and the writer's streaming."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import zlib
from pathlib import Path

import pytest

from brain.errors import IntegrityError
from oci.tarball import GZIP_HEADER, RECORD_SIZE, Member, layer_bytes, tar_chunks, ustar_header, write_layer
from tests.shared_paths import REFERENCE_BRAIN

REFERENCE = REFERENCE_BRAIN
BLOBS = REFERENCE / "blobs" / "sha256"
HEAD_SNAPSHOT = "095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904"
GOLDEN = {
    "canonical": "57207defa4a4dc6bbec7c431bae429dd137e4a76998e6235c623f80bdb5aa393",
    "episodic": "81abba9b5cf8f6e37983a2cb475f7074e1d1fd461a11bf9af3d0f730ce360cab",
    "semantic": "a474590af4bb5fc3686b6c60ca0ca918fc73d246ba548b9fed328a2c62ec32f8",
    "procedural": "5f0d57cf57aaed5661c7037f3adbe4122587b35e8f9af80519bae225daa9ea04",
    "provenance": "7b91987cbae7c30e4d6a14cfeeb54819f144795fb7246c726059a755abbe5c14",
}


def _module_members(ref: dict[str, object]) -> list[Member]:
    """§6.3 members of one module, computed with plain json so this test does not depend on brain/."""
    composition_hex = str(ref["composition"])[7:]
    required: set[str] = set()
    for block_id in json.loads((BLOBS / composition_hex).read_bytes())["block_ids"]:
        required.add(block_id[7:])
        payload = json.loads((BLOBS / block_id[7:]).read_bytes())["payload"]
        for key in ("blob",):
            if isinstance(payload.get(key), str) and ref["memory_type"] == "canonical":
                required.add(payload[key][7:])
        view = payload.get("normalized_view")
        if isinstance(view, dict):
            required.add(view["blob"][7:])
    members = [Member("composition.json", path=BLOBS / composition_hex)]
    members += [Member(f"blobs/{h}", path=BLOBS / h, sha256=h) for h in sorted(required)]
    return members


@pytest.mark.skipif(not REFERENCE.exists(), reason="reference brain fixture not present")
@pytest.mark.parametrize("module", sorted(GOLDEN))
def test_reference_module_layers_rebuild_byte_exact(module: str) -> None:
    # zlib 1.2.13 is what the reference used (§6.5); another DEFLATE would legitimately change digests.
    assert zlib.ZLIB_RUNTIME_VERSION.startswith("1.2.13") or pytest.skip(f"zlib {zlib.ZLIB_RUNTIME_VERSION}")
    snapshot = json.loads((BLOBS / HEAD_SNAPSHOT).read_bytes())
    data = layer_bytes(_module_members(snapshot["modules"][module]))
    assert hashlib.sha256(data).hexdigest() == GOLDEN[module]
    assert (BLOBS / GOLDEN[module]).read_bytes() == data


def test_ustar_header_fields_are_exactly_as_specified() -> None:
    header = ustar_header("blobs/abc", 62)
    assert len(header) == 512
    assert header[0:9] == b"blobs/abc" and header[9:100] == b"\0" * 91
    assert header[100:108] == b"0000644\0"
    assert header[108:124] == b"0000000\0" * 2
    assert header[124:136] == b"00000000076\0"
    assert header[136:148] == b"00000000000\0"
    assert header[156:157] == b"0"
    assert header[157:257] == b"\0" * 100
    assert header[257:265] == b"ustar\x0000"
    assert header[265:512] == b"\0" * 247
    assert header[154:156] == b"\0 "
    checksum = sum(header[:148]) + 8 * 32 + sum(header[156:])
    assert int(header[148:154], 8) == checksum


def test_archive_layout_padding_and_gzip_framing() -> None:
    members = [Member("composition.json", data=b"{}"), Member("blobs/x", data=b"a" * 513)]
    tar = b"".join(tar_chunks(members))
    assert len(tar) % RECORD_SIZE == 0 and len(tar) == RECORD_SIZE
    # header + 512 (padded 2 bytes) + header + 1024 (513 padded) + two zero blocks
    assert tar[512:514] == b"{}" and tar[514:1024] == b"\0" * 510
    assert tar[3072:] == b"\0" * (len(tar) - 3072)
    layer = layer_bytes(members)
    assert layer[:10] == GZIP_HEADER
    assert gzip.decompress(layer) == tar
    with tarfile.open(fileobj=io.BytesIO(layer), mode="r:gz") as archive:
        assert archive.getnames() == ["composition.json", "blobs/x"]


def test_large_member_streams_in_chunks_and_matches_in_memory(tmp_path: Path) -> None:
    source = tmp_path / "big"
    payload = bytes(range(256)) * 12_000  # ~3 MiB, more than one read chunk
    source.write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    streamed = write_layer([Member(f"blobs/{digest}", path=source, sha256=digest)], tmp_path)
    assert streamed.path.read_bytes() == layer_bytes([Member(f"blobs/{digest}", data=payload)])
    assert streamed.digest.hex == hashlib.sha256(streamed.path.read_bytes()).hexdigest()
    assert streamed.size == streamed.path.stat().st_size
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_member_whose_bytes_do_not_match_its_digest_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "blob"
    source.write_bytes(b"tampered")
    with pytest.raises(IntegrityError, match="does not hash"):
        write_layer([Member("blobs/" + "0" * 64, path=source, sha256="0" * 64)], tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["blob"]


def test_output_is_independent_of_batching() -> None:
    many = [Member(f"blobs/{i:064x}", data=bytes([i % 251]) * (i % 700)) for i in range(3000)]
    one = layer_bytes(many)
    again = layer_bytes(list(many))
    assert one == again
    assert hashlib.sha256(gzip.decompress(one)).hexdigest() == hashlib.sha256(b"".join(tar_chunks(many))).hexdigest()
