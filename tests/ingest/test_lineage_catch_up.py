"""A lineage log left describing an earlier snapshot is caught up by reading only what the head added since
(`ingest.lineage_graph.caught_up`), never the whole ledger again."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.identity import BlockId, OciDigest
from ingest.lineage import LOG, LineageLog, read_lineage
from ingest.lineage_graph import lineage_of, readable_members
from tests.retrieval.conftest import ACTOR, run_cli

LINKED = [MemoryType.SEMANTIC, MemoryType.PROCEDURAL]


def stale_log(brain_dir: Path) -> tuple[OciDigest, OciDigest]:
    """Demote a semantic block, then put back the log as it was before: it describes the parent of the head
    (what a tool that moves the head without logging, or a kill between commit and append, leaves).
    Returns (the snapshot the log describes, the head)."""
    brain = Brain.open(brain_dir)
    parent = brain.snapshot_digest()
    assert parent is not None
    lineage_of(brain, parent)  # the log describes the parent
    saved = (brain_dir / LOG).read_bytes()
    demoted = brain.module(MemoryType.SEMANTIC).block_ids[0]
    done = run_cli("--brain", str(brain_dir), "--actor", ACTOR, "--quiet", "demote", str(demoted), "--reason", "t")
    assert done.code == 0, done
    (brain_dir / LOG).write_bytes(saved)
    head = brain.snapshot_digest()
    assert head is not None and head != parent
    assert LineageLog(brain_dir).load(head) is None
    return parent, head


def delete_blob(brain: Brain, block: BlockId) -> None:
    """Lose a block's bytes: whatever reads it from now on raises an integrity error."""
    brain.blobs.path(block).unlink()


def test_a_stale_log_is_caught_up_without_reading_what_it_already_holds(corpus_brain: Path) -> None:
    parent, head = stale_log(corpus_brain)
    brain = Brain.open(corpus_brain)
    provenance = readable_members(brain, head, [MemoryType.PROVENANCE])
    expected, _ = read_lineage(corpus_brain, provenance, readable_members(brain, head, LINKED))
    # A record the parent already had: the old rebuild read every provenance member, and failed on this one.
    old = readable_members(brain, parent, [MemoryType.PROVENANCE])
    delete_blob(brain, old[len(old) // 2])

    found = lineage_of(brain, head)

    assert found == expected
    assert LineageLog(corpus_brain).load(head) == expected  # appended: the next reader loads it
    assert LineageLog(corpus_brain).last_snapshot() == str(head)


def test_a_log_of_another_history_is_rebuilt_not_caught_up(corpus_brain: Path) -> None:
    parent, head = stale_log(corpus_brain)
    brain = Brain.open(corpus_brain)
    lineage_of(brain, head)  # current at the head, whose ledger holds a demotion the parent's does not
    provenance = readable_members(brain, parent, [MemoryType.PROVENANCE])
    expected, _ = read_lineage(corpus_brain, provenance, readable_members(brain, parent, LINKED))

    found = lineage_of(brain, parent)  # back to the parent: the head's facts must not leak into it

    assert found == expected
    assert found.demoted == set()
    assert LineageLog(corpus_brain).load(parent) == expected


@pytest.mark.parametrize("damage", [b"not json\n", b'["snapshot","sha256:00","7"]\n'])
def test_a_damaged_log_is_rebuilt(corpus_brain: Path, damage: bytes) -> None:
    _, head = stale_log(corpus_brain)
    with open(corpus_brain / LOG, "ab") as handle:
        handle.write(damage)
    brain = Brain.open(corpus_brain)
    provenance = readable_members(brain, head, [MemoryType.PROVENANCE])
    expected, _ = read_lineage(corpus_brain, provenance, readable_members(brain, head, LINKED))

    assert lineage_of(brain, head) == expected
    assert LineageLog(corpus_brain).load(head) == expected
