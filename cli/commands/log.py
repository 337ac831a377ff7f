"""`brain log`: the snapshot history from the head back to the first snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MODULE_ORDER
from brain.lifecycle.log import LogEntry
from brain.lifecycle.log import log as snapshot_log
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output


def log(
    ctx: typer.Context,
    graph: Annotated[bool, typer.Option("--graph", help="Every parent's history, drawn as a graph.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """List the snapshot history, newest first."""
    context = cli_context(ctx)
    entries = snapshot_log(context.open_brain(), graph=graph)
    output = context.output(as_json)
    if entries and entries[-1].parent is not None:
        # `history()` stops quietly at the first snapshot that is not stored; say so rather than look complete.
        output.message(
            f"history stops at {entries[-1].snapshot.short}: its parent {entries[-1].parent.short} is not stored "
            "here (pruned, or never pulled)"
        )
    output.result(entries, lambda e: _render(e, output))


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
