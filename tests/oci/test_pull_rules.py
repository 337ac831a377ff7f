"""Install (pull) and `verify --tag` apply the same rules: lying annotations, unreferenced and hidden members,
large compositions, the one module-selection rule, and the §6.8 partial-install snapshot."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from brain.blocks import (
    Actor,
    CanonicalBlock,
    MemoryType,
    ProvenanceBlock,
    RegistrationRecord,
)
from brain.brain import Brain
from brain.errors import InvalidInputError, NotFoundError, UntrustedArtifactError
from brain.identity import OciDigest, utc_timestamp
from brain.snapshot import Snapshot
from oci import media_types as mt
from oci.artifact import verify_artifact
from oci.install import install_artifact
from oci.pack import pack
from oci.selection import select_modules
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
CANONICAL_LAYER = "57207defa4a4dc6bbec7c431bae429dd137e4a76998e6235c623f80bdb5aa393"


def _fetch(directory: Path):  # type: ignore[no-untyped-def]
    return lambda descriptor: directory / descriptor.digest.hex


def _genuine_canonical_entries() -> list[tuple[bytes, bytes]]:
    layer = REFERENCE_BLOBS / CANONICAL_LAYER
    with open(layer, "rb") as stream:
        reader = LayerReader(stream, compressed_size=layer.stat().st_size, what="x")
        return [entry(e.name, read_all(c, 1 << 20, "x")) for e, c in reader.members()]


def _both_refuse(tmp_path: Path, document: dict, blobs: Path, pull_match: str, verify_code: str) -> None:  # type: ignore[type-arg]
    """Install refuses (exit 6, nothing stored) and verify --tag of the same artifact reports `verify_code`."""
    data = manifest_bytes(document)
    brain = Brain.init(tmp_path / "pulled")
    with pytest.raises(UntrustedArtifactError, match=pull_match):
        install_artifact(brain, data, _fetch(blobs), reference=REF)
    assert brain.head() is None and list(brain.blobs.directory.iterdir()) == []
    holder = Brain.open(copy_reference(tmp_path / "holder"))
    for path in blobs.iterdir():
        if not holder.blobs.path(OciDigest(path.name)).exists():
            shutil.copy(path, holder.blobs.directory / path.name)
    digest = holder.blobs.put(data)
    assert verify_code in {p.code for p in verify_artifact(holder, str(digest))}


def _registry_copy(tmp_path: Path) -> Path:
    blobs = tmp_path / "registry"
    shutil.copytree(REFERENCE_BLOBS, blobs)
    return blobs


def _with_canonical_layer(document: dict, blobs: Path, layer: bytes) -> None:  # type: ignore[type-arg]
    digest = store(blobs, layer)
    document["layers"][0].update(digest=str(digest), size=len(layer))


# --- item 16: lying annotations --------------------------------------------------------------------------


def test_a_lying_snapshot_count_is_refused_by_pull_and_by_verify(tmp_path: Path) -> None:
    document = reference_manifest()
    document["layers"][-1]["annotations"][mt.SNAPSHOT_COUNT] = "99"
    _both_refuse(tmp_path, document, _registry_copy(tmp_path), "snapshot-count says 99", "history-count-mismatch")


def test_a_lying_source_snapshot_is_refused_by_pull_and_by_verify(tmp_path: Path) -> None:
    document = reference_manifest()
    document["annotations"][mt.SOURCE_SNAPSHOT] = "sha256:" + "7" * 64
    _both_refuse(
        tmp_path, document, _registry_copy(tmp_path), "source-snapshot sha256:7+ is not", "annotation-mismatch"
    )


def test_a_lying_schema_versions_annotation_is_refused_by_pull_and_by_verify(tmp_path: Path) -> None:
    document = reference_manifest()
    versions = json.loads(document["annotations"][mt.SCHEMA_VERSIONS])
    versions["semantic"] = [1, 2]
    document["annotations"][mt.SCHEMA_VERSIONS] = json.dumps(versions, separators=(",", ":"), sort_keys=True)
    _both_refuse(tmp_path, document, _registry_copy(tmp_path), "schema-versions", "annotation-mismatch")


def test_a_trust_root_annotation_on_an_ungoverned_snapshot_is_refused(tmp_path: Path) -> None:
    document = reference_manifest()
    document["annotations"][mt.TRUST_ROOT] = "sha256:" + "5" * 64
    _both_refuse(tmp_path, document, _registry_copy(tmp_path), "trust-root is sha256:5+", "annotation-mismatch")


# --- item 16: members nothing references ---------------------------------------------------------------


def test_an_unreferenced_member_is_refused_and_never_stored(tmp_path: Path) -> None:
    blobs = _registry_copy(tmp_path)
    planted = b"bytes a publisher wants in my store " * 100_000  # > 1 MiB: spooled, never renamed into place
    small = b"a small planted blob"
    extra = [entry("blobs/" + hashlib.sha256(planted).hexdigest(), planted),
             entry("blobs/" + hashlib.sha256(small).hexdigest(), small)]
    document = reference_manifest()
    _with_canonical_layer(document, blobs, raw_layer(*_genuine_canonical_entries(), *extra))
    _both_refuse(tmp_path, document, blobs, "nothing in the module references it", "layer-member-unexpected")


def test_a_member_name_hiding_bytes_after_its_nul_is_refused(tmp_path: Path) -> None:
    blobs = _registry_copy(tmp_path)
    planted = b"hidden"
    name = b"blobs/" + hashlib.sha256(planted).hexdigest().encode() + b"\0.evil"
    document = reference_manifest()
    _with_canonical_layer(
        document, blobs, raw_layer(*_genuine_canonical_entries(), (header(name, len(planted)), planted))
    )
    _both_refuse(tmp_path, document, blobs, "hides bytes after its NUL", "layer-unreadable")


# --- item 13: compositions larger than 1 MiB -----------------------------------------------------------


@pytest.mark.slow
def test_a_composition_over_one_mib_packs_verifies_and_installs(tmp_path: Path) -> None:
    source = Brain.init(tmp_path / "source")
    actor = Actor(id="tester@example.org", kind="human")
    with source.writer("tester@example.org") as writer:
        for number in range(15_000):  # 15,000 members: a 1.1 MB canonical composition
            data = b"source %d" % number
            block = CanonicalBlock(blob=writer.put_blob_later(data), media_type="text/plain", size=len(data))
            writer.add(block)
            if number < 10:
                writer.add(
                    ProvenanceBlock(record=RegistrationRecord(actor=actor, at=utc_timestamp(), block=block.block_id))
                )
        writer.commit()
    ref = source.modules()[MemoryType.CANONICAL].ref
    assert source.blobs.size(ref.composition) > 1 << 20
    packed = pack(source, "v1")
    assert verify_artifact(source, "v1") == []
    target = Brain.init(tmp_path / "target")
    result = install_artifact(target, source.blobs.get(packed.digest), _fetch(source.blobs.directory), reference=REF)
    assert result.head_moved and len(target.module(MemoryType.CANONICAL).block_ids) == 15_000


# --- the one selection rule -----------------------------------------------------------------------------


ALL = set(MemoryType)


def test_selection_without_modules_is_everything_available() -> None:
    selection = select_modules([MemoryType.PROVENANCE, MemoryType.CANONICAL], None, publishing=True, holder="x")
    assert selection.chosen == (MemoryType.CANONICAL, MemoryType.PROVENANCE) and selection.implied == ()


def test_installing_takes_exactly_what_was_asked_plus_provenance() -> None:
    selection = select_modules(ALL, {MemoryType.SEMANTIC}, publishing=False, holder="the artifact")
    assert selection.chosen == (MemoryType.SEMANTIC, MemoryType.PROVENANCE)
    assert selection.implied == (MemoryType.PROVENANCE,)
    assert selection.left_out == (MemoryType.CANONICAL, MemoryType.EPISODIC, MemoryType.PROCEDURAL)


def test_publishing_derived_modules_needs_canonical() -> None:
    with pytest.raises(InvalidInputError, match="must include canonical"):
        select_modules(ALL, {MemoryType.SEMANTIC}, publishing=True, holder="the brain")
    chosen = select_modules(
        ALL, {MemoryType.SEMANTIC, MemoryType.CANONICAL}, publishing=True, holder="the brain"
    ).chosen
    assert chosen == (MemoryType.CANONICAL, MemoryType.SEMANTIC, MemoryType.PROVENANCE)


def test_selection_refuses_nothing_and_what_is_not_there() -> None:
    with pytest.raises(InvalidInputError, match="at least one"):
        select_modules(ALL, set(), publishing=False, holder="the artifact")
    with pytest.raises(NotFoundError, match="the artifact has no episodic module .it has: canonical, provenance"):
        select_modules([MemoryType.CANONICAL, MemoryType.PROVENANCE], {MemoryType.EPISODIC}, publishing=False,
                       holder="the artifact")


# --- item 3: the partial-install snapshot ---------------------------------------------------------------


def test_a_partial_install_heads_a_local_snapshot_of_exactly_the_installed_modules(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "b")
    wanted = {MemoryType.SEMANTIC, MemoryType.PROVENANCE}
    result = install_artifact(brain, (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS), wanted,
                              reference=REF, tag="v2")
    published = Snapshot.decode((REFERENCE_BLOBS / HEAD).read_bytes())
    head = brain.head()
    assert head is not None and head.origin is not None
    assert head.origin.partial and str(head.origin.snapshot) == "sha256:" + HEAD and head.origin.tag == "v2"
    local = brain.snapshot()
    assert local is not None and head.snapshot == result.head != result.snapshot
    assert str(local.parent) == "sha256:" + HEAD and local.parents is None
    assert local.modules == {k: published.modules[k] for k in ("semantic", "provenance")}
    assert local.labels == published.labels and local.trust_root == published.trust_root
    assert local.created_at != published.created_at
    # Nothing of the modules left out is stored: not the canonical envelopes, not their sources.
    canonical = {b.hex for b in brain.composition(published.modules["canonical"]).block_ids}
    assert not canonical & {p.name for p in brain.blobs.directory.iterdir()}
    again = install_artifact(brain, (REFERENCE_BLOBS / V2).read_bytes(), _fetch(REFERENCE_BLOBS), wanted, reference=REF)
    assert again.already_head and brain.head() == head
