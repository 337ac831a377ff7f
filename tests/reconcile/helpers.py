"""Diverged brains for the reconciliation tests, built with the real writer (branches through `branch=`)."""

from __future__ import annotations

from pathlib import Path

from brain.blocks import Block, CanonicalBlock, MemoryType
from brain.blocks.provenance import (
    Actor,
    ActorKind,
    DerivationRecord,
    Producer,
    ProducerKind,
    ProvenanceBlock,
    RegistrationRecord,
    RemovalMechanism,
    RemovalRecord,
    ValidationRecord,
    Verdict,
)
from brain.brain import Brain
from brain.identity import BlockId, OciDigest

ACTOR = "tester@example.org"
WHO = Actor(id=ACTOR, kind=ActorKind.HUMAN)
AT = "2026-12-01T12:00:00Z"
CHECKS = ("contradiction", "evidence-not-found")


_BYTES: dict[OciDigest, bytes] = {}


def source(text: str) -> CanonicalBlock:
    data = text.encode()
    _BYTES[OciDigest.of(data)] = data
    return CanonicalBlock(blob=OciDigest.of(data), media_type="text/plain", size=len(data))


def registered(block: Block) -> ProvenanceBlock:
    return ProvenanceBlock(
        record=RegistrationRecord(actor=WHO, at=AT, block=block.block_id, origin=f"file:{block.block_id.hex[:8]}")
    )


def derived(memory_type: str, payload: dict, cites: Block) -> tuple[Block, list[ProvenanceBlock]]:
    block = Block.from_payload(memory_type, {**payload, "evidence": [str(cites.block_id)]})
    producer = Producer(kind=ProducerKind.PIPELINE, id="test/derive")
    records = [
        ProvenanceBlock(record=DerivationRecord(actor=WHO, at=AT, block=block.block_id, derived_from=(cites.block_id,),
                                                producer=producer)),
        ProvenanceBlock(record=ValidationRecord(actor=WHO, at=AT, block=block.block_id, verdict=Verdict.VALIDATED,
                                                checks=CHECKS)),
    ]
    return block, records


def fact(label: str, statement: str, cites: Block) -> tuple[Block, list[ProvenanceBlock]]:
    return derived("semantic", {"kind": "fact", "label": label, "statement": statement}, cites)


def episode(summary: str, cites: Block) -> tuple[Block, list[ProvenanceBlock]]:
    return derived("episodic", {"occurred_at": AT, "summary": summary}, cites)


def add(brain: Brain, *items: Block | tuple[Block, list[ProvenanceBlock]], branch: str | None = None) -> OciDigest:
    with brain.writer(ACTOR, branch=branch) as writer:
        for item in items:
            if isinstance(item, tuple):
                writer.add(item[0])
                for record in item[1]:
                    writer.add(record)
            else:
                writer.add(item)
                if isinstance(item, CanonicalBlock):
                    writer.put_blob(_BYTES[item.blob])
                    writer.add(registered(item))
        digest = writer.commit()
    assert digest is not None
    return digest


def drop(brain: Brain, memory_type: MemoryType, blocks: list[BlockId], branch: str | None = None,
         cascaded: dict[MemoryType, list[BlockId]] | None = None) -> OciDigest:
    with brain.writer(ACTOR, branch=branch) as writer:
        writer.remove(memory_type, blocks)
        writer.add(
            ProvenanceBlock(
                record=RemovalRecord(
                    actor=WHO, at=AT, blocks=tuple(sorted(blocks, key=lambda b: b.hex)),
                    mechanism=RemovalMechanism.DROP, memory_type=memory_type, reason="test drop",
                )
            )
        )
        for other, ids in (cascaded or {}).items():
            writer.remove(other, ids)
            writer.add(
                ProvenanceBlock(
                    record=RemovalRecord(
                        actor=WHO, at=AT, blocks=tuple(sorted(ids, key=lambda b: b.hex)),
                        mechanism=RemovalMechanism.DROP, memory_type=other, reason="test drop", cascaded_from=blocks[0],
                    )
                )
            )
        digest = writer.commit()
    assert digest is not None
    return digest


def base(path: Path) -> tuple[Brain, CanonicalBlock, Block]:
    """A brain with source A and fact S citing it, on main; branch `x` created at that head."""
    brain = Brain.init(path)
    a = source("alpha")
    s = fact("Alpha", "alpha is first", a)
    add(brain, a, s)
    from brain.branches.operations import create_branch

    create_branch(brain, "x", ACTOR)
    return brain, a, s[0]


def members(brain: Brain, digest: OciDigest | None = None) -> dict[str, set[BlockId]]:
    return {str(t): set(m.block_ids) for t, m in brain.modules(digest).items()}
