"""`install_artifact`: adopting the reference artifact, selective installs, and refusing hostile layers."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.errors import NotFoundError, UntrustedArtifactError
from brain.identity import OciDigest
from oci import media_types as mt
from oci.install import install_artifact
from oci.manifest import Descriptor
from oci.pack import pack
from oci.tarball import Member, layer_bytes
from oci.tarball_reader import LayerReader, read_all
from tests.oci.layer_helpers import (
    HEAD,
    REFERENCE,
    REFERENCE_BLOBS,
    V2,
    copy_reference,
    entry,
    header,
    manifest_bytes,
    raw_layer,
    reference_manifest,
    store,
)

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference brain fixture not present")
REF = "localhost:5000/team/brain:v2"


def _fetch(directory: Path):  # type: ignore[no-untyped-def]
    return lambda descriptor: directory / descriptor.digest.hex


def _blob_names(brain: Brain) -> set[str]:
    return {p.name for p in brain.blobs.directory.iterdir()}


def test_full_install_moves_the_head_and_repacks_identically(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    result = install_artifact(
        brain, (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS), reference=REF, tag="v2"
    )
    assert result.head_moved and not result.partial and result.left_out == []
    head = brain.head()
    assert head is not None and str(head.snapshot) == "sha256:" + HEAD
    assert (
        head.origin is not None and head.origin.reference == REF and head.origin.tag == "v2" and not head.origin.partial
    )
    assert sum(len(m.block_ids) for m in brain.modules().values()) == 27
    assert str(pack(brain, "v2").digest) == "sha256:" + V2


def test_selective_install_without_provenance_is_refused_by_the_removal_invariant(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    with pytest.raises(UntrustedArtifactError, match="removal record"):
        install_artifact(
            brain, (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS), {MemoryType.EPISODIC}, reference=REF
        )
    assert brain.head() is None and _blob_names(brain) == set()


def test_selective_install_records_its_provenance(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    wanted = {MemoryType.EPISODIC, MemoryType.PROVENANCE}
    result = install_artifact(
        brain, (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS), wanted, reference=REF, tag="v2"
    )
    assert result.partial and result.left_out == [MemoryType.CANONICAL, MemoryType.SEMANTIC, MemoryType.PROCEDURAL]
    head = brain.head()
    assert head is not None and head.origin is not None and head.origin.partial
    assert len(brain.module(MemoryType.EPISODIC).block_ids) == 1


def test_fetch_only_stores_but_does_not_move_the_head(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    result = install_artifact(
        brain, (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS), reference=REF, fetch_only=True
    )
    assert not result.head_moved and brain.head() is None
    assert brain.blobs.verify_file(OciDigest(HEAD)) and brain.blobs.verify_file(OciDigest(_COMPOSITION))


def test_asking_for_a_module_the_artifact_lacks_is_refused(tmp_path: Path) -> None:
    source = Brain.open(copy_reference(tmp_path / "src"))
    subset = pack(source, "sub", {MemoryType.CANONICAL, MemoryType.EPISODIC, MemoryType.PROVENANCE})
    brain = Brain.init(tmp_path / "b")
    data = source.blobs.get(subset.digest)
    with pytest.raises(NotFoundError, match="does not carry module.*semantic"):
        install_artifact(brain, data, _fetch(source.blobs.directory), {MemoryType.SEMANTIC}, reference=REF)
    result = install_artifact(brain, data, _fetch(source.blobs.directory), reference=REF)
    assert result.partial and result.left_out == [MemoryType.SEMANTIC, MemoryType.PROCEDURAL]


def test_guard_can_stop_the_head_from_moving(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")

    def refuse(current, new):  # type: ignore[no-untyped-def]
        raise UntrustedArtifactError(f"diverged: {current} vs {new}")

    with pytest.raises(UntrustedArtifactError, match="diverged"):
        install_artifact(
            brain, (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS), reference=REF, guard=refuse
        )
    assert brain.head() is None and _blob_names(brain) == set()


# --- hostile artifacts: the canonical layer replaced by a crafted one --------------------------------------

_COMPOSITION = "15158afc748ba46e8700223a2be7c1e15a8b9b8abae91725eef325406eba870f"
_CANONICAL_HEXES = sorted(
    {"4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea",
     "97713c45ff49b143ab04d8218b72c9d3443c4ca651831a57de596e35dc1ff841",
     "d85afe5c73c486e72f945e53bb0c1e6690c9e3afc935e3ff38a0ec1790a335bc"}
)


def _genuine_entries() -> list[tuple[bytes, bytes]]:
    """The members of the reference canonical layer, as raw (header, data) pairs."""
    layer = REFERENCE_BLOBS / "57207defa4a4dc6bbec7c431bae429dd137e4a76998e6235c623f80bdb5aa393"
    with open(layer, "rb") as stream:
        return [
            entry(e.name, read_all(c, 1 << 20, "x"))
            for e, c in LayerReader(stream, compressed_size=layer.stat().st_size, what="x").members()
        ]


def _install_with_canonical_layer(tmp_path: Path, layer: bytes, annotations: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    blobs = tmp_path / "registry"
    shutil.copytree(REFERENCE_BLOBS, blobs)
    document = reference_manifest()
    digest = store(blobs, layer)
    descriptor = document["layers"][0]
    descriptor.update(digest=str(digest), size=len(layer))
    if annotations:
        descriptor["annotations"] = {**descriptor["annotations"], **annotations}
    brain = Brain.init(tmp_path / "b")
    try:
        install_artifact(brain, manifest_bytes(document), _fetch(blobs), reference=REF)
    finally:
        assert brain.head() is None
        assert _blob_names(brain) == set()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "registry"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([entry("/tmp/evil", b"x")], "refused member name"),
        ([entry("blobs/../../evil", b"x")], "refused member name"),
        ([(header(b"blobs/" + b"a" * 64, 0, b"2", link=b"/etc/passwd"), b"")], "symbolic link"),
        ([(header(b"blobs/" + b"a" * 64, 0, b"1", link=b"composition.json"), b"")], "hard link"),
        ([(header(b"dev", 0, b"3"), b"")], "character device"),
        ([(header(b"fifo", 0, b"6"), b"")], "FIFO"),
        ([entry("composition.json", b"{}")], "duplicate member"),
        ([entry("notes.txt", b"hello")], "only composition.json and blobs"),
        ([entry("blobs/" + "0" * 64, b"not what the name says")], "does not hash to its name"),
    ],
)
def test_hostile_member_is_refused_and_nothing_stays(
    tmp_path: Path, extra: list[tuple[bytes, bytes]], message: str
) -> None:
    with pytest.raises(UntrustedArtifactError, match=message):
        _install_with_canonical_layer(tmp_path, raw_layer(*_genuine_entries(), *extra))


def test_missing_member_block_is_refused(tmp_path: Path) -> None:
    kept = [e for e in _genuine_entries() if not e[0].startswith(b"blobs/" + _CANONICAL_HEXES[0].encode())]
    with pytest.raises(UntrustedArtifactError, match="missing from the layer"):
        _install_with_canonical_layer(tmp_path, raw_layer(*kept))


def test_missing_composition_is_refused(tmp_path: Path) -> None:
    kept = [e for e in _genuine_entries() if not e[0].startswith(b"composition.json")]
    with pytest.raises(UntrustedArtifactError, match="composition.json is missing"):
        _install_with_canonical_layer(tmp_path, raw_layer(*kept))


@pytest.mark.parametrize(
    "annotations",
    [{mt.BLOCK_COUNT: "4"}, {mt.MERKLE_ROOT: "sha256:" + "1" * 64}, {mt.MEMORY_TYPE: "episodic"}],
)
def test_annotations_that_lie_are_refused(tmp_path: Path, annotations: dict[str, str]) -> None:
    with pytest.raises(UntrustedArtifactError, match="disagree with the config"):
        _install_with_canonical_layer(tmp_path, raw_layer(*_genuine_entries()), annotations)


def test_gzip_bomb_is_refused(tmp_path: Path) -> None:
    bomb = layer_bytes([Member("blobs/" + "b" * 64, data=b"\0" * (48 << 20))])
    with pytest.raises(UntrustedArtifactError, match="bound"):
        _install_with_canonical_layer(tmp_path, bomb)


def test_blob_not_matching_its_descriptor_is_refused(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    real = _fetch(REFERENCE_BLOBS)

    def lying(descriptor: Descriptor):  # type: ignore[no-untyped-def]
        if descriptor.mediaType == mt.HISTORY_LAYER:
            data = real(descriptor).read_bytes()
            return io.BytesIO(data[:-1] + bytes([data[-1] ^ 1]))
        return real(descriptor)

    with pytest.raises(UntrustedArtifactError):
        install_artifact(brain, (REFERENCE_BLOBS / V2).read_bytes(), lying, reference=REF)
    assert brain.head() is None and _blob_names(brain) == set()


def test_config_that_is_not_its_source_snapshot_is_refused(tmp_path: Path) -> None:
    blobs = tmp_path / "registry"
    shutil.copytree(REFERENCE_BLOBS, blobs)
    document = reference_manifest()
    snapshot = json.loads((REFERENCE_BLOBS / HEAD).read_bytes())
    snapshot["created_at"] = "2030-01-01T00:00:00Z"
    forged = json.dumps(snapshot, separators=(",", ":"), sort_keys=True).encode()
    document["config"].update(digest=str(store(blobs, forged)), size=len(forged))
    document["annotations"][mt.SOURCE_SNAPSHOT] = document["config"]["digest"]
    brain = Brain.init(tmp_path / "b")
    with pytest.raises(UntrustedArtifactError, match="lacks the source snapshot"):
        install_artifact(brain, manifest_bytes(document), _fetch(blobs), reference=REF)
    assert brain.head() is None and _blob_names(brain) == set()


def test_installing_the_current_head_again_leaves_head_json_alone(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    data, fetch = (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS)
    first = install_artifact(brain, data, fetch, reference=REF, tag="v2")
    head_file = brain.path / "boltzmann" / "head.json"
    before, stamp = head_file.read_bytes(), head_file.stat().st_mtime_ns
    again = install_artifact(brain, data, fetch, reference="elsewhere.example/brain:v2", tag="v2")
    assert first.head_moved and not first.already_head
    assert not again.head_moved and again.already_head and again.snapshot == first.snapshot
    assert head_file.read_bytes() == before and head_file.stat().st_mtime_ns == stamp


def test_a_partial_head_becomes_whole_when_the_same_snapshot_is_installed_whole(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    data, fetch = (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS)
    install_artifact(brain, data, fetch, {MemoryType.EPISODIC, MemoryType.PROVENANCE}, reference=REF)
    partial = brain.head()
    whole = install_artifact(brain, data, fetch, reference=REF)
    head = brain.head()
    assert partial is not None and partial.origin is not None and partial.origin.partial
    # The partial head is a local snapshot whose parent is the published one: installing that whole moves on.
    assert whole.head_moved and not whole.already_head
    assert head is not None and head.origin is not None and not head.origin.partial
    assert str(head.snapshot) == "sha256:" + HEAD and head.retained[1] == partial.snapshot
    # A whole head stays whole when a subset of the same snapshot is installed over it.
    install_artifact(brain, data, fetch, {MemoryType.EPISODIC, MemoryType.PROVENANCE}, reference=REF)
    assert brain.head() == head


def test_status_branch_counts_ahead_of_where_it_was_pulled_from(tmp_path: Path) -> None:
    from brain.branches.operations import branch_status
    from tests.oci.test_push_pull_registry import commit_texts

    brain = Brain.init(tmp_path / "b")
    assert branch_status(brain).model_dump() == {"name": "main", "tag": "latest", "reference": None, "remote": None,
                                                  "ahead": None, "behind": None, "reconciling": None}
    install_artifact(brain, (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS), reference=REF, tag="v2")
    pulled = branch_status(brain)
    assert (pulled.name, pulled.reference, str(pulled.remote), pulled.ahead, pulled.behind) == \
        ("main", REF, "sha256:" + HEAD, 0, 0)
    commit_texts(brain, "one more", "and another")
    commit_texts(brain, "a third")
    moved = branch_status(brain)
    assert (moved.remote, moved.ahead, moved.behind) == (pulled.remote, 2, 0)
