"""Damaged pages in the middle of the search index are detected, the index rebuilt once, the query answered
(#24 item 7).

The damage spares the schema and the `meta` table (so the index still opens and looks current) and
overwrites every page of the tables a query reads (full-text, docs, blocks, keys): exactly the case a
file-level check at open does not see.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
import requests

from brain.brain import Brain
from retrieval.index import SearchIndex
from retrieval.index_file import identity
from retrieval.paths import index_path
from retrieval.recovery import answered
from tests.hostile.conftest import BrainRunner
from tests.hostile.http_server import Server

QUERY = "spectrum"
ORIGIN = "https://example.org/fourier.md"


def damage_index(brain_dir: Path, seed: int = 7) -> int:
    """Overwrite the pages of the query-side tables of `brain_dir`'s index with noise; how many pages."""
    path = brain_dir / "boltzmann" / "search" / "index.sqlite"
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    spared = ("sqlite_schema", "meta")
    pages = sorted(p for (name, p) in db.execute("SELECT name, pageno FROM dbstat") if name not in spared)
    db.close()
    noise = random.Random(seed)
    with open(path, "r+b") as handle:
        for page in pages:
            handle.seek((page - 1) * page_size)
            handle.write(noise.randbytes(page_size))
    return len(pages)


def test_brain_search_and_cat_rebuild_a_damaged_index(brain: BrainRunner, reference_brain: Path) -> None:
    before = brain("--brain", str(reference_brain), "search", QUERY, "--json")
    assert before.code == 0, before
    text = brain("--brain", str(reference_brain), "cat", ORIGIN, "--json")
    assert text.code == 0, text
    assert damage_index(reference_brain) > 5
    after = brain("--brain", str(reference_brain), "search", QUERY, "--json")
    assert after.code == 0, after
    assert after.json() == before.json()
    assert "rebuilt" in after.stderr and "Traceback" not in after.stderr
    damage_index(reference_brain, seed=8)
    again = brain("--brain", str(reference_brain), "cat", ORIGIN, "--json")
    assert again.code == 0, again
    assert again.json() == text.json()


def test_the_http_server_rebuilds_a_damaged_index(brain: BrainRunner, reference_brain: Path) -> None:
    before = brain("--brain", str(reference_brain), "search", QUERY, "--json").json()
    source = brain("--brain", str(reference_brain), "cat", ORIGIN, "--json").json()["block"]
    damage_index(reference_brain)
    server = Server(reference_brain)
    try:
        found = requests.get(f"{server.url}/v1/search", params={"q": QUERY}, timeout=30)
        assert found.status_code == 200, found.text
        assert found.json() == before
        damage_index(reference_brain, seed=9)
        view = requests.get(f"{server.url}/v1/sources/{source}/view", timeout=30)
        assert view.status_code == 200, view.text
    finally:
        log = server.stop()
    assert "Traceback" not in log


def test_two_connections_that_meet_the_same_damage_rebuild_it_once(brain: BrainRunner, reference_brain: Path) -> None:
    # A server's threads (and its warm-up) hold one connection each. When several of them met the same damage,
    # each deleted the file the one before had just rebuilt, and that one's next write failed with "attempt to
    # write a readonly database" (the file it had opened was gone): a 500.
    assert brain("--brain", str(reference_brain), "search", QUERY, "--json").code == 0
    first, second = (SearchIndex.open(Brain.open(reference_brain)) for _ in range(2))
    try:
        damage_index(reference_brain)
        for index in (first, second):
            with pytest.raises(sqlite3.DatabaseError):
                index.db.execute("SELECT count(*) FROM blocks").fetchone()
        answered(lambda: first, lambda: first.db.execute("SELECT count(*) FROM blocks").fetchone())
        rebuilt = identity(index_path(reference_brain))
        count = answered(lambda: second, lambda: second.db.execute("SELECT count(*) FROM blocks").fetchone())
        assert identity(index_path(reference_brain)) == rebuilt  # the second took the first's file
        assert count[0] > 0 and not first.replaced() and not second.replaced()
        first.ensure_current(rebuild=True)  # and the first can still write to it
    finally:
        first.close()
        second.close()
