"""The `Brain` facade: init/open, reads, prefixes, proofs, history, ledger, and every kind of bad input."""

from __future__ import annotations

import json

import pytest

from brain.blocks import Actor, DerivationRecord, MemoryType, Producer, ProvenanceBlock, Relation
from brain.brain import Brain
from brain.errors import (
    AmbiguousIdError,
    BrainUnreadableError,
    ConflictError,
    IntegrityError,
    InvalidInputError,
    NotABrainError,
    NotFoundError,
)
from brain.identity import BlockId, OciDigest, canonicalize
from brain.ledger import Ledger
from brain.store.head import head_path
from tests.brain.brain_helpers import ACTOR, brain_with, canonical, fact, tree_digest

C, S = MemoryType.CANONICAL, MemoryType.SEMANTIC


def test_init_creates_an_empty_brain(tmp_path):
    brain = Brain.init(tmp_path / "b")
    assert (brain.path / "oci-layout").is_file() and (brain.path / "boltzmann").is_dir()
    opened = Brain.open(brain.path)
    assert opened.head() is None and opened.snapshot() is None and opened.snapshot_digest() is None
    assert opened.modules() == {} and opened.history() == [] and opened.ledger().records == []


def test_init_refuses_existing_brains_and_non_empty_dirs(tmp_path):
    Brain.init(tmp_path / "b")
    with pytest.raises(ConflictError, match="already a brain"):
        Brain.init(tmp_path / "b")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    with pytest.raises(ConflictError, match="not an empty directory"):
        Brain.init(tmp_path / "other")
    Brain.init(tmp_path / "empty-dir-is-fine")


def test_open_refuses_what_is_not_a_brain(tmp_path):
    with pytest.raises(NotABrainError, match="no such directory"):
        Brain.open(tmp_path / "missing")
    with pytest.raises(NotABrainError, match="oci-layout is missing"):
        Brain.open(tmp_path)


def test_resolve_module_prove_and_prefix(tmp_path):
    texts = [f"text {n}" for n in range(20)]
    brain = brain_with(tmp_path / "b", *texts)
    module = brain.module(C)
    one = canonical("text 0").block_id
    assert brain.resolve(one).canonical_bytes() == canonical("text 0").canonical_bytes()
    assert one in module and len(module) == 20
    assert brain.prove(one, C).verify(module.ref.root)
    assert brain.resolve_prefix(one.hex[:12]) == one
    assert brain.resolve_prefix("sha256:" + one.hex[:12].upper()) == one
    firsts = [i.hex[0] for i in module.block_ids]
    shared = next(c for c in firsts if firsts.count(c) > 1)  # 20 ids over 16 digits: pigeonhole
    with pytest.raises(AmbiguousIdError, match=f"matches {firsts.count(shared)} blocks"):
        brain.resolve_prefix(shared)
    absent = next(f"{n:02x}" for n in range(256) if not any(i.hex.startswith(f"{n:02x}") for i in module.block_ids))
    with pytest.raises(NotFoundError):
        brain.resolve_prefix(absent)
    for bad in ("xyz", "", "sha256:"):
        with pytest.raises(InvalidInputError):
            brain.resolve_prefix(bad)
    with pytest.raises(NotFoundError, match="no semantic module"):
        brain.module(S)
    with pytest.raises(NotFoundError, match="not a member"):
        brain.prove(canonical("zzz").block_id, C)
    with pytest.raises(NotFoundError, match="not stored"):
        brain.resolve(canonical("zzz").block_id)


def test_ledger_of_modules_builds_structural_and_evidence_edges(tmp_path):
    brain = brain_with(tmp_path / "b", "src")
    source = canonical("src").block_id
    base = fact("base")
    dependent = fact("dependent", relations=(Relation(predicate="refines", target=base.block_id),))
    record = DerivationRecord(
        actor=Actor(id=ACTOR, kind="human"),
        at="2026-01-01T00:00:00Z",
        block=base.block_id,
        derived_from=(source,),
        producer=Producer(kind="actor", id=ACTOR),
    )
    with brain.writer(ACTOR) as writer:
        writer.add(base)
        writer.add(dependent)
        writer.add(ProvenanceBlock(record=record))
        writer.commit()
    ledger = Ledger.of(brain.modules())
    assert ledger.closure(source) == {base.block_id}
    assert ledger.cascade(source) == {base.block_id, dependent.block_id}
    assert ledger.evidence[base.block_id] == (source,)
    assert brain.ledger().dependents[source] == {base.block_id}


# --- bad input: each gives one clear line, and reading never changes the brain ---------------------


def _damage_and_expect(brain, damage, error, *match):
    damage(brain)
    before = tree_digest(brain.path)
    with pytest.raises(error) as info:
        reopened = Brain.open(brain.path)
        for module in reopened.modules().values():
            list(module.blocks())
        reopened.layout.tags()
    message = str(info.value)
    assert "\n" not in message
    for fragment in match:
        assert fragment in message
    assert tree_digest(brain.path) == before


def _block_file(brain):
    return brain.blobs.path(canonical("one").block_id)


def _snapshot_file(brain):
    return brain.blobs.path(brain.snapshot_digest())


def _composition_file(brain):
    return brain.blobs.path(brain.snapshot().modules[C].composition)


def _edit(locate, transform):
    def damage(brain):
        path = locate(brain)
        path.write_bytes(transform(path.read_bytes()))

    return damage


def _unlink(locate):
    return lambda brain: locate(brain).unlink()


def _head(brain):
    return head_path(brain.path)


def _index(brain):
    return brain.path / "index.json"


def _oci_layout(brain):
    return brain.path / "oci-layout"


CASES = {
    "truncated block": (_edit(_block_file, lambda b: b[:-5]), IntegrityError, "does not hash"),
    "altered block": (_edit(_block_file, lambda b: b.replace(b"plain", b"plane")), IntegrityError, "does not hash"),
    "missing block": (_unlink(_block_file), IntegrityError, "not stored"),
    "truncated snapshot": (_edit(_snapshot_file, lambda b: b"{"), IntegrityError, "does not hash"),
    "missing snapshot": (_unlink(_snapshot_file), BrainUnreadableError, "head.json", "not stored"),
    "missing composition": (_unlink(_composition_file), BrainUnreadableError, "composition", "not stored"),
    "empty head": (_edit(_head, lambda b: b""), BrainUnreadableError, "head.json", "empty"),
    "non-JSON head": (_edit(_head, lambda b: b"snapshot: x"), BrainUnreadableError, "head.json"),
    "missing index": (_unlink(_index), BrainUnreadableError, "index.json", "missing"),
    "empty index": (_edit(_index, lambda b: b""), BrainUnreadableError, "index.json", "empty"),
    "non-JSON index": (_edit(_index, lambda b: b"<xml/>"), BrainUnreadableError, "index.json"),
    "not a brain": (_unlink(_oci_layout), NotABrainError, "oci-layout"),
    "wrong layout version": (_edit(_oci_layout, lambda b: b'{"imageLayoutVersion": "2.0.0"}'), NotABrainError, "2.0.0"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_clear_line_and_reads_change_nothing(tmp_path, case):
    damage, error, *match = CASES[case]
    brain = brain_with(tmp_path / "b", "one", "two")
    _damage_and_expect(brain, damage, error, *match)


def test_non_canonical_block_is_refused(tmp_path):
    brain = brain_with(tmp_path / "b", "one")
    pretty = json.dumps(json.loads(canonical("x").canonical_bytes()), indent=1).encode()
    digest = brain.blobs.put(pretty)
    before = tree_digest(brain.path)
    with pytest.raises(IntegrityError, match=digest.hex):
        brain.resolve(BlockId(digest.hex))
    assert tree_digest(brain.path) == before


def test_snapshot_naming_a_composition_of_the_wrong_root_is_refused(tmp_path):
    brain = brain_with(tmp_path / "b", "one")
    snapshot = json.loads(brain.blobs.get(brain.snapshot_digest()))
    snapshot["modules"]["canonical"]["root"] = str(OciDigest.of(b"not the root"))
    forged = brain.blobs.put(canonicalize(snapshot))
    module = brain.modules(forged)[C]  # listing modules reads only the snapshot
    with pytest.raises(IntegrityError, match="has root"):
        _ = module.block_ids


def test_history_stops_quietly_at_a_missing_ancestor(tmp_path):
    brain = brain_with(tmp_path / "b", "one")
    first = brain.snapshot_digest()
    with brain.writer(ACTOR) as writer:
        writer.add(canonical("two"))
        writer.commit()
    brain.blobs.path(first).unlink()
    assert len(brain.history()) == 1


def test_redacted_member_is_reported_destroyed_not_missing(tmp_path):
    from brain.module import DestroyedBlockError
    from brain.snapshot import Snapshot
    from brain.store import write_head

    brain = brain_with(tmp_path / "b", "one", "two")
    one = canonical("one").block_id
    composition = brain.composition(brain.snapshot().modules[C])
    redacted = Snapshot.with_lineage(
        (brain.snapshot_digest(),),
        created_at="2026-01-01T00:00:00Z",
        modules={"canonical": composition.module_ref(tombstones=(one,))},
    )
    digest = brain.blobs.put(redacted.to_bytes())
    brain.blobs.path(one).unlink()
    write_head(brain.path, brain.head().advance(digest))
    module = brain.module(C)
    assert one in module and [b.block_id for b in module.blocks()] == [canonical("two").block_id]
    with pytest.raises(DestroyedBlockError, match="redacted"):
        brain.resolve(one)
    with pytest.raises(DestroyedBlockError, match="redacted"):
        module.read(one)


def test_ledger_reads_derived_blocks_only_when_structural_edges_are_needed(tmp_path):
    brain = brain_with(tmp_path / "b", "src")
    with brain.writer(ACTOR) as writer:
        writer.add(fact("damaged later"))
        writer.commit()
    brain.blobs.path(fact("damaged later").block_id).write_bytes(b"rotten")
    ledger = brain.ledger()  # provenance only: the damaged semantic block is not read
    assert ledger.is_accessible(fact("damaged later").block_id)
    with pytest.raises(IntegrityError, match="does not hash"):
        ledger.cascade(canonical("src").block_id)


@pytest.mark.parametrize("what", ["snapshot", "composition"])
def test_non_canonical_documents_are_refused_naming_the_file(tmp_path, what):
    from brain.store import write_head

    brain = brain_with(tmp_path / "b", "one")
    snapshot = json.loads(brain.blobs.get(brain.snapshot_digest()))
    if what == "composition":
        ref = snapshot["modules"]["canonical"]
        pretty = json.dumps(json.loads(brain.blobs.get(OciDigest.parse(ref["composition"]))), indent=2).encode()
        ref["composition"] = str(brain.blobs.put(pretty))
        bad = brain.blobs.put(canonicalize(snapshot))
        target = OciDigest.of(pretty)
    else:
        bad = target = brain.blobs.put(json.dumps(snapshot, indent=2).encode())
    write_head(brain.path, brain.head().advance(bad))
    before = tree_digest(brain.path)
    with pytest.raises(IntegrityError) as info:
        list(brain.module(C).blocks())
    message = str(info.value)
    assert str(brain.blobs.path(target)) in message and "canonical" in message and "\n" not in message
    assert tree_digest(brain.path) == before


def test_snapshot_prefix_resolves_unique_stored_snapshots_only(tmp_path):
    from brain.snapshot import Snapshot

    brain = brain_with(tmp_path / "b", "one")
    head = brain.snapshot_digest()
    assert brain.resolve_snapshot_prefix(head.hex[:6]) == head
    assert brain.resolve_snapshot_prefix(str(head)) == head
    by_prefix: dict[str, OciDigest] = {}
    second = 0
    while True:  # store empty snapshots until two share a 4-digit prefix (about 300 on average)
        second += 1
        at = f"2020-01-01T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
        digest = brain.blobs.put(Snapshot(created_at=at, modules={}).to_bytes(), sync=False)
        if digest.hex[:4] in by_prefix:
            break
        by_prefix[digest.hex[:4]] = digest
    with pytest.raises(AmbiguousIdError, match="snapshot id prefix .* matches 2 snapshots"):
        brain.resolve_snapshot_prefix(digest.hex[:4])
    assert brain.resolve_snapshot_prefix(digest.hex[:20]) == digest
    with pytest.raises(InvalidInputError):
        brain.resolve_snapshot_prefix("abc")
    with pytest.raises(NotFoundError):
        brain.resolve_snapshot_prefix("0" * 64)
