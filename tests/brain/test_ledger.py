"""Ledger views (§7.1), accessibility (§7.2) and the cascade closure (§7.4), from records alone."""

from __future__ import annotations

from brain.blocks import (
    Actor,
    CanonicalBlock,
    DemotionRecord,
    DerivationRecord,
    GenericBlock,
    MemoryType,
    ProceduralBlock,
    Producer,
    ProvenanceBlock,
    Relation,
    RemovalRecord,
    SemanticBlock,
    Step,
    SupersessionRecord,
    ValidationRecord,
)
from brain.identity import BlockId, OciDigest
from brain.ledger import Ledger, record_of, structural_targets

ACTOR = Actor(id="curator@example.org", kind="human")
MODEL = Producer(kind="model", id="acme/extractor", version="1")


def _id(n: int) -> BlockId:
    return BlockId.of(bytes([n]))


def _rec(record) -> tuple[BlockId, object]:
    return ProvenanceBlock(record=record).block_id, record


def _derivation(block, sources, at="2026-01-01T00:00:00Z", producer=MODEL, locator=None):
    return DerivationRecord(
        actor=ACTOR, at=at, block=block, derived_from=tuple(sources), producer=producer, locator=locator
    )


def test_evidence_dependents_producer_locator():
    a, b, c = _id(1), _id(2), _id(3)
    ledger = Ledger.from_records([_rec(_derivation(b, [a], locator="L1-L2")), _rec(_derivation(c, [a, b]))])
    assert ledger.evidence[b] == (a,) and ledger.evidence[c] == (a, b)
    assert ledger.dependents[a] == {b, c} and ledger.dependents[b] == {c}
    assert ledger.producer[b] == MODEL and ledger.locators == {b: "L1-L2"}
    assert ledger.made_by(Producer(kind="model", id="acme/extractor")) == {b, c}
    assert ledger.made_by(Producer(kind="model", id="acme/extractor", version="2")) == set()
    assert ledger.made_by(Producer(kind="pipeline", id="acme/extractor")) == set()


def test_validation_last_in_time_wins_regardless_of_record_order():
    block = _id(1)
    late = ValidationRecord(actor=ACTOR, at="2026-01-02T00:00:00Z", block=block, verdict="rejected", checks=("x",))
    early = ValidationRecord(actor=ACTOR, at="2026-01-01T00:00:00Z", block=block, verdict="validated", checks=("x",))
    for order in ([late, early], [early, late]):
        assert Ledger.from_records([_rec(r) for r in order]).validations[block].verdict == "rejected"


def test_accessibility_supersession_and_demotion():
    old, new, episode, other = _id(1), _id(2), _id(3), _id(4)
    ledger = Ledger.from_records(
        [
            _rec(SupersessionRecord(actor=ACTOR, at="2026-01-01T00:00:00Z", block=new, supersedes=old)),
            _rec(SupersessionRecord(actor=ACTOR, at="2026-01-01T00:00:00Z", block=other, supersedes=old)),
            _rec(DemotionRecord(actor=ACTOR, at="2026-01-01T00:00:00Z", block=episode)),
        ]
    )
    assert ledger.superseded_by[old] in (new, other)  # one winner per loser (§7.1)...
    assert set(ledger.precedence_conflicts[old]) == {new, other}  # ...and a precedence conflict keeps both edges
    assert not ledger.is_accessible(old) and not ledger.is_accessible(episode)
    assert ledger.is_accessible(new) and ledger.is_accessible(_id(9))
    assert ledger.demoted == {episode}


def test_removals_are_collected():
    a, b = _id(1), _id(2)
    removal = RemovalRecord(
        actor=ACTOR, at="2026-01-01T00:00:00Z", blocks=(a, b), mechanism="drop", memory_type="semantic", reason="r"
    )
    ledger = Ledger.from_records([_rec(removal)])
    assert ledger.removed == {a, b} and ledger.removals[0][1] == removal


def test_closure_follows_evidence_only_and_the_cascade_adds_structural_edges():
    source, fact, related, proc, unrelated = (_id(n) for n in range(1, 6))
    ledger = Ledger.from_records(
        [_rec(_derivation(fact, [source])), _rec(_derivation(unrelated, [_id(9)]))],
        structural=[(fact, related), (related, proc), (proc, source)],  # a cycle back to the source
    )
    assert ledger.closure(source) == {fact}  # evidence edges only (issue 12 item 1)
    assert ledger.cascade(source) == {fact, related, proc}
    assert ledger.cascade([fact, related]) == {proc, source}
    assert ledger.closure(unrelated) == set() == ledger.cascade(unrelated)


def test_structural_targets_of_semantic_and_procedural_blocks():
    t1, t2 = _id(1), _id(2)
    semantic = SemanticBlock(
        kind="fact", label="l", statement="s", relations=(Relation(predicate="generalizes", target=t1),)
    )
    procedural = ProceduralBlock(label="p", goal="g", steps=(Step(action="a", uses=(t1, t2)), Step(action="b")))
    canonical = CanonicalBlock(blob=OciDigest.of(b"x"), media_type="text/plain", size=1)
    assert structural_targets(semantic) == {t1}
    assert structural_targets(procedural) == {t1, t2}
    assert structural_targets(canonical) == set()


def test_v2_derivation_maps_assisted_by_to_a_producer():
    block, source = _id(1), _id(2)
    record = {
        "record_type": "derivation",
        "actor": {"id": "curator@example.org", "kind": "human"},
        "at": "2026-01-01T00:00:00Z",
        "block": str(block),
        "derived_from": [str(source)],
        "assisted_by": [{"id": "alex@example.org", "kind": "human", "model": "openai/gpt-5"}],
    }
    generic = GenericBlock(memory_type=MemoryType.PROVENANCE, schema_version=2, payload={"record": record})
    mapped = record_of(generic)
    assert isinstance(mapped, DerivationRecord)
    assert mapped.producer == Producer(kind="model", id="openai/gpt-5") and mapped.derived_from == (source,)
    assert record_of(SemanticBlock(kind="fact", label="l", statement="s")) is None
