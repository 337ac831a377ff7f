"""The write path: staging, commit chaining (§5.3), checkpoints, and crash safety with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.errors import ConflictError, InvalidInputError, NotFoundError
from brain.identity import OciDigest
from brain.merkle import merkle_root
from tests.brain.brain_helpers import ACTOR, brain_with, canonical, fact

C, S = MemoryType.CANONICAL, MemoryType.SEMANTIC


def test_first_commit_has_no_parent_and_only_touched_modules(tmp_path):
    brain = brain_with(tmp_path / "b", "one", "two")
    snap = brain.snapshot()
    assert snap.parent_digests == () and snap.first_parent is None
    assert set(snap.modules) == {"canonical"}
    ref = snap.modules[C]
    assert ref.block_count == 2 and ref.root == merkle_root([canonical("one").block_id, canonical("two").block_id])
    assert brain.head().retained == (brain.snapshot_digest(),)


def test_add_is_idempotent_and_commit_without_change_returns_none(tmp_path):
    brain = brain_with(tmp_path / "b", "one")
    before = brain.snapshot_digest()
    with brain.writer(ACTOR) as writer:
        assert writer.add(canonical("one")) is False
        assert writer.commit() is None
        assert writer.add(canonical("two")) is True
        assert writer.add(canonical("two")) is False
        writer.remove(C, [canonical("two").block_id])
        assert writer.commit() is None
    assert brain.snapshot_digest() == before


def test_commit_chains_and_copies_untouched_refs_verbatim(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    brain = brain_with(tmp_path / "b", "one")
    first = brain.snapshot_digest()
    with brain.writer(ACTOR) as writer:
        writer.add(fact("x"))
        second = writer.commit(labels={"release": "r1"})
    snap = brain.snapshot()
    assert brain.snapshot_digest() == second and snap.first_parent == first
    assert snap.modules[C] == brain.snapshot(first).modules[C]
    assert snap.modules[S].block_count == 1 and snap.created_at == "2026-09-21T14:13:20Z"
    assert snap.labels == {"release": "r1"}
    assert brain.head().retained == (second, first)
    with brain.writer(ACTOR) as writer:
        writer.add(canonical("two"))
        third = writer.commit(labels={"other": "x"})
    assert brain.snapshot(third).labels == {"release": "r1", "other": "x"}
    assert brain.snapshot(third).modules[S] == snap.modules[S]


def test_checkpoints_inside_one_writer(tmp_path):
    brain = Brain.init(tmp_path / "b")
    digests = []
    with brain.writer(ACTOR) as writer:
        for n in range(3):
            writer.add(canonical(f"c{n}"))
            digests.append(writer.commit())
    history = [d for d, _ in brain.history()]
    assert history == list(reversed(digests))
    assert len(brain.module(C)) == 3


def test_remove_refuses_non_members_and_changes_membership_only(tmp_path):
    brain = brain_with(tmp_path / "b", "one", "two")
    one = canonical("one").block_id
    with brain.writer(ACTOR) as writer:
        with pytest.raises(NotFoundError, match="nothing was removed"):
            writer.remove(C, [one, canonical("zzz").block_id])
        assert writer.members(C) == {one, canonical("two").block_id}
        assert writer.remove(C, [one]) == 1
        writer.commit()
    assert one not in brain.module(C) and brain.resolve(one).block_id == one
    old = brain.history()[1][0]
    assert one in brain.module(C, old)


def test_removing_everything_keeps_an_empty_module(tmp_path):
    brain = brain_with(tmp_path / "b", "one")
    with brain.writer(ACTOR) as writer:
        writer.remove(C, [canonical("one").block_id])
        writer.commit()
    ref = brain.snapshot().modules[C]
    assert ref.block_count == 0 and ref.root == merkle_root([])


def test_blobs_and_streams(tmp_path):
    brain = Brain.init(tmp_path / "b")
    with brain.writer(ACTOR) as writer:
        digest = writer.put_blob(b"source bytes")
        assert writer.put_blob_stream([b"source ", b"bytes"], expected=digest) == (digest, 12)
    assert brain.blobs.get(digest) == b"source bytes" and brain.head() is None


def test_writer_must_be_entered_and_actor_valid(tmp_path):
    brain = Brain.init(tmp_path / "b")
    with pytest.raises(InvalidInputError, match="actor"):
        brain.writer("Alex")
    writer = brain.writer(ACTOR)
    with pytest.raises(ConflictError, match="not open"):
        writer.add(canonical("x"))


def test_leaving_without_commit_discards_staged_changes(tmp_path):
    brain = brain_with(tmp_path / "b", "one")
    before = brain.snapshot_digest()
    with brain.writer(ACTOR) as writer:
        writer.add(canonical("two"))
    assert brain.snapshot_digest() == before


CONCURRENT = textwrap.dedent(
    """
    import sys
    from brain.brain import Brain
    from tests.brain.brain_helpers import ACTOR, canonical
    brain = Brain.open(sys.argv[1])
    for n in range(5):
        with brain.writer(ACTOR, lock_timeout=60) as writer:
            writer.add(canonical(sys.argv[2] + str(n)))
            writer.commit()
    """
)


def test_concurrent_writers_lose_no_update(tmp_path):
    brain = Brain.init(tmp_path / "b")
    procs = [
        subprocess.Popen([sys.executable, "-c", CONCURRENT, str(brain.path), name], cwd=os.getcwd())
        for name in ("a", "b")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert len(brain.module(C)) == 10
    assert len(brain.history()) == 10


CRASH = textwrap.dedent(
    """
    import sys, time
    import brain.writer
    from brain.brain import Brain
    from tests.brain.brain_helpers import ACTOR, canonical

    def stall(*args, **kwargs):
        print("before-head", flush=True)
        time.sleep(300)

    brain.writer.write_head = stall
    b = Brain.open(sys.argv[1])
    with b.writer(ACTOR) as writer:
        for n in range(50):
            writer.add(canonical(f"crash{n}"))
        writer.commit()
    """
)


def test_sigkill_between_blobs_and_head_keeps_previous_head(tmp_path):
    brain = brain_with(tmp_path / "b", "one")
    head_bytes = (brain.path / "boltzmann" / "head.json").read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-c", CRASH, str(brain.path)], stdout=subprocess.PIPE, text=True, cwd=os.getcwd()
    )
    assert child.stdout.readline().strip() == "before-head"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert (brain.path / "boltzmann" / "head.json").read_bytes() == head_bytes
    assert [b.block_id for b in brain.module(C).blocks()] == [canonical("one").block_id]
    assert not any(p.name.startswith(".tmp-") for p in brain.blobs.directory.iterdir())
    with brain.writer(ACTOR, lock_timeout=5) as writer:  # the dead writer's lock is gone
        writer.add(canonical("two"))
        assert writer.commit() is not None


LOOP = textwrap.dedent(
    """
    import sys
    from brain.brain import Brain
    from tests.brain.brain_helpers import ACTOR, canonical, fact
    b = Brain.open(sys.argv[1])
    with b.writer(ACTOR) as writer:
        print("go", flush=True)
        n = 0
        while True:
            writer.add(canonical(f"loop{n}"))
            writer.add(fact(f"loop{n}"))
            writer.commit()
            n += 1
    """
)


@pytest.mark.parametrize("delay", [0.05, 0.2, 0.45])
def test_sigkill_at_arbitrary_moments_leaves_a_verifiable_head(tmp_path, delay):
    import time

    brain = Brain.init(tmp_path / "b")
    child = subprocess.Popen(
        [sys.executable, "-c", LOOP, str(brain.path)], stdout=subprocess.PIPE, text=True, cwd=os.getcwd()
    )
    assert child.stdout.readline().strip() == "go"
    time.sleep(delay)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    for digest, _ in brain.history():
        for module in brain.modules(digest).values():
            assert all(block.block_id in module for block in module.blocks())
    assert isinstance(brain.snapshot_digest(), OciDigest | None)


@given(st.lists(st.tuples(st.sampled_from(["add", "remove", "settle"]), st.integers(0, 12)), max_size=60))
def test_staged_membership_matches_a_plain_set(operations):
    from brain.identity import BlockId
    from brain.writer import _Membership

    initial = {BlockId.of(bytes([n])) for n in range(0, 12, 3)}
    staged, model = _Membership(sorted(initial)), set(initial)
    for operation, n in operations:
        block_id = BlockId.of(bytes([n]))
        if operation == "add":
            assert staged.add(block_id) == (block_id not in model)
            model.add(block_id)
        elif operation == "remove" and block_id in model:
            staged.remove(block_id)
            model.discard(block_id)
        elif operation == "settle":
            assert staged.settle() == sorted(model)
    assert staged.members == model and staged.settle() == sorted(model) and not staged.changed
