"""Merging diverged histories (PROTOCOL §10.2-§10.6), through the library the CLI calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.blocks.provenance import RemovalRecord, SupersessionRecord
from brain.errors import NotFoundError, RefusedError
from brain.identity import OciDigest
from brain.ledger import record_of
from brain.reconcile.index import LedgerIndex
from brain.reconcile.operations import abort, accept_removals, continue_reconcile, merge, resolve, status
from brain.reconcile.state import read_state, state_path
from brain.store import read_head
from tests.reconcile.helpers import ACTOR, add, base, drop, episode, fact, members, source


def index_of(brain):
    return lambda snapshot: LedgerIndex(brain, snapshot)


def _merge(brain, theirs: OciDigest, **options):
    return merge(brain, ACTOR, [theirs], index_of(brain), reason="join x", **options)


def _branch_head(brain, name: str) -> OciDigest:
    from brain.branches.operations import resolve_branch

    return resolve_branch(brain, name)


def test_disjoint_additions_merge_with_both_parents(tmp_path: Path) -> None:
    brain, a, s = base(tmp_path / "b")
    ours = add(brain, source("main only"))
    theirs = add(brain, source("x only"), branch="x")
    outcome = _merge(brain, theirs)
    assert outcome.kind == "merged"
    head = brain.snapshot()
    assert head is not None and head.parents == (ours, theirs)
    got = members(brain)
    assert got["canonical"] == members(brain, ours)["canonical"] | members(brain, theirs)["canonical"]
    assert got["provenance"] == members(brain, ours)["provenance"] | members(brain, theirs)["provenance"]
    assert got["semantic"] == {s.block_id}
    # The semantic module was unchanged on both sides: its reference is carried verbatim.
    assert head.modules["semantic"] == brain.snapshot(ours).modules["semantic"]


def test_up_to_date_and_fast_forward(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    start = brain.snapshot_digest()
    theirs = add(brain, source("x only"), branch="x")
    assert _merge(brain, start).kind == "up_to_date"
    outcome = _merge(brain, theirs)
    assert outcome.kind == "fast_forward" and brain.snapshot_digest() == theirs


def test_no_ff_writes_a_two_parent_merge(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    start = brain.snapshot_digest()
    theirs = add(brain, source("x only"), branch="x")
    outcome = _merge(brain, theirs, fast_forward_mode="never")
    assert outcome.kind == "merged"
    assert brain.snapshot().parents == (start, theirs)


def test_ff_only_refuses_a_diverged_head(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    ours = add(brain, source("main"))
    theirs = add(brain, source("x"), branch="x")
    with pytest.raises(RefusedError, match="not a fast-forward"):
        _merge(brain, theirs, fast_forward_mode="only")
    assert brain.snapshot_digest() == ours


def test_their_drop_withdraws_ours_halts_then_accepts(tmp_path: Path) -> None:
    brain, a, s = base(tmp_path / "b")
    s2 = fact("Alpha two", "alpha again", a)
    ours = add(brain, s2)  # ours: S2 cites A
    theirs = drop(brain, MemoryType.CANONICAL, [a.block_id], branch="x", cascaded={MemoryType.SEMANTIC: [s.block_id]})
    outcome = _merge(brain, theirs)
    assert outcome.kind == "halted"
    assert brain.snapshot_digest() == ours  # nothing committed
    state = read_state(brain.path)
    assert state is not None and state.head == ours and state.theirs == theirs and state.resolutions == {}
    withdrawn = outcome.plan.judgement.withdrawn
    assert withdrawn == {MemoryType.CANONICAL: (a.block_id,),
                         MemoryType.SEMANTIC: tuple(sorted([s.block_id, s2[0].block_id], key=lambda b: b.hex))}
    # While it is open every write is refused, naming the way out.
    with pytest.raises(RefusedError, match="brain reconcile status|reconciliation is open"):
        add(brain, source("blocked"))
    with pytest.raises(RefusedError):
        continue_reconcile(brain, ACTOR, index_of(brain))
    with pytest.raises(RefusedError, match="retention policy keeps sources"):
        accept_removals(brain, ACTOR, "fine", index_of(brain))  # our source A would leave (§10.8 item 4)
    assert read_state(brain.path).accepted_removals is None
    accept_removals(brain, ACTOR, "fine", index_of(brain), allow_canonical=True)
    done = continue_reconcile(brain, ACTOR, index_of(brain))
    assert done.kind == "merged" and not state_path(brain.path).exists()
    head = brain.snapshot()
    assert head.parents == (ours, theirs)
    assert a.block_id not in members(brain)["canonical"]
    assert members(brain)["semantic"] == set()
    removals = [record_of(brain.resolve(b)) for b in members(brain)["provenance"] - members(brain, ours)["provenance"]
                - members(brain, theirs)["provenance"]]
    [cascade] = [r for r in removals if isinstance(r, RemovalRecord)]
    assert cascade.blocks == (s2[0].block_id,) and cascade.memory_type is MemoryType.SEMANTIC
    assert cascade.reason == (
        f"the evidence these blocks cite was withdrawn by the history reconciled from sha256:{theirs.hex[:12]}; "
        "accepted: fine"
    )
    assert cascade.cascaded_from is None and cascade.policy is None


def test_contradiction_halts_and_reject_resolves(tmp_path: Path) -> None:
    brain, a, _ = base(tmp_path / "b")
    add(brain, fact("Beta", "beta is red", a))
    theirs = add(brain, fact("Beta", "beta is blue", a), branch="x")
    blue = next(iter(members(brain, theirs)["semantic"] - members(brain)["semantic"]))
    outcome = _merge(brain, theirs)
    assert outcome.kind == "halted"
    [verdict] = outcome.plan.judgement.verdicts.values()
    assert verdict.block == blue and verdict.verdict.value == "contradicted" and verdict.codes == ("contradiction",)
    _, plan = status(brain, index_of(brain))
    assert [v.block for v in plan.judgement.open_questions] == [blue]
    resolve(brain, ACTOR, blue.hex[:12], "reject", index_of(brain), reason="red is right")
    done = continue_reconcile(brain, ACTOR, index_of(brain))
    assert done.kind == "merged" and blue not in members(brain)["semantic"]
    # Their derivation records still enter with their provenance.
    assert members(brain, theirs)["provenance"] <= members(brain)["provenance"]


def test_admit_lets_a_contradicted_block_in(tmp_path: Path) -> None:
    brain, a, _ = base(tmp_path / "b")
    add(brain, fact("Beta", "beta is red", a))
    theirs = add(brain, fact("Beta", "beta is blue", a), branch="x")
    blue = next(iter(members(brain, theirs)["semantic"] - members(brain)["semantic"]))
    _merge(brain, theirs)
    resolve(brain, ACTOR, str(blue), "admit", index_of(brain))
    continue_reconcile(brain, ACTOR, index_of(brain))
    assert blue in members(brain)["semantic"]


def test_cascade_reaching_an_episode_is_refused_with_nothing_written(tmp_path: Path) -> None:
    brain, a, s = base(tmp_path / "b")
    ours = add(brain, episode("we read alpha", a))
    theirs = drop(brain, MemoryType.CANONICAL, [a.block_id], branch="x", cascaded={MemoryType.SEMANTIC: [s.block_id]})
    with pytest.raises(RefusedError, match="episodic"):
        _merge(brain, theirs)
    assert brain.snapshot_digest() == ours and not state_path(brain.path).exists()


def test_unrelated_histories_need_the_opt_in(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    other = Brain_with_one(tmp_path / "other")
    for path in (other.path / "blobs" / "sha256").iterdir():
        target = brain.path / "blobs" / "sha256" / path.name
        if not target.exists():
            target.write_bytes(path.read_bytes())
    theirs = other.snapshot_digest()
    ours = brain.snapshot_digest()
    with pytest.raises(RefusedError, match="no common ancestor"):
        _merge(brain, theirs)
    outcome = _merge(brain, theirs, allow_unrelated=True)
    assert outcome.kind == "merged" and brain.snapshot().parents == (ours, theirs)
    assert members(brain)["canonical"] == members(brain, ours)["canonical"] | members(brain, theirs)["canonical"]


def Brain_with_one(path: Path):  # noqa: N802 - a builder
    from brain.brain import Brain

    brain = Brain.init(path)
    add(brain, source("independent"))
    return brain


def test_snapshot_not_held_is_refused(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    with pytest.raises(NotFoundError, match="not held"):
        _merge(brain, OciDigest("ab" * 32))


def test_rebase_replays_their_snapshots_single_parent(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    ours = add(brain, source("main"))
    add(brain, source("x1"), branch="x")
    theirs = add(brain, source("x2"), branch="x")
    outcome = _merge(brain, theirs, strategy="rebase")
    assert outcome.kind == "merged" and len(outcome.snapshots) == 2
    first, second = (brain.snapshot(d) for d in outcome.snapshots)
    assert first.parent == ours and second.parent == outcome.snapshots[0]
    assert members(brain)["canonical"] == members(brain, ours)["canonical"] | members(brain, theirs)["canonical"]


def test_squash_has_one_parent(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    ours = add(brain, source("main"))
    theirs = add(brain, source("x"), branch="x")
    _merge(brain, theirs, strategy="squash")
    assert brain.snapshot().parent == ours and brain.snapshot().parents is None


def test_plan_writes_nothing(tmp_path: Path) -> None:
    brain, a, s = base(tmp_path / "b")
    add(brain, source("main"))
    theirs = drop(brain, MemoryType.CANONICAL, [a.block_id], branch="x", cascaded={MemoryType.SEMANTIC: [s.block_id]})
    before = sorted(p.name for p in (brain.path / "boltzmann").iterdir())
    head = read_head(brain.path)
    outcome = _merge(brain, theirs, plan_only=True)
    assert outcome.kind == "planned" and outcome.plan.needs_answers
    assert sorted(p.name for p in (brain.path / "boltzmann").iterdir()) == before and read_head(brain.path) == head


def test_abort_deletes_the_state(tmp_path: Path) -> None:
    brain, a, _ = base(tmp_path / "b")
    add(brain, fact("Beta", "red", a))
    theirs = add(brain, fact("Beta", "blue", a), branch="x")
    _merge(brain, theirs)
    assert state_path(brain.path).exists()
    abort(brain, ACTOR)
    assert not state_path(brain.path).exists()
    add(brain, source("writes work again"))


def test_history_log_keeps_who_why_and_decisions(tmp_path: Path) -> None:
    from brain.reconcile.journal import entries

    brain, a, _ = base(tmp_path / "b")
    add(brain, fact("Beta", "red", a))
    theirs = add(brain, fact("Beta", "blue", a), branch="x")
    _merge(brain, theirs)
    blue = next(iter(members(brain, theirs)["semantic"] - members(brain)["semantic"]))
    resolve(brain, ACTOR, str(blue), "reject", index_of(brain), reason="red")
    done = continue_reconcile(brain, ACTOR, index_of(brain))
    entry = entries(brain.path)[done.snapshots[-1]]
    assert entry["reason"] == "join x" and entry["actor"]["id"] == ACTOR
    assert entry["resolutions"][str(blue)]["kind"] == "reject"
    assert entry["verdicts"][str(blue)]["verdict"] == "contradicted"


def test_competing_supersession_is_pending_review(tmp_path: Path) -> None:
    from brain.lifecycle.records import supersession_record
    from tests.reconcile.helpers import WHO, AT

    brain, a, s = base(tmp_path / "b")
    mine = fact("Alpha", "alpha is first", a)  # same key and statement: no contradiction
    mine = fact("Alpha v2", "alpha, revised by us", a)
    add(brain, mine, (supersession_record(mine[0].block_id, s.block_id, actor=WHO, at=AT, reason=None), []))
    theirs_fact = fact("Alpha v3", "alpha, revised by them", a)
    theirs = add(brain, theirs_fact, (supersession_record(theirs_fact[0].block_id, s.block_id, actor=WHO, at=AT,
                                                          reason=None), []), branch="x")
    outcome = _merge(brain, theirs)
    assert outcome.kind == "halted"
    [verdict] = outcome.plan.judgement.verdicts.values()
    assert verdict.verdict.value == "pending_review"
    assert set(verdict.contenders) == {mine[0].block_id, theirs_fact[0].block_id}
    resolve(brain, ACTOR, str(verdict.block), "prefer", index_of(brain), prefer=str(mine[0].block_id))
    continue_reconcile(brain, ACTOR, index_of(brain))
    added = [record_of(brain.resolve(b)) for b in members(brain)["provenance"]]
    assert any(isinstance(r, SupersessionRecord) and r.block == mine[0].block_id
               and r.supersedes == theirs_fact[0].block_id for r in added)


def test_rebase_replays_only_snapshots_above_the_ancestor(tmp_path: Path) -> None:
    """§10.8 item 2: with the ancestor reachable only through a second parent, the first-parent walk must stop
    where the history no longer contains it."""
    from brain.branches.operations import checkout

    brain, _, _ = base(tmp_path / "b")
    m1 = add(brain, source("main 1"))
    checkout(brain, "x", ACTOR)
    x1 = add(brain, source("x 1"))
    assert merge(brain, ACTOR, [m1], index_of(brain), reason="pick up main").kind == "merged"
    x2 = brain.snapshot_digest()
    x3 = add(brain, source("x 3"))
    checkout(brain, "main", ACTOR)
    ours = add(brain, source("main 2"))
    outcome = _merge(brain, x3, strategy="rebase")
    assert outcome.plan.ancestor == m1
    assert outcome.plan.replay == (x2, x3)  # not x1: its history does not contain the ancestor
    assert len(outcome.snapshots) == 2
    assert brain.snapshot(outcome.snapshots[0]).parent == ours
    assert members(brain)["canonical"] >= members(brain, x3)["canonical"] | members(brain, ours)["canonical"]
    assert x1 in brain.snapshot(x2).parent_digests  # x1 stays in their history, untouched


def test_continue_refuses_when_the_head_moved(tmp_path: Path) -> None:
    from brain.errors import ConflictError
    from brain.store.head import head_path

    brain, a, _ = base(tmp_path / "b")
    add(brain, fact("Beta", "red", a))
    theirs = add(brain, fact("Beta", "blue", a), branch="x")
    _merge(brain, theirs)
    elsewhere = brain.snapshot().parent
    # Another implementation (which does not know our guard) moved the head meanwhile.
    head_path(brain.path).write_bytes(
        b'{"boltzmann":1,"retained":["%s"],"snapshot":"%s"}' % (str(elsewhere).encode(), str(elsewhere).encode())
    )
    with pytest.raises(ConflictError, match="head moved"):
        continue_reconcile(brain, ACTOR, index_of(brain))
