"""`prune --keep N` never cuts a branch head (§10.2): through `sdk.Brain`, which calls the command's use case."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sdk import Brain

ROOT = Path(__file__).resolve().parents[2]


def test_keep_one_keeps_every_branch_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "fixtures" / "corpus" / "notes", tmp_path / "notes")
    shutil.copytree(ROOT / "fixtures" / "corpus" / "logs", tmp_path / "more")
    monkeypatch.chdir(tmp_path)
    brain = Brain.init("b", actor="curator@example.org")
    brain.ingest(["notes"])
    brain.create_branch("x")
    brain.checkout("x")
    brain.ingest(["more"])
    branch_head = brain.snapshot_digest()
    assert branch_head is not None
    brain.checkout("main")
    pruned = brain.prune(keep=1)
    assert pruned.retained_snapshots == 1
    assert brain.core.blobs.has(branch_head)
    brain.checkout("x")
    assert brain.snapshot_digest() == branch_head
    assert brain.verify().ok
