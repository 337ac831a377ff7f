"""A merge with many incoming blocks reads and decodes them in forked workers: the judgement is the one a single
process gives (the same result, verdicts and blocks read), the workers really ran, and a block that is not held
is still refused by name."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from brain import module
from brain.brain import Brain
from brain.errors import NotFoundError
from brain.reconcile import plan as plan_module
from brain.reconcile.index import LedgerIndex
from brain.reconcile.plan import MergePlan, plan_merge
from tests.retrieval.conftest import ACTOR, run_cli

READERS = "readers"
READ_BLOCKS = module.read_blocks


def _recording_read_blocks(root: Path, block_ids: Any) -> list[Any]:
    """`read_blocks`, leaving the id of the process it ran in beside the brain."""
    (root / READERS / str(os.getpid())).touch()
    return READ_BLOCKS(root, block_ids)


def _shard(tmp_path: Path, corpus: Path, i: int) -> Brain:
    directory = tmp_path / f"shard{i}"
    for args in (("init",), ("--quiet", "ingest", ".", "--shard", f"{i}/2", "--base", "empty")):
        with contextlib.chdir(corpus):
            done = run_cli("--brain", str(directory), "--actor", ACTOR, *args)
        assert done.code == 0, done
    return Brain.open(directory)


def _plan(ours: Brain, theirs: Brain) -> MergePlan:
    head, their_head = ours.snapshot_digest(), theirs.snapshot_digest()
    assert head is not None and their_head is not None
    return plan_merge(ours, head, [their_head], lambda: LedgerIndex(ours, head), allow_unrelated=True)


def _summary(plan: MergePlan) -> tuple[Any, ...]:
    judged = plan.judgement
    assert judged is not None
    return (judged.result, {b: v.codes for b, v in judged.verdicts.items()}, list(judged.incoming.items()),
            {b: block.canonical_bytes() for b, block in judged.read.items()})


def test_incoming_blocks_read_by_workers_give_the_judgement_one_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(30):
        (corpus / f"note-{i:02}.md").write_text(
            f"# Note {i}\n\nReplica{i}: a component that copies shard {i}.\n\n1. Run `sync --shard {i}`.\n"
            f"- 2026-01-{1 + i:02}: shard {i} moved to node-{i % 5}.\n")
    ours, theirs = _shard(tmp_path, corpus, 1), _shard(tmp_path, corpus, 2)
    for entry in os.scandir(theirs.blobs.directory):  # what `brain fetch` of their head leaves here
        if not (ours.blobs.directory / entry.name).exists():
            os.link(entry.path, ours.blobs.directory / entry.name)
    alone = _summary(_plan(ours, theirs))

    monkeypatch.setattr(plan_module, "_READ_IN_WORKERS", 1)
    monkeypatch.setattr(plan_module, "_READ_CHUNK", 7)
    monkeypatch.setattr(plan_module, "read_blocks", _recording_read_blocks)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # other tests may leave idle threads behind
    (ours.path / READERS).mkdir()
    forked = _summary(_plan(ours, theirs))
    readers = {int(p.name) for p in (ours.path / READERS).iterdir()}
    assert readers and os.getpid() not in readers
    assert len(alone[3]) >= 60  # their sources, what was drawn from them, and their records
    assert forked == alone

    # One of their blocks not held (read by a worker too): refused by name, as when read here.
    judged = _plan(ours, theirs).judgement
    assert judged is not None
    incoming = next(iter(judged.incoming))
    (ours.blobs.directory / incoming.hex).unlink()
    with pytest.raises(NotFoundError, match=f"block {incoming} of .* is not held here"):
        _plan(ours, theirs)
