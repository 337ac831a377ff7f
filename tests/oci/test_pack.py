"""`pack`: byte-identical to the reference, layer reuse, subsets, determinism across processes, the lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brain.blocks import CanonicalBlock, MemoryType
from brain.brain import Brain
from brain.errors import InvalidInputError, LockTimeoutError, NotFoundError, RefusedError
from brain.store import WriterLock
from oci import media_types as mt
from oci.artifact import verify_artifact
from oci.manifest import Manifest
from oci.pack import pack
from tests.brain.brain_helpers import ACTOR, fact
from tests.oci.layer_helpers import HEAD, REFERENCE, V2, copy_reference

pytestmark = pytest.mark.skipif(not REFERENCE.exists(), reason="reference brain fixture not present")


def _blob_names(brain: Brain) -> set[str]:
    return {p.name for p in brain.blobs.directory.iterdir()}


def add_text(writer, text: str) -> CanonicalBlock:  # type: ignore[no-untyped-def]
    """Store `text` and add a canonical block for it."""
    data = text.encode()
    block = CanonicalBlock(blob=writer.put_blob(data), media_type="text/plain", size=len(data))
    writer.add(block)
    return block


def small_brain(path: Path) -> Brain:
    """A brain with two canonical sources and two semantic facts, in one commit."""
    brain = Brain.init(path)
    with brain.writer(ACTOR) as writer:
        add_text(writer, "alpha")
        add_text(writer, "beta")
        writer.add(fact("x"))
        writer.add(fact("y"))
        writer.commit()
    return brain


def test_pack_of_reference_brain_reproduces_its_v2_manifest(tmp_path: Path) -> None:
    brain = Brain.open(copy_reference(tmp_path / "b"))
    before = _blob_names(brain)
    result = pack(brain, "again")
    assert str(result.digest) == "sha256:" + V2
    assert str(result.config) == str(result.snapshot) == "sha256:" + HEAD
    assert [layer.memory_type for layer in result.layers] == [*MemoryType, None]
    assert _blob_names(brain) == before  # every layer and the manifest already existed, byte for byte
    assert brain.layout.resolve_tag("again").digest == result.digest


def test_repack_of_unchanged_brain_reuses_every_layer_and_writes_no_blob(tmp_path: Path) -> None:
    brain = small_brain(tmp_path / "b")
    first = pack(brain, "v1")
    assert not any(layer.reused for layer in first.layers)
    blobs = _blob_names(brain)
    again = pack(brain, "v1")
    assert again.digest == first.digest
    assert all(layer.reused for layer in again.layers)
    assert _blob_names(brain) == blobs
    assert [t for t, _ in brain.layout.tags()] == ["v1"]


def test_changed_module_is_rebuilt_and_the_others_reused(tmp_path: Path) -> None:
    brain = small_brain(tmp_path / "b")
    first = pack(brain, "v1")
    with brain.writer(ACTOR) as writer:
        writer.add(fact("z"))
        writer.commit()
    second = pack(brain, "v2")
    reused = {str(layer.memory_type): layer.reused for layer in second.layers}
    assert reused == {"canonical": True, "semantic": False, "None": False}
    assert second.layers[0].digest == first.layers[0].digest
    assert Manifest.decode(brain.blobs.get(second.digest)).layers[-1].annotation(mt.SNAPSHOT_COUNT) == "2"


def test_corrupt_cached_layer_is_not_trusted(tmp_path: Path) -> None:
    brain = small_brain(tmp_path / "b")
    first = pack(brain)
    canonical = brain.blobs.path(first.layers[0].digest)
    canonical.write_bytes(b"x" * canonical.stat().st_size)
    (tmp_path / "b" / "boltzmann" / "layers.json").write_text('{"broken":')  # a torn sidecar is only a cache miss
    pack(brain)
    second = pack(brain)
    assert second.digest == first.digest and all(layer.reused for layer in second.layers)
    assert brain.blobs.verify_file(first.layers[0].digest)


def test_untagged_pack_is_listed_once(tmp_path: Path) -> None:
    brain = small_brain(tmp_path / "b")
    first = pack(brain)
    pack(brain)
    entries = [d for d in brain.layout.index().manifests if d.digest == first.digest]
    assert len(entries) == 1 and entries[0].tag is None and entries[0].artifactType == mt.ARTIFACT


def test_subset_publishes_a_projection(tmp_path: Path) -> None:
    brain = Brain.open(copy_reference(tmp_path / "b"))
    result = pack(brain, "sub", {MemoryType.EPISODIC, MemoryType.PROVENANCE})
    manifest = Manifest.decode(brain.blobs.get(result.digest))
    assert manifest.config.mediaType == mt.PROJECTION_CONFIG and manifest.is_projection
    projection = json.loads(brain.blobs.get(manifest.config.digest))
    assert sorted(projection) == ["boltzmann", "modules", "source"]
    assert sorted(projection["modules"]) == ["episodic", "provenance"]
    assert projection["source"] == manifest.annotations[mt.SOURCE_SNAPSHOT] == "sha256:" + HEAD
    assert [layer.mediaType for layer in manifest.layers] == [
        mt.module_layer(MemoryType.EPISODIC), mt.module_layer(MemoryType.PROVENANCE), mt.HISTORY_LAYER
    ]
    assert json.loads(manifest.annotations[mt.SCHEMA_VERSIONS]) == {"episodic": [1], "provenance": [1]}
    assert manifest.layers[-1].annotation(mt.SNAPSHOT_COUNT) == "10"  # the history stays complete


@pytest.mark.parametrize(
    ("modules", "error", "message"),
    [
        (set(), InvalidInputError, "at least one"),
        ({MemoryType.SEMANTIC}, InvalidInputError, "must include canonical"),
        ({MemoryType.CANONICAL, MemoryType.PROCEDURAL}, NotFoundError, "procedural"),
    ],
)
def test_invalid_subsets_are_refused(tmp_path: Path, modules: set[MemoryType], error: type, message: str) -> None:
    brain = small_brain(tmp_path / "b")
    with pytest.raises(error, match=message):
        pack(brain, "t", modules)
    assert brain.layout.tags() == []


def test_empty_brain_and_bad_tag_are_refused(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    with pytest.raises(RefusedError, match="empty"):
        pack(brain)
    with pytest.raises(InvalidInputError, match="invalid tag"):
        pack(small_brain(tmp_path / "c"), "no/slashes")


def test_missing_content_blob_is_reported(tmp_path: Path) -> None:
    brain = small_brain(tmp_path / "b")
    block = next(iter(brain.module(MemoryType.CANONICAL).block_ids))
    content = json.loads(brain.blobs.get(block))["payload"]["blob"]
    (brain.blobs.directory / content[7:]).unlink()
    with pytest.raises(NotFoundError, match="is not stored"):
        pack(brain)


def test_pack_waits_for_the_writer_lock(tmp_path: Path) -> None:
    brain = small_brain(tmp_path / "b")
    with WriterLock(brain.path), pytest.raises(LockTimeoutError):
        pack(brain, lock_timeout=0.2)


_BUILD_AND_PACK = """
import sys
from pathlib import Path
from brain.brain import Brain
from oci.pack import pack
from tests.oci.test_pack import small_brain
print(pack(small_brain(Path(sys.argv[1])), "v1").digest)
"""


def test_pack_is_deterministic_across_processes(tmp_path: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600", "PYTHONHASHSEED": "random"}
    root = Path(__file__).resolve().parents[2]
    digests = {
        subprocess.run(
            [sys.executable, "-c", _BUILD_AND_PACK, str(tmp_path / name)],
            cwd=root, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()
        for name in ("one", "two")
    }
    assert len(digests) == 1 and next(iter(digests)).startswith("sha256:")


def test_tombstoned_members_contribute_nothing(tmp_path: Path) -> None:
    from oci.members import scan_module

    brain = small_brain(tmp_path / "b")
    ref = brain.snapshot().modules["canonical"]  # type: ignore[union-attr]
    gone = brain.module(MemoryType.CANONICAL).block_ids[0]
    content = json.loads(brain.blobs.get(gone))["payload"]["blob"][7:]
    (brain.blobs.directory / gone.hex).unlink()  # redaction destroyed the envelope
    contents = scan_module(brain.blobs, MemoryType.CANONICAL, ref.model_copy(update={"tombstones": (gone,)}))
    assert gone.hex not in contents.blob_hexes and content not in contents.blob_hexes
    assert len(contents.blob_hexes) == 2 and contents.member_names()[0] == "composition.json"


def test_governed_snapshot_is_protocol_version_two_with_its_trust_root(tmp_path: Path) -> None:
    from brain.snapshot import Snapshot, TrustKey, TrustRoot
    from brain.store import Head, write_head

    brain = small_brain(tmp_path / "b")
    root = TrustRoot(
        govern_quorum=1,
        keys=(
            TrustKey(
                key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4",
                scopes=("govern",), since=1,
            ),
        ),
        revision=1,
    )
    current = brain.snapshot()
    assert current is not None
    governed = Snapshot(created_at=current.created_at, modules=current.modules, trust_root=root)
    digest = brain.blobs.put(governed.to_bytes())
    write_head(brain.path, Head.first(digest))
    manifest = Manifest.decode(brain.blobs.get(pack(brain, "gov").digest))
    assert manifest.annotations[mt.PROTOCOL_VERSION] == "2"
    assert manifest.annotations[mt.TRUST_ROOT] == str(root.digest)
    assert manifest.config.digest == digest
    assert verify_artifact(brain, "gov") == []


def test_a_subset_always_carries_provenance(tmp_path: Path) -> None:
    brain = Brain.open(copy_reference(tmp_path / "b"))
    result = pack(brain, "p", {MemoryType.CANONICAL, MemoryType.SEMANTIC})
    assert result.modules == [MemoryType.CANONICAL, MemoryType.SEMANTIC, MemoryType.PROVENANCE]
    assert result.implied == [MemoryType.PROVENANCE]
    manifest = Manifest.decode(brain.blobs.get(result.digest))
    assert sorted(json.loads(brain.blobs.get(manifest.config.digest))["modules"]) == [
        "canonical", "provenance", "semantic",
    ]
    named = pack(brain, "q", {MemoryType.CANONICAL, MemoryType.PROVENANCE})
    assert named.implied == [] and named.modules == [MemoryType.CANONICAL, MemoryType.PROVENANCE]


def test_layers_record_their_inflated_size_even_when_reused(tmp_path: Path) -> None:
    from oci.layer_cache import CACHE_FILE
    from oci.layer_size import inflated_size

    brain = small_brain(tmp_path / "b")
    first = pack(brain)
    measured = [inflated_size(brain.blobs.path(layer.digest)) for layer in first.layers]
    assert [layer.inflated_size for layer in first.layers] == measured and first.warnings == []
    # A sidecar written before sizes were recorded: the reused layers are measured once.
    sidecar = brain.path.joinpath(*CACHE_FILE)
    entries = json.loads(sidecar.read_text())
    sidecar.write_text(
        json.dumps({k: {f: v for f, v in e.items() if f != "inflated_size"} for k, e in entries.items()})
    )
    again = pack(brain)
    assert all(layer.reused for layer in again.layers)
    assert [layer.inflated_size for layer in again.layers] == measured
    assert all(e["inflated_size"] is not None for e in json.loads(sidecar.read_text()).values())


def test_a_layer_beyond_the_reference_inflate_bound_is_warned_about(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    with brain.writer(ACTOR) as writer:
        add_text(writer, "the same line again\n" * 600_000)  # 12 MB that gzip shrinks more than 100-fold
        writer.commit()
    result = pack(brain)
    canonical = result.layers[0]
    assert canonical.inflated_size is not None and canonical.inflated_size > 100 * canonical.size
    assert len(result.warnings) == 1
    warning = result.warnings[0]
    assert f"will refuse the canonical layer {canonical.digest}" in warning
    assert f"--max-inflate {canonical.inflated_size}" in warning
    assert pack(brain).warnings == result.warnings  # reused layers still warn
