"""§8: read a brain written by the reference implementation, re-derive every identity, then extend it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from brain.blocks import Block, MemoryType, RemovalRecord
from brain.brain import Brain
from brain.composition import Composition
from brain.identity import BlockId, OciDigest
from brain.merkle import merkle_root
from tests.brain.brain_helpers import fact, tree_digest
from tests.shared_paths import REFERENCE_BRAIN

REFERENCE = REFERENCE_BRAIN
HEAD = OciDigest.parse("sha256:095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904")
V1 = OciDigest.parse("sha256:100ea8f01da426a5a2020ddc90f28d49169b57793541cdbb266c2387ef549839")
ROOTS = {
    MemoryType.CANONICAL: "sha256:d3623701e36e62fe9f0f4466f0029db073562c921375d82f0c7f5a17379d6a2c",
    MemoryType.EPISODIC: "sha256:ea9b7bd428082889b906491b12d5eaf4c18e21b87f7b2443afc3baea0183d935",
    MemoryType.SEMANTIC: "sha256:7f994fec0244b6e9d0805a8d3691bb499cff0884621ec504b72056e50d9925cc",
}

pytestmark = pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference brain fixture not present")


@pytest.fixture
def reference(tmp_path) -> Brain:
    copy = tmp_path / "reference-brain"
    shutil.copytree(REFERENCE, copy)
    for directory, _, files in os.walk(copy):  # the fixture is read-only; the copy must be writable
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(Path(directory) / name, 0o644)
    return Brain.open(copy)


def _check_snapshot(brain: Brain, digest: OciDigest) -> None:
    snapshot = brain.snapshot(digest)
    assert OciDigest.of(snapshot.to_bytes()) == digest == snapshot.digest
    for memory_type, module in brain.modules(digest).items():
        ref = module.ref
        composition = Composition.of(memory_type, module.block_ids)
        assert composition.to_bytes() == brain.blobs.get(ref.composition)
        assert composition.digest == ref.composition and composition.root == ref.root
        assert merkle_root(module.block_ids) == ref.root and len(module) == ref.block_count
        blocks = list(module.blocks())
        assert len(blocks) == len(module) - len(module.tombstones)
        for block in blocks:
            assert block.memory_type is memory_type
            assert BlockId.of(block.canonical_bytes()) == block.block_id
            assert block.block_id in module
            stored = brain.blobs.get(block.block_id)
            assert Block.decode(stored, block.block_id).canonical_bytes() == block.canonical_bytes() == stored
        for block_id in module.block_ids[:3]:
            assert brain.prove(block_id, memory_type, digest).verify(ref.root)


def test_every_identity_recomputes_at_head_and_v1(reference):
    assert reference.snapshot_digest() == HEAD
    for digest in (HEAD, V1):
        _check_snapshot(reference, digest)
    modules = reference.modules()
    for memory_type, root in ROOTS.items():
        assert str(modules[memory_type].ref.root) == root
    assert str(modules[MemoryType.CANONICAL].ref.composition) == (
        "sha256:15158afc748ba46e8700223a2be7c1e15a8b9b8abae91725eef325406eba870f"
    )
    assert all(reference.blobs.verify_file(d) for d in reference.blobs.digests())


def test_history_has_ten_snapshots_ending_at_a_root(reference):
    history = reference.history()
    assert len(history) == 10 and history[0][0] == HEAD
    assert [d for d, _ in history] == list(reference.head().retained)
    assert history[-1][1].first_parent is None
    assert V1 in [d for d, _ in history]
    assert [d for d, _ in reference.history(V1)][0] == V1


def test_ledger_accessibility_and_the_dropped_block(reference):
    ledger = reference.ledger()
    semantic = reference.module(MemoryType.SEMANTIC)
    episodic = reference.module(MemoryType.EPISODIC)
    superseded = [i for i in semantic.block_ids if not ledger.is_accessible(i)]
    demoted = [i for i in episodic.block_ids if not ledger.is_accessible(i)]
    assert len(superseded) == 1 and ledger.superseded_by[superseded[0]] in semantic.members
    assert len(demoted) == 1 and demoted[0] in ledger.demoted
    assert len(semantic) == 3
    drops = [r for _, r in ledger.removals if isinstance(r, RemovalRecord) and r.memory_type is MemoryType.SEMANTIC]
    assert len(drops) == 1 and drops[0].mechanism == "drop"
    (dropped,) = drops[0].blocks
    assert dropped in reference.module(MemoryType.SEMANTIC, V1) and dropped not in semantic
    assert dropped in ledger.removed
    assert ledger.derivations and ledger.validations and ledger.registrations
    for memory_type in (MemoryType.SEMANTIC, MemoryType.PROCEDURAL, MemoryType.EPISODIC):
        for block_id in reference.module(memory_type).block_ids:
            assert block_id in ledger.derivations and ledger.validations[block_id].verdict == "validated"
    for block_id in reference.module(MemoryType.CANONICAL).block_ids:
        assert block_id in ledger.registrations


def test_reads_never_modify_the_brain(reference):
    before = tree_digest(reference.path)
    reference.ledger()
    reference.history()
    for digest in (HEAD, V1):
        _check_snapshot(reference, digest)
    reference.layout.tags()
    assert tree_digest(reference.path) == before


def test_extend_with_our_writer(reference):
    before = reference.snapshot()
    with reference.writer("tester@example.org") as writer:
        assert writer.add(fact("extension", "written by this implementation"))
        new = writer.commit()
    after = reference.snapshot()
    assert reference.snapshot_digest() == new and after.first_parent == HEAD
    for name, ref in before.modules.items():
        if name != "semantic":
            assert after.modules[name] == ref
            assert after.modules[name].model_dump(mode="json") == ref.model_dump(mode="json")
    assert after.modules["semantic"].block_count == 4
    assert len(reference.history()) == 11
    _check_snapshot(reference, new)
    assert reference.head().retained[:2] == (new, HEAD) and len(reference.head().retained) == 10


def test_cascade_closures_match_the_observed_drops(reference):
    """§7.4's table, at v1 (before the drop): which blocks each drop would reach."""
    modules = reference.modules(V1)
    ledger = reference.ledger(V1)
    by_name = {}
    for module in modules.values():
        for block in module.blocks():
            payload = block.payload()
            by_name[payload.get("label") or payload.get("summary") or payload.get("media_type")] = block.block_id
    names = {block_id: name for name, block_id in by_name.items()}

    def reached(name: str) -> set[str]:
        return {names[i] for i in ledger.cascade(by_name[name]) if i in names}

    assert reached("Fourier series") == {"Laplace transform"}
    assert reached("application/pdf") == {"Laplace transform"}
    assert reached("text/markdown") == {"Fourier series", "Laplace transform", "compute a spectrum"}
    seminar = reached("text/plain")
    assert any(by_name[n] in modules[MemoryType.EPISODIC] for n in seminar)  # why that drop is refused
