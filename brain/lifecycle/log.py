"""`brain log`: the snapshot history from the head back along first parents, while it is stored."""

from __future__ import annotations

from brain.blocks.memory_type import MODULE_ORDER
from brain.brain import Brain
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.lifecycle.summary import snapshot_summary


class LogEntry(FrozenModel):
    """One snapshot: when, what it follows, and how many members each module had."""

    snapshot: OciDigest
    created_at: str
    parent: OciDigest | None
    parents: list[OciDigest]
    labels: dict[str, str]
    modules: dict[str, int]
    summary: str


def log(brain: Brain) -> list[LogEntry]:
    """The history, newest first; the last entry's `parent` is set when the history stops at one not stored."""
    entries = []
    history = brain.history()
    for index, (digest, snapshot) in enumerate(history):
        parents = list(snapshot.parent_digests)
        parent = history[index + 1][1] if index + 1 < len(history) else None
        summary = snapshot_summary(brain, snapshot, parent) if parent is not None or not parents else "(parent not stored)"
        entries.append(
            LogEntry(
                snapshot=digest,
                created_at=snapshot.created_at,
                parent=parents[0] if parents else None,
                parents=parents,
                labels=dict(snapshot.labels or {}),
                modules={str(t): snapshot.modules[t].block_count for t in MODULE_ORDER if t in snapshot.modules},
                summary=summary,
            )
        )
    return entries


__all__ = ["LogEntry", "log"]
