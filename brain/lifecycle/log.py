"""`brain log`: the snapshot history from the head back along first parents, while it is stored; with
`graph`, every parent's history (children before parents) with a lane drawing per row. A snapshot a
reconciliation wrote carries its line of the local history log (who asked, why, every decision)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brain.blocks.memory_type import MODULE_ORDER
from brain.brain import Brain
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.lifecycle.summary import history_graph, snapshot_summary
from brain.snapshot import Snapshot


class LogEntry(FrozenModel):
    """One snapshot: when, what it follows, and how many members each module had."""

    snapshot: OciDigest
    created_at: str
    parent: OciDigest | None
    parents: list[OciDigest]
    labels: dict[str, str]
    modules: dict[str, int]
    summary: str
    graph: str | None = None
    reconciled: dict[str, Any] | None = None
    """For a snapshot a reconciliation wrote: who asked, why, and every decision (the local history log)."""


def log(brain: Brain, *, graph: bool = False) -> list[LogEntry]:
    """The history, newest first; the last entry's `parent` is set when the history stops at one not stored."""
    entries = []
    history = brain.history()
    drawn: dict[OciDigest, str] = {}
    if graph and history:
        rows = history_graph(brain, history[0][0])
        history, drawn = [(d, s) for d, s, _ in rows], {d: g for d, _, g in rows}
    from brain.reconcile.journal import entries as journal  # only `log` reads the history log

    reconciled = journal(brain.path)
    for index, (digest, snapshot) in enumerate(history):
        parents = list(snapshot.parent_digests)
        parent = _parent(brain, history, index, snapshot, graph)
        summary = (
            snapshot_summary(brain, snapshot, parent) if parent is not None or not parents else "(parent not stored)"
        )
        entries.append(
            LogEntry(
                snapshot=digest,
                created_at=snapshot.created_at,
                parent=parents[0] if parents else None,
                parents=parents,
                labels=dict(snapshot.labels or {}),
                modules={str(t): snapshot.modules[t].block_count for t in MODULE_ORDER if t in snapshot.modules},
                summary=summary,
                graph=drawn.get(digest),
                reconciled=reconciled.get(digest),
            )
        )
    return entries


def _parent(brain: Brain, history: Sequence[tuple[OciDigest, Snapshot]], index: int, snapshot: Snapshot,
            graph: bool) -> Snapshot | None:
    """The first parent to summarise against (the next row, or with `graph` the stored first parent)."""
    if not graph:
        return history[index + 1][1] if index + 1 < len(history) else None
    first = snapshot.first_parent
    return None if first is None or not brain.blobs.has(first) else brain.snapshot(first)


__all__ = ["LogEntry", "log"]
