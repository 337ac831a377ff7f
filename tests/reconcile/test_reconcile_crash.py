"""SIGKILL at ~20 points each of `brain merge`, `brain reconcile continue` and `brain reconcile abort`: the
brain opens, verifies, and the operation happened whole or not at all; a re-run completes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from brain.brain import Brain
from brain.identity import OciDigest
from brain.reconcile.state import read_state
from brain.verify.engine import verify_brain
from tests.reconcile.helpers import ACTOR, add, base, fact, source

KILLER = Path(__file__).with_name("killer.py")
ROOT = Path(__file__).resolve().parents[2]
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "SOURCE_DATE_EPOCH": "1767225600",
       "PYTHONPATH": str(ROOT)}
POINTS = 20
pytestmark = pytest.mark.slow


def _run(target: int, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(KILLER), str(target), "--brain", str(path), "--actor", ACTOR, *args],
                          env=ENV, capture_output=True, text=True, timeout=120, check=False)


def _points(path: Path, *args: str) -> list[int]:
    probe = path.with_name(path.name + "-probe")
    shutil.copytree(path, probe)
    done = _run(0, probe, *args)
    steps = int(done.stderr.rsplit("STEPS ", 1)[1].split()[0])
    assert steps > 0, done.stderr
    return sorted({max(1, round(i * steps / POINTS)) for i in range(1, POINTS + 1)})


@pytest.fixture(scope="module")
def diverged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, OciDigest, OciDigest]:
    """Ours and x diverged: x drops nothing, adds sources and a fact contradicting ours (so a merge halts
    unless told otherwise)."""
    path = tmp_path_factory.mktemp("crash") / "b"
    brain, a, _ = base(path)
    ours = add(brain, source("main 1"), source("main 2"), fact("Beta", "red", a))
    theirs = add(brain, source("x 1"), source("x 2"), fact("Beta", "blue", a), branch="x")
    return path, ours, theirs


def _check(path: Path) -> Brain:
    brain = Brain.open(path)
    assert verify_brain(brain, jobs=1).ok
    return brain


def test_killed_merge_halts_whole_or_not_at_all(diverged, tmp_path: Path) -> None:
    base_path, ours, theirs = diverged
    for point in _points(base_path, "merge", "x", "--reason", "join"):
        path = tmp_path / f"m{point}"
        shutil.copytree(base_path, path)
        _run(point, path, "merge", "x", "--reason", "join")
        brain = _check(path)
        assert brain.snapshot_digest() == ours, point
        state = read_state(path)  # whole (a complete, valid state) or absent
        assert state is None or (state.head == ours and state.theirs == theirs), point
        if state is None:
            assert _run(-1, path, "merge", "x", "--reason", "join").returncode == 5
        assert read_state(path) is not None


def test_killed_continue_commits_whole_or_not_at_all(diverged, tmp_path: Path) -> None:
    base_path, ours, theirs = diverged
    halted = tmp_path / "halted"
    shutil.copytree(base_path, halted)
    assert _run(-1, halted, "merge", "x", "--reason", "join").returncode == 5
    blue = next(iter(read_state(halted) and _open_questions(halted)))
    assert _run(-1, halted, "reconcile", "resolve", blue, "--reject").returncode == 0
    for point in _points(halted, "reconcile", "continue"):
        path = tmp_path / f"c{point}"
        shutil.copytree(halted, path)
        _run(point, path, "reconcile", "continue")
        brain = _check(path)
        head = brain.snapshot()
        assert head is not None
        if brain.snapshot_digest() == ours:
            assert read_state(path) is not None, point  # not at all: the answers are still there
            assert _run(-1, path, "reconcile", "continue").returncode == 0
        else:
            assert head.parents == (ours, theirs), point  # whole
        # Either way the reconciliation is over once re-run, and writes work again.
        final = Brain.open(path)
        assert final.snapshot().parents == (ours, theirs)
        assert _run(-1, path, "ingest", str(_note(tmp_path))).returncode == 0, point
        assert read_state(path) is None


def test_killed_abort_leaves_the_state_or_nothing(diverged, tmp_path: Path) -> None:
    base_path, ours, _ = diverged
    halted = tmp_path / "halted"
    shutil.copytree(base_path, halted)
    assert _run(-1, halted, "merge", "x", "--reason", "join").returncode == 5
    for point in _points(halted, "reconcile", "abort"):
        path = tmp_path / f"a{point}"
        shutil.copytree(halted, path)
        _run(point, path, "reconcile", "abort")
        brain = _check(path)
        assert brain.snapshot_digest() == ours
        if read_state(path) is not None:
            assert _run(-1, path, "reconcile", "abort").returncode == 0
        assert read_state(path) is None


def _open_questions(path: Path) -> list[str]:
    from brain.reconcile.index import LedgerIndex
    from brain.reconcile.operations import status

    brain = Brain.open(path)
    _, plan = status(brain, lambda snapshot: LedgerIndex(brain, snapshot))
    assert plan.judgement is not None
    return [str(v.block) for v in plan.judgement.open_questions]


def _note(tmp_path: Path) -> Path:
    note = tmp_path / "note.txt"
    note.write_text("a note written after the reconciliation\n")
    return note
