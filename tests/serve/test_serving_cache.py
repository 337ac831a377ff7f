"""The proposal process's composition cache lets a branch's superseded module versions go first, so agents
taking turns keep their current modules (and Merkle trees) instead of reading them again every proposal."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.composition import Composition
from brain.errors import BrainUnreadableError
from serve.proposals_context import ServingBrain


def test_a_replaced_composition_is_let_go_before_the_current_ones(corpus_brain: Path) -> None:
    ids = Brain.open(corpus_brain).module(MemoryType.SEMANTIC).block_ids
    served = ServingBrain(corpus_brain, limit=3)
    # Never stored: a composition the cache let go cannot be read back, so `composition` says which it kept.
    a1, b1, a2, c1 = (Composition.of(MemoryType.SEMANTIC, members) for members in
                      (ids[:2], ids[1:3], ids[:3], ids[2:4]))
    served.built(a1, lambda: frozenset(a1.block_ids))
    served.built(b1, lambda: frozenset(b1.block_ids))
    assert served.composition(a1.module_ref()) is a1  # agent a opens its branch: a1 is the most recent
    served.built(a2, lambda: frozenset(a2.block_ids), replaced=a1.digest)  # a's commit replaces a1 by a2
    served.built(c1, lambda: frozenset(c1.block_ids))  # a third agent: one of the four must go

    assert served.composition(b1.module_ref()) is b1  # agent b's current module is still there
    assert served.composition(a2.module_ref()) is a2
    with pytest.raises(BrainUnreadableError):
        served.composition(a1.module_ref())  # the superseded one went


def test_the_served_modules_are_kept_when_a_first_proposal_replaces_them(corpus_brain: Path) -> None:
    brain = Brain.open(corpus_brain)
    ref = brain.module(MemoryType.SEMANTIC).ref
    served = ServingBrain(corpus_brain, limit=3)
    head = served.composition(ref)  # what every agent's first proposal starts from
    ids = list(head.block_ids)
    mine, other = (Composition.of(MemoryType.SEMANTIC, members) for members in (ids[:-1], ids[1:]))
    served.built(mine, lambda: frozenset(mine.block_ids), replaced=ref.composition)
    served.built(other, lambda: frozenset(other.block_ids))

    assert served.composition(ref) is head
