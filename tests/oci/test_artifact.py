"""`verify_artifact`: the reference artifacts are sound; each kind of damage yields its problem code."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.errors import NotFoundError
from oci import media_types as mt
from oci.artifact import verify_artifact
from oci.members import scan_module
from oci.pack import pack
from oci.tarball import Member, layer_bytes
from tests.oci.layer_helpers import REFERENCE, V1, copy_reference, entry, manifest_bytes, raw_layer, reference_manifest

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference brain fixture not present")
CANONICAL_LAYER = "57207defa4a4dc6bbec7c431bae429dd137e4a76998e6235c623f80bdb5aa393"


@pytest.fixture
def brain(tmp_path: Path) -> Brain:
    return Brain.open(copy_reference(tmp_path / "b"))


def _codes(brain: Brain, document: dict) -> list[str]:  # type: ignore[type-arg]
    digest = brain.blobs.put(manifest_bytes(document))
    return sorted({p.code for p in verify_artifact(brain, str(digest))})


def test_reference_artifacts_and_our_packs_are_sound(brain: Brain) -> None:
    assert verify_artifact(brain, "v1") == []
    assert verify_artifact(brain, "v2") == []
    assert verify_artifact(brain, "sha256:" + V1) == []
    assert verify_artifact(brain, str(pack(brain, "sub", {MemoryType.CANONICAL, MemoryType.SEMANTIC}).digest)) == []


def test_unknown_tag_is_not_found(brain: Brain) -> None:
    with pytest.raises(NotFoundError):
        verify_artifact(brain, "nope")


def test_missing_and_non_canonical_manifests(brain: Brain) -> None:
    assert [p.code for p in verify_artifact(brain, "sha256:" + "a" * 64)] == ["manifest-missing"]
    digest = brain.blobs.put(json.dumps(reference_manifest(), indent=2).encode())
    assert [p.code for p in verify_artifact(brain, str(digest))] == ["manifest-not-canonical"]
    digest = brain.blobs.put(b'{"schemaVersion":2}')
    assert "manifest-invalid" in [p.code for p in verify_artifact(brain, str(digest))]


def test_layer_annotation_that_lies(brain: Brain) -> None:
    document = reference_manifest()
    document["layers"][0]["annotations"][mt.BLOCK_COUNT] = "4"
    assert _codes(brain, document) == ["annotation-mismatch"]


def test_history_count_that_lies(brain: Brain) -> None:
    document = reference_manifest()
    document["layers"][-1]["annotations"][mt.SNAPSHOT_COUNT] = "9"
    assert _codes(brain, document) == ["history-count-mismatch"]


def test_damaged_layer_file(brain: Brain) -> None:
    path = brain.blobs.directory / CANONICAL_LAYER
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    assert sorted({p.code for p in verify_artifact(brain, "v2")}) == ["layer-digest-mismatch"]
    path.write_bytes(bytes(data[:-1]))
    assert sorted({p.code for p in verify_artifact(brain, "v2")}) == ["layer-size-mismatch"]


def _with_canonical_layer(brain: Brain, members: list[Member]) -> list[str]:
    layer = layer_bytes(members)
    document = reference_manifest()
    document["layers"][0].update(digest=str(brain.blobs.put(layer)), size=len(layer))
    return _codes(brain, document)


def _problems_with_canonical_layer(brain: Brain, members: list[Member]) -> list:  # type: ignore[type-arg]
    layer = layer_bytes(members)
    document = reference_manifest()
    document["layers"][0].update(digest=str(brain.blobs.put(layer)), size=len(layer))
    return verify_artifact(brain, str(brain.blobs.put(manifest_bytes(document))))


def _reference_members(brain: Brain) -> list[Member]:
    ref = brain.snapshot().modules["canonical"]  # type: ignore[union-attr]
    return list(scan_module(brain.blobs, MemoryType.CANONICAL, ref).members(brain.blobs))


def test_layer_members_missing_unexpected_corrupt_and_out_of_order(brain: Brain) -> None:
    members = _reference_members(brain)
    assert _with_canonical_layer(brain, members) == []
    assert _with_canonical_layer(brain, members[:-1]) == ["layer-member-missing"]
    corrupt = Member("blobs/" + "f" * 64, data=b"")
    assert _with_canonical_layer(brain, [*members, corrupt]) == ["layer-member-corrupt", "layer-member-unexpected"]
    assert _with_canonical_layer(brain, [members[0], *reversed(members[1:])]) == ["layer-member-order"]
    stray = Member("blobs/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", data=b"")
    assert _with_canonical_layer(brain, [*members, stray]) == ["layer-member-unexpected"]


def test_wrong_composition_in_layer(brain: Brain) -> None:
    members = _reference_members(brain)
    members[0] = Member(
        "composition.json", data=b'{"block_ids":[],"boltzmann":1,"layout":"rfc6962-sorted/1","memory_type":"canonical"}'
    )
    assert _with_canonical_layer(brain, members) == ["layer-composition-mismatch"]


def test_hostile_layer_is_reported_not_raised(brain: Brain) -> None:
    layer = raw_layer(entry("../escape", b"x"))
    document = reference_manifest()
    document["layers"][0].update(digest=str(brain.blobs.put(layer)), size=len(layer))
    assert _codes(brain, document) == ["layer-unreadable"]


def test_missing_layers_and_config(brain: Brain) -> None:
    document = reference_manifest()
    del document["layers"][1]
    assert "module-layer-missing" in _codes(brain, document)
    document = reference_manifest()
    document["layers"] = document["layers"][:-1]
    assert "history-layer-missing" in _codes(brain, document)
    document = reference_manifest()
    document["config"]["size"] += 1
    assert "config-size-mismatch" in _codes(brain, document)


def test_highly_compressible_layer_is_a_warning_not_damage(brain: Brain) -> None:
    # 12 MB of zeros gzips to a few KB: past the reference consumers' 100x bound, yet a sound layer.
    members = _reference_members(brain)
    big = b"\0" * (12 << 20)
    members.append(Member("blobs/" + hashlib.sha256(big).hexdigest(), data=big))
    members.sort(key=lambda m: (m.name != "composition.json", m.name))
    problems = _problems_with_canonical_layer(brain, members)
    warnings = [p for p in problems if p.code == "layer-inflate-ratio"]
    assert len(warnings) == 1 and warnings[0].severity == "warning" and not warnings[0].is_error
    assert "layer-unreadable" not in {p.code for p in problems}
