"""Conformance with the reference brain: every wire document in its blob store decodes with our decoders,
re-serializes byte-identically and hashes to its file name; every snapshot's module refs match the
recomputed roots and counts of their compositions."""

from __future__ import annotations

import json

import pytest

from brain.blocks import Block, GenericBlock, MemoryType
from brain.blocks.schemas import payload_problems
from brain.composition import Composition
from brain.identity import BlockId, OciDigest, canonicalize
from brain.merkle import merkle_root
from brain.snapshot import Snapshot
from tests.shared_paths import REFERENCE_BLOBS

BLOBS = REFERENCE_BLOBS
pytestmark = pytest.mark.skipif(not BLOBS.is_dir(), reason="reference brain fixture not present")
_ENVELOPE = {"boltzmann", "memory_type", "payload", "schema_version", "serialization"}
_COMPOSITION = {"block_ids", "boltzmann", "layout", "memory_type"}


def _json_blobs() -> dict[str, tuple[bytes, dict]]:
    found = {}
    for path in sorted(BLOBS.iterdir()):
        data = path.read_bytes()
        try:
            document = json.loads(data)
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(document, dict):
            found[path.name] = (data, document)
    return found


def _kind(document: dict) -> str:
    if document.keys() == _ENVELOPE:
        return "block"
    if document.keys() == _COMPOSITION:
        return "composition"
    if "created_at" in document and "modules" in document:
        return "snapshot"
    if document.get("mediaType") == "application/vnd.oci.image.manifest.v1+json":
        return "manifest"
    return "unknown"


def _by_kind(kind: str) -> list[tuple[str, bytes]]:
    return [(name, data) for name, (data, document) in _json_blobs().items() if _kind(document) == kind]


def test_every_json_blob_is_a_known_document() -> None:
    kinds = [_kind(document) for _, document in _json_blobs().values()]
    assert "unknown" not in kinds
    assert (kinds.count("block"), kinds.count("composition"), kinds.count("snapshot")) == (28, 20, 10)


@pytest.mark.parametrize(("name", "data"), _by_kind("block"))
def test_blocks(name: str, data: bytes) -> None:
    block = Block.decode(data, BlockId(name))
    assert block.canonical_bytes() == data and block.block_id == BlockId(name)
    assert not isinstance(block, GenericBlock)
    # Rebuilt from its payload alone (the writer path), it is the same block: oldest-that-fits picks v1.
    rebuilt = Block.from_payload(block.memory_type, block.payload())
    assert canonicalize(rebuilt.envelope()) == data and rebuilt.block_id == block.block_id
    assert payload_problems(block.memory_type, 1, block.payload()) == []


@pytest.mark.parametrize(("name", "data"), _by_kind("composition"))
def test_compositions(name: str, data: bytes) -> None:
    composition = Composition.decode(data, OciDigest(name))
    assert composition.to_bytes() == data and composition.digest == OciDigest(name)
    assert composition.root == merkle_root(composition.block_ids)


@pytest.mark.parametrize(("name", "data"), _by_kind("snapshot"))
def test_snapshots_and_their_module_refs(name: str, data: bytes) -> None:
    snapshot = Snapshot.decode(data, OciDigest(name))
    assert snapshot.to_bytes() == data
    for key, ref in snapshot.modules.items():
        composition = Composition.decode((BLOBS / ref.composition.hex).read_bytes(), ref.composition)
        assert composition.memory_type == MemoryType(key) == ref.memory_type
        assert composition.root == ref.root
        assert len(composition) == ref.block_count
        optional = {k: getattr(ref, k) for k in ("embedding_model", "index_digest", "tombstones") if getattr(ref, k)}
        assert composition.module_ref(**optional) == ref
    for parent in snapshot.parent_digests:
        assert Snapshot.decode((BLOBS / parent.hex).read_bytes(), parent).created_at


def test_every_member_block_of_the_head_is_present_and_typed() -> None:
    head = json.loads((BLOBS.parent.parent / "boltzmann" / "head.json").read_bytes())
    snapshot = Snapshot.decode((BLOBS / head["snapshot"][7:]).read_bytes())
    for ref in snapshot.modules.values():
        composition = Composition.decode((BLOBS / ref.composition.hex).read_bytes())
        for block_id in composition.block_ids:
            assert Block.decode((BLOBS / block_id.hex).read_bytes(), block_id).memory_type is ref.memory_type
