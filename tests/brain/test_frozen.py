"""`brain.frozen.FrozenModel`: private caches start empty however a model is made, and a model's own
`model_post_init` still runs."""

from __future__ import annotations

from typing import Any

from pydantic import PrivateAttr

from brain.blocks.provenance import Actor, ActorKind, ProvenanceBlock, RegistrationRecord
from brain.frozen import FrozenModel
from brain.identity import BlockId

ACTOR = Actor(id="curator@example.org", kind=ActorKind.HUMAN)


def _block(origin: str) -> ProvenanceBlock:
    record = RegistrationRecord(actor=ACTOR, at="2026-01-01T00:00:00Z", block=BlockId("0" * 64), origin=origin)
    return ProvenanceBlock(record=record)


def test_a_blocks_caches_start_empty_and_fill_on_use() -> None:
    block = _block("a.md")
    assert block.__pydantic_private__ == {"_canonical": None, "_block_id": None}
    assert block.block_id == BlockId.of(block.canonical_bytes())
    assert block.__pydantic_private__ == {"_canonical": block.canonical_bytes(), "_block_id": block.block_id}
    other = _block("b.md")  # its own caches, not a shared dict
    assert other.__pydantic_private__ == {"_canonical": None, "_block_id": None}
    assert other.block_id != block.block_id


def test_constructed_copied_and_pickled_blocks_have_their_own_caches() -> None:
    import pickle

    block = _block("a.md")
    built = ProvenanceBlock.model_construct(record=block.record)
    assert built.__pydantic_private__ == {"_canonical": None, "_block_id": None}
    assert built.block_id == block.block_id
    changed = block.model_copy(update={"record": _block("b.md").record})
    assert changed.block_id == _block("b.md").block_id != block.block_id
    assert pickle.loads(pickle.dumps(block)) == block


class _Counted(FrozenModel):
    name: str
    _seen: int | None = PrivateAttr(default=None)
    _calls: list[str] = PrivateAttr(default_factory=list)

    def model_post_init(self, context: Any, /) -> None:
        self._calls.append(self.name)


class _Plain(FrozenModel):
    name: str
    _cached: str | None = PrivateAttr(default=None)


class _Child(_Plain):
    extra: int = 0


def test_a_models_own_post_init_and_non_empty_defaults_are_kept() -> None:
    counted = _Counted(name="x")
    assert counted._calls == ["x"] and counted._seen is None
    assert _Counted(name="y")._calls == ["y"]  # a fresh list each: the default factory still runs
    assert _Child(name="c").__pydantic_private__ == {"_cached": None} == _Plain(name="p").__pydantic_private__
