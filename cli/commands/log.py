"""`brain log`: the snapshot history from the head back to the first snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MODULE_ORDER
from brain.identity import OciDigest
from brain.brain import Brain
from brain.lifecycle.summary import history_graph, snapshot_summary
from brain.snapshot import Snapshot
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result


class LogEntry(Result):
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


def log(
    ctx: typer.Context,
    graph: Annotated[bool, typer.Option("--graph", help="Every parent's history, drawn as a graph.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """List the snapshot history, newest first."""
    from brain.reconcile.journal import entries as journal

    context = cli_context(ctx)
    entries = []
    brain = context.open_brain()
    history = brain.history()
    drawn: dict[OciDigest, str] = {}
    if graph and history:
        rows = history_graph(brain, history[0][0])
        history, drawn = [(d, s) for d, s, _ in rows], {d: g for d, _, g in rows}
    reconciled = journal(brain.path)
    for index, (digest, snapshot) in enumerate(history):
        parents = list(snapshot.parent_digests)
        parent = _parent(brain, history, index, snapshot, graph)
        summary = snapshot_summary(brain, snapshot, parent) if parent is not None or not parents else "(parent not stored)"
        entries.append(
            LogEntry(
                snapshot=digest,
                created_at=snapshot.created_at,
                parent=parents[0] if parents else None,
                parents=parents,
                labels=dict(snapshot.labels or {}),
                modules={
                    str(t): snapshot.modules[t].block_count for t in MODULE_ORDER if t in snapshot.modules
                },
                summary=summary,
                graph=drawn.get(digest),
                reconciled=reconciled.get(digest),
            )
        )
    output = context.output(as_json)
    if entries and entries[-1].parent is not None:
        # `history()` stops quietly at the first snapshot that is not stored; say so rather than look complete.
        output.message(
            f"history stops at {entries[-1].snapshot.short}: its parent {entries[-1].parent.short} is not stored "
            "here (pruned, or never pulled)"
        )
    output.result(entries, lambda e: _render(e, output))


def _parent(brain: Brain, history: Sequence[tuple[OciDigest, Snapshot]], index: int, snapshot: Snapshot,
            graph: bool) -> Snapshot | None:
    """The first parent to summarise against (the next row, or with --graph the stored first parent)."""
    if not graph:
        return history[index + 1][1] if index + 1 < len(history) else None
    first = snapshot.first_parent
    return None if first is None or not brain.blobs.has(first) else brain.snapshot(first)


def _said(entry: LogEntry) -> str:
    """The history log's line for a reconciliation snapshot: by whom, why, and the decisions."""
    found = entry.reconciled
    if not found:
        return entry.summary
    answers = found.get("resolutions", {})
    decided = ", ".join(f"{v.get('kind')} {str(k)[7:19]}" for k, v in answers.items() if isinstance(v, dict))
    accepted = " accepted removals" if "accepted_removals" in found else ""
    who = found.get("actor", {}).get("id", "?") if isinstance(found.get("actor"), dict) else "?"
    return f"{entry.summary} [{found.get('strategy')} by {who}: {found.get('reason')}" + \
        (f"; {decided}" if decided else "") + accepted + "]"


def _render(entries: Sequence[LogEntry], output: Output) -> list[RenderableType]:
    if not entries:
        output.message("no snapshots yet: the brain is empty")
        return []
    graph = any(e.graph is not None for e in entries)
    table = output.table(*(("graph",) if graph else ()), "snapshot", "created", "parent",
                         *(str(t) for t in MODULE_ORDER), "changes")
    for entry in entries:
        parent = entry.parent.short if entry.parent is not None else "-"
        if len(entry.parents) > 1:
            parent += f" +{len(entry.parents) - 1}"
        counts = (str(entry.modules.get(str(t), "-")) for t in MODULE_ORDER)
        table.add_row(*((entry.graph or "",) if graph else ()), entry.snapshot.short, entry.created_at, parent,
                      *counts, _said(entry))
    return [table]
