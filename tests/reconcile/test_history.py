"""Multi-parent history: `log --graph`, the history log in `brain log`, `diff A...B`, verify against the first
parent of a merge, and prune keeping every merged-in head's whole history."""

from __future__ import annotations

from pathlib import Path

from brain.blocks import MemoryType
from brain.reconcile.index import LedgerIndex
from brain.reconcile.operations import continue_reconcile, merge, resolve
from brain.verify.engine import verify_brain
from tests.cli.conftest import BrainRunner
from tests.reconcile.helpers import ACTOR, add, base, drop, episode, fact, members, source


def _index(brain):
    return lambda snapshot: LedgerIndex(brain, snapshot)


def _merged(tmp_path: Path):
    brain, a, _ = base(tmp_path / "b")
    ours = add(brain, source("main"), fact("Beta", "red", a))
    theirs = add(brain, source("x"), fact("Beta", "blue", a), branch="x")
    assert merge(brain, ACTOR, [theirs], _index(brain), reason="join x").kind == "halted"
    blue = next(iter(members(brain, theirs)["semantic"] - members(brain, ours)["semantic"]))
    resolve(brain, ACTOR, str(blue), "reject", _index(brain), reason="red is right")
    done = continue_reconcile(brain, ACTOR, _index(brain))
    return brain, ours, theirs, done.snapshots[-1], blue


def test_log_graph_shows_both_lines_and_the_decisions(tmp_path: Path, brain: BrainRunner) -> None:
    b, ours, theirs, merged, blue = _merged(tmp_path)
    run = brain("--brain", str(b.path), "log", "--graph", "--json")
    assert run.code == 0
    rows = run.json()
    assert [r["snapshot"] for r in rows][:1] == [str(merged)]
    assert {str(ours), str(theirs)} <= {r["snapshot"] for r in rows}
    assert rows[0]["graph"] == "*" and any(r["graph"] == "| *" for r in rows)
    assert rows[0]["reconciled"]["reason"] == "join x"
    assert rows[0]["reconciled"]["resolutions"][str(blue)]["kind"] == "reject"
    text = brain("--brain", str(b.path), "log", "--graph")
    assert text.code == 0 and "merge by tester@example.org: join x; reject" in text.stdout
    plain = brain("--brain", str(b.path), "log", "--json")
    assert str(theirs) not in {r["snapshot"] for r in plain.json()}  # first parents only without --graph


def test_diff_three_dots_is_against_the_merge_base(tmp_path: Path, brain: BrainRunner) -> None:
    b, a, _ = base(tmp_path / "b")
    add(b, source("main only"))
    theirs = add(b, source("x only"), branch="x")
    run = brain("--brain", str(b.path), "diff", "main...x", "--json")
    assert run.code == 0, run.stderr
    result = run.json()
    added = {c["block"] for c in result["modules"]["canonical"]["added"]}
    assert added == {str(i) for i in members(b, theirs)["canonical"] - members(b)["canonical"]}
    assert result["modules"]["canonical"]["removed"] == []
    assert result["a"].startswith("merge base of main and x")


def test_refused_incoming_episode_still_verifies(tmp_path: Path) -> None:
    """An incoming episode citing a source we dropped is refused; the merge omits it from their parent's
    episodic module, which is no removal (§7.7 is checked against the first parent only)."""
    b, a, s = base(tmp_path / "b")
    lone = source("lone")
    add(b, lone)
    theirs = add(b, episode("read the lone source", lone), branch="x")
    drop(b, MemoryType.CANONICAL, [lone.block_id])
    outcome = merge(b, ACTOR, [theirs], _index(b), reason="join")
    assert outcome.kind == "halted"
    [verdict] = outcome.plan.judgement.verdicts.values()
    assert verdict.memory_type is MemoryType.EPISODIC and verdict.codes == ("evidence-not-found",)
    assert verdict.missing == {lone.block_id: "dropped_deliberately"}
    resolve(b, ACTOR, str(verdict.block), "reject", _index(b))
    continue_reconcile(b, ACTOR, _index(b))
    assert verdict.block not in members(b).get("episodic", set())
    assert verify_brain(b, jobs=1).ok


def test_prune_keeps_every_merged_in_history(tmp_path: Path, brain: BrainRunner) -> None:
    from brain.branches.operations import delete_branch

    b, ours, theirs, merged, _ = _merged(tmp_path)
    delete_branch(b, "x", ACTOR)  # merged: no branch head keeps theirs reachable any more
    for i in range(12):  # more commits than head.json retains
        add(b, source(f"later {i}"))
    assert theirs not in (b.head().retained if b.head() else ())
    run = brain("--brain", str(b.path), "--actor", ACTOR, "prune", "--json")
    assert run.code == 0, run.stderr
    for digest in (merged, ours, theirs):
        assert b.blobs.has(digest), digest
    assert verify_brain(b, jobs=1).ok
