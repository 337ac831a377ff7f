"""A large index update builds documents in forked workers: the file it writes is the one a single process
writes, row for row (the full-text tables' own pages included), and the workers really ran."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from brain.brain import Brain
from retrieval import index_rows
from retrieval.index import SearchIndex
from retrieval.paths import index_path
from tests.retrieval.conftest import ingest

BUILDERS = "builders"
BUILD_READY = index_rows.build_ready


def _recording_build_ready(root: Path, items: Any) -> list[Any]:
    """`build_ready`, leaving the id of the process it ran in beside the brain."""
    (root / BUILDERS / str(os.getpid())).touch()
    return BUILD_READY(root, items)


def _tables(path: Path) -> dict[str, list[Any]]:
    """Every row of every table of an index file (shadow tables of the full-text index too), but the
    generation, which is random per build."""
    db = sqlite3.connect(path)
    names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    rows = {}
    for name in names:
        if name in ("fts", "whole"):
            continue  # contentless: their rows are the shadow tables' (fts_data, fts_idx, ...)
        where = " WHERE key != 'generation'" if name == "meta" else ""
        rows[name] = db.execute(f"SELECT * FROM '{name}'{where} ORDER BY 1").fetchall()
    db.close()
    return rows


def _corpus(root: Path, count: int) -> Path:
    root.mkdir()
    for i in range(count):
        (root / f"note-{i:03}.md").write_text(
            f"# Note {i}: the `Replica{i}Manager`\n\n"
            f"Replica{i}Manager: a component that copies shard {i} with brain.store.atomic_write_{i}.\n\n"
            f"## Steps\n\n1. Run `replica_sync --shard {i}`.\n2. Check /var/lib/replica/{i}/state.json.\n\n"
            f"- 2026-01-{1 + i % 28:02}: shard {i} moved to node-{i % 5} (HTTPServer{i} restarted).\n"
        )
    return root


def test_documents_built_by_workers_give_the_file_one_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain_dir = tmp_path / "brain"
    ingest(brain_dir, _corpus(tmp_path / "corpus", 40))
    brain = Brain.open(brain_dir)

    # Two new files (a rebuild in place keeps numbering documents after the old ones).
    index_path(brain_dir).unlink()
    index = SearchIndex.open(brain)
    alone = index.ensure_current(jobs=1)
    index.close()
    expected = _tables(index_path(brain_dir))
    index_path(brain_dir).unlink()

    # Every module's blocks and records go to workers in small chunks; other tests may leave idle threads.
    monkeypatch.setattr(index_rows, "_PARALLEL", {"canonical": (1, 3, 2)})
    monkeypatch.setattr(index_rows, "_PARALLEL_DERIVED", (1, 5, 2))
    monkeypatch.setattr(index_rows, "build_ready", _recording_build_ready)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    (brain_dir / BUILDERS).mkdir()
    index = SearchIndex.open(brain)
    forked = index.ensure_current(jobs=2)
    index.close()

    builders = {int(p.name) for p in (brain_dir / BUILDERS).iterdir()}
    assert builders and os.getpid() not in builders
    assert (forked.added, forked.records, forked.text_bytes) == (alone.added, alone.records, alone.text_bytes)
    assert alone.added >= 80  # the 40 sources and what was drawn from them
    assert _tables(index_path(brain_dir)) == expected
