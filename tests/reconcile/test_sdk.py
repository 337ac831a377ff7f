"""`sdk.Brain.merge` and the reconcile methods: a halted merge answered and continued, and an aborted one,
through the same use cases as `brain merge` / `brain reconcile`."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.errors import NotFoundError, RefusedError
from sdk import Brain
from tests.reconcile.helpers import ACTOR, add, base, fact


def _diverged(path: Path) -> tuple[Brain, str]:
    core, a, _ = base(path)
    add(core, fact("Beta", "red", a))
    add(core, fact("Beta", "blue", a), branch="x")
    return Brain.open(path, actor=ACTOR), "x"


def test_halted_merge_is_answered_and_continued(tmp_path: Path) -> None:
    brain, theirs = _diverged(tmp_path / "b")
    head = brain.snapshot_digest()
    review = brain.merge([theirs], plan=True)
    assert review.kind == "planned" and review.plan.needs_answers and brain.snapshot_digest() == head
    halted = brain.merge([theirs], reason="join x")
    assert halted.kind == "halted" and brain.snapshot_digest() == head
    state, plan = brain.reconcile_status()
    assert state.reason == "join x" and plan.needs_answers
    open_block = next(
        v.block for v in plan.judgement.every_verdict() if v.resolution is None and v.verdict.value != "validated"
    )  # type: ignore[union-attr]
    answered, answer = brain.reconcile_resolve(open_block.hex[:16], "reject", reason="blue is wrong")
    assert answered == open_block and answer.kind == "reject"
    merged = brain.reconcile_continue()
    assert merged.kind == "merged" and merged.head == brain.snapshot_digest() != head
    assert brain.snapshot() is not None and len(brain.snapshot().parents) == 2  # type: ignore[union-attr]
    assert open_block not in brain.modules()[next(iter(t for t in brain.modules() if t.value == "semantic"))]


def test_aborted_merge_leaves_the_head(tmp_path: Path) -> None:
    brain, theirs = _diverged(tmp_path / "b")
    head = brain.snapshot_digest()
    assert brain.merge([theirs], reason="join x").kind == "halted"
    with pytest.raises(RefusedError):
        brain.merge([theirs], reason="again")  # every write refuses while one is open
    state = brain.reconcile_abort()
    assert state is not None and brain.snapshot_digest() == head
    with pytest.raises(NotFoundError):
        brain.reconcile_abort()  # nothing open any more
    with pytest.raises(NotFoundError) as missing:
        brain.merge(["no-such-branch"], reason="r")
    assert missing.value.exit_code == 4
