"""`brain serve` brings a stale lineage log up to date before it listens, and its block pages then read the
records the log names about a block, never the whole ledger (which every process would otherwise read)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from brain.blocks import MemoryType
from brain.brain import Brain
from ingest.lineage import LineageLog
from ingest.lineage_graph import readable_members
from tests.ingest.test_lineage_catch_up import delete_blob, stale_log
from tests.retrieval.conftest import run_cli
from tests.serve.conftest import bearer


def test_the_server_catches_the_log_up_and_block_pages_read_only_what_they_show(
    corpus_brain: Path, tokens_file: Path, start_server: Any
) -> None:
    parent, head = stale_log(corpus_brain)
    assert run_cli("--brain", str(corpus_brain), "--quiet", "search", "anything").code == 0  # the index is current
    brain = Brain.open(corpus_brain)
    shown = brain.module(MemoryType.SEMANTIC).block_ids[-1]
    lineage = LineageLog(corpus_brain).read()
    assert lineage is not None and lineage[1] == str(parent)
    # The records about the shown block, its evidence and theirs are read; lose the bytes of one other record
    # the parent already had (the whole-ledger reader, what a stale log left, fails on it).
    needed = {shown.hex, *lineage[0].evidence.get(shown.hex, ())}
    records = {r for b in needed for r in (*lineage[0].records_about.get(b, ()), *lineage[0].records_citing.get(b, ()))}
    cited = {e for r in records for b in needed for e in lineage[0].evidence.get(b, ())}
    records |= {r for b in cited for r in lineage[0].records_about.get(b, ())}
    other = next(b for b in readable_members(brain, parent, [MemoryType.PROVENANCE]) if b.hex not in records)
    delete_blob(brain, other)

    server = start_server(corpus_brain, "--tokens", str(tokens_file), "--workers", "1")
    status, page, _ = server.raw("GET", f"/ui/blocks/{shown}", bearer("reader"))

    assert status == 200, page
    assert str(shown).encode() in page
    assert LineageLog(corpus_brain).load(head) is not None  # persisted: the next process loads it
