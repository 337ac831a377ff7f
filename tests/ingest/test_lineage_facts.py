"""`ingest.lineage.facts_of_block` reads v1 blocks' fields directly: it must say what their payloads say (the
route every other schema version takes), statements and structural links alike."""

from __future__ import annotations

import pytest

from brain.blocks import Block, MemoryType
from brain.blocks.generic import GenericBlock
from brain.identity import BlockId
from brain.ledger import structural_targets
from ingest.lineage import Lineage, Linked, Registered, Stated, facts_of_block, statement_of
from ingest.validate import statement_key

T1, T2, E = (BlockId(c * 64) for c in "abe")


def _v1(memory_type: MemoryType, payload: dict) -> Block:  # type: ignore[type-arg]
    return Block.from_payload(memory_type, payload)


def _from_payload(block: Block) -> list[object]:
    """The facts as a reader of the payload alone finds them (what a generic block gets)."""
    facts: list[object] = []
    key, statement = statement_key(block.payload()) if block.memory_type is MemoryType.SEMANTIC else (None, "")
    if key is not None:
        facts.append(Stated("stated", block.block_id.hex, *key, statement))
    facts += [Linked("linked", t, block.block_id.hex) for t in sorted(b.hex for b in structural_targets(block))]
    return facts


@pytest.mark.parametrize(
    ("memory_type", "payload"),
    [
        (
            MemoryType.SEMANTIC,
            {"kind": "fact", "label": "Shard", "statement": "A shard is a slice.", "evidence": [str(E)]},
        ),
        (
            MemoryType.SEMANTIC,
            {
                "kind": "relation", "label": "Replica", "statement": "A replica copies a shard.", "subject": "Caches",
                "relations": [{"predicate": "copies", "target": str(T2)}, {"predicate": "of", "target": str(T1)},
                              {"predicate": "again", "target": str(T2)}],
            },
        ),
        (
            MemoryType.PROCEDURAL,
            {"label": "Deploy", "goal": "Ship it", "steps": [{"action": "build", "uses": [str(T2), str(T1)]},
                                                            {"action": "push"}, {"action": "tag", "uses": [str(T2)]}]},
        ),
        (MemoryType.PROCEDURAL, {"label": "Wait", "goal": "Nothing", "steps": [{"action": "sleep"}]}),
    ],
)
def test_a_v1_blocks_facts_are_its_payloads(memory_type: MemoryType, payload: dict) -> None:  # type: ignore[type-arg]
    block = _v1(memory_type, payload)
    assert type(block) is not GenericBlock
    assert facts_of_block(block) == _from_payload(block)
    stated = statement_of(block)
    assert stated == (None if memory_type is MemoryType.PROCEDURAL else statement_key(block.payload()))


@pytest.mark.parametrize("count", [1, 3, 8, 9, 20])
def test_index_values_are_one_form_whatever_the_order(count: int) -> None:
    """A few values under one key are held as a sorted tuple, more as a set: two lineages of the same facts
    applied in other orders are equal, and each answers membership and iteration like a set of them."""

    blocks = [f"{i:064x}" for i in range(count)]
    facts = [Registered("registered", "a.md", b) for b in blocks] * 2  # each twice: a repeat adds nothing
    forward, backward = Lineage.of_facts(facts), Lineage.of_facts(reversed(facts))
    assert forward == backward
    held = forward.origins["a.md"]
    assert sorted(held) == blocks and len(held) == count and all(b in held for b in blocks)
    assert isinstance(held, tuple) == (count <= 8)
