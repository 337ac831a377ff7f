"""Branch operations on real brains: create, list, checkout, delete, and commits onto another branch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brain.blocks import Block
from brain.branches.operations import (
    checkout,
    create_branch,
    current_branch,
    delete_branch,
    list_branches,
    resolve_branch,
)
from brain.branches.refs import read_refs
from brain.brain import Brain
from brain.errors import ConflictError, InvalidInputError, NotFoundError, RefusedError
from brain.identity import OciDigest

ACTOR = "tester@example.org"


def episode(n: int) -> Block:
    return Block.from_payload("episodic", {"summary": f"event {n}", "occurred_at": "2026-01-01T00:00:00Z"})


def commit(brain: Brain, n: int, branch: str | None = None) -> OciDigest:
    with brain.writer(ACTOR, branch=branch) as writer:
        writer.add(episode(n))
        digest = writer.commit()
    assert digest is not None
    return digest


@pytest.fixture
def two_commits(tmp_path: Path) -> Brain:
    brain = Brain.init(tmp_path / "b")
    commit(brain, 1)
    commit(brain, 2)
    return brain


def head_json(brain: Brain) -> dict:
    return json.loads((brain.path / "boltzmann" / "head.json").read_bytes())


def test_implicit_main(two_commits: Brain) -> None:
    brain = two_commits
    [main] = list_branches(brain)
    assert (main.name, main.current, main.tag, main.ahead, main.behind) == ("main", True, "latest", 0, 0)
    assert resolve_branch(brain, "main") == brain.snapshot_digest()
    assert read_refs(brain.path) is None


def test_create_commit_checkout_delete(two_commits: Brain) -> None:
    brain = two_commits
    start = brain.snapshot_digest()
    assert start is not None
    made = create_branch(brain, "feature/x", ACTOR)
    assert (made.tag, made.snapshot) == ("br.feature.x", start)
    refs = read_refs(brain.path)
    assert refs is not None and refs.current == "main" and set(refs.branches) == {"main", "feature/x"}
    on_main = commit(brain, 3)
    # refs.json lags for the current branch; head.json is the truth and retains every branch head.
    assert read_refs(brain.path).branches["main"].snapshot == start  # type: ignore[union-attr]
    assert resolve_branch(brain, "main") == on_main
    assert head_json(brain)["retained"][0] == str(on_main) and str(start) in head_json(brain)["retained"]
    infos = {i.name: i for i in list_branches(brain)}
    assert (infos["feature/x"].ahead, infos["feature/x"].behind) == (0, 1)

    moved = checkout(brain, "feature/x", ACTOR)
    assert moved.moved and brain.snapshot_digest() == start
    assert current_branch(brain) == "feature/x"
    refs = read_refs(brain.path)
    assert refs is not None and refs.switching is None and refs.branches["main"].snapshot == on_main
    on_feature = commit(brain, 4)
    assert brain.snapshot(on_feature).first_parent == start  # type: ignore[union-attr]
    assert checkout(brain, "feature/x", ACTOR).moved is False

    with pytest.raises(RefusedError, match="current branch"):
        delete_branch(brain, "feature/x", ACTOR)
    checkout(brain, "main", ACTOR)
    assert brain.snapshot_digest() == on_main
    with pytest.raises(RefusedError, match="not merged"):
        delete_branch(brain, "feature/x", ACTOR)
    before = set(head_json(brain)["retained"])
    assert str(on_feature) in before
    delete_branch(brain, "feature/x", ACTOR, force=True)
    # §10.2: the rewrite starts from the old retained list, so the deleted head stays until 10 newer push it out.
    assert head_json(brain)["retained"][0] == str(on_main) and str(on_feature) in head_json(brain)["retained"]
    assert set(read_refs(brain.path).branches) == {"main"}  # type: ignore[union-attr]


def test_commit_onto_another_branch(two_commits: Brain) -> None:
    brain = two_commits
    head = brain.snapshot_digest()
    proposal = commit(brain, 10, branch="proposals/agent")
    assert brain.snapshot_digest() == head  # head.json still names main's head
    refs = read_refs(brain.path)
    assert refs is not None and refs.branches["proposals/agent"].snapshot == proposal
    assert refs.branches["proposals/agent"].tag == "br.proposals.agent"
    assert brain.snapshot(proposal).first_parent == head  # type: ignore[union-attr]
    assert str(proposal) in head_json(brain)["retained"]
    second = commit(brain, 11, branch="proposals/agent")
    assert brain.snapshot(second).first_parent == proposal  # type: ignore[union-attr]
    with brain.writer(ACTOR, branch="proposals/agent") as writer:
        assert len(writer.members(episode(1).memory_type)) == 4
    assert resolve_branch(brain, "proposals/agent") == second


def test_refusals(two_commits: Brain) -> None:
    brain = two_commits
    with pytest.raises(InvalidInputError):
        create_branch(brain, "a.b", ACTOR)
    with pytest.raises(NotFoundError):
        checkout(brain, "nope", ACTOR)
    with pytest.raises(NotFoundError):
        create_branch(brain, "x", ACTOR, at=OciDigest.of(b"not held"))
    create_branch(brain, "x", ACTOR)
    with pytest.raises(ConflictError, match="already exists"):
        create_branch(brain, "x", ACTOR)
    with pytest.raises(NotFoundError):
        delete_branch(brain, "y", ACTOR)
    # x's head is main's head: contained in another branch, so it deletes without force.
    delete_branch(brain, "x", ACTOR)


def test_interrupted_checkout_is_repaired_on_open(two_commits: Brain) -> None:
    brain = two_commits
    start = brain.snapshot_digest()
    create_branch(brain, "side", ACTOR)
    tip = commit(brain, 3)
    refs = read_refs(brain.path)
    assert refs is not None
    # A checkout of side killed after step 1: switching written, head.json not moved.
    raw = refs.brought_up(tip, None).model_copy(update={"switching": "side"}).to_bytes()
    (brain.path / "boltzmann" / "refs.json").write_bytes(raw)
    assert current_branch(brain) == "main"
    reopened = Brain.open(brain.path)
    refs = read_refs(reopened.path)
    assert refs is not None and refs.switching is None and refs.current == "main"
    # Killed after step 2: head.json names side's snapshot.
    raw = refs.model_copy(update={"switching": "side"}).to_bytes()
    (brain.path / "boltzmann" / "refs.json").write_bytes(raw)
    head = reopened.head()
    assert head is not None
    (brain.path / "boltzmann" / "head.json").write_bytes(head.advance(start).to_bytes())  # type: ignore[arg-type]
    Brain.open(brain.path)
    refs = read_refs(brain.path)
    assert refs is not None and refs.switching is None and refs.current == "side"


def test_prune_keeps_a_branch_committed_onto_without_checkout(two_commits: Brain, brain) -> None:  # type: ignore[no-untyped-def]
    store = two_commits
    proposal = commit(store, 20, branch="proposals/agent")
    for n in range(30, 42):  # more commits on main than head.json's bound of 10
        commit(store, n)
    # The bound, then every branch head in name order: main's stale entry (it lags, §10.2), then the proposal.
    stale = read_refs(store.path).branches["main"].snapshot  # type: ignore[union-attr]
    assert head_json(store)["retained"][10:] == [str(stale), str(proposal)]
    done = brain("--brain", str(store.path), "--actor", ACTOR, "prune", "--keep", "1")
    assert done.code == 0, done.stderr
    assert head_json(store)["retained"] == [str(store.snapshot_digest()), str(stale), str(proposal)]
    assert episode(20).block_id in Brain.open(store.path).module(episode(20).memory_type, proposal)
    assert checkout(store, "proposals/agent", ACTOR).moved
