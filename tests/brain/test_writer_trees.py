"""A long-lived brain that keeps Merkle trees (`ServingBrain(trees=True)`) commits exactly what a plain writer does."""

from __future__ import annotations

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.composition import Composition
from serve.proposals_context import ServingBrain
from tests.brain.brain_helpers import ACTOR, canonical, fact


def test_commits_through_kept_trees_are_byte_identical_to_plain_ones(tmp_path):
    plain, kept = Brain.init(tmp_path / "plain"), Brain.init(tmp_path / "kept")
    served = ServingBrain(kept.path, trees=True)
    for brain in (plain, kept):
        with brain.writer(ACTOR) as writer:
            for n in range(300):
                writer.add(canonical(f"source {n}"))
                writer.add(fact(f"fact {n}"))
            writer.commit()
    for step in range(6):
        digests = []
        for brain in (plain, served):
            with brain.writer(ACTOR, branch="proposals/a") as writer:
                for n in range(step + 1):
                    writer.add(fact(f"proposed {step} {n}"))
                if step % 2:
                    writer.remove(MemoryType.SEMANTIC, [fact(f"fact {step}").block_id])
                digests.append(writer.commit())
                writer.add(fact(f"checkpoint {step}"))  # a second commit in the same writer builds on the first
                digests.append(writer.commit())
        modules = [plain.snapshot(d).modules if i < 2 else served.snapshot(d).modules for i, d in enumerate(digests)]
        assert modules[:2] == modules[2:]  # the same compositions, roots and counts (the times differ)
        ref = served.snapshot(digests[-1]).modules[MemoryType.SEMANTIC]
        composition = served.composition(ref)
        assert composition.keeps_tree  # built from the previous tree, not read back and re-hashed
        assert ref.root == Composition.of(MemoryType.SEMANTIC, composition.block_ids).root
