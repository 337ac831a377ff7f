"""What the lifecycle commands (`drop`, `supersede`, `demote`, `redact`) share: the refusal JSON, the
listing of affected blocks per module with titles and origins, and the confirmation on a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.errors import BrainError, LifecycleRefusedError
from brain.identity import BlockId
from brain.lifecycle.describe import title_of
from brain.lifecycle.graph import DependencyGraph
from cli.output import Output, Result
from ingest.targets import resolve_all as resolve_all

SHOWN_PER_MODULE = 50


class Refusal(Result):
    """Why nothing was written: the rule, the block it is about, and the reason."""

    code: str
    block: str
    detail: str

    @classmethod
    def of(cls, error: LifecycleRefusedError) -> Refusal:
        return cls(code=error.code, block=error.block, detail=error.detail)


class Affected(Result):
    """One block a lifecycle write touches, as people see it."""

    block: BlockId
    memory_type: MemoryType
    title: str
    origin: str | None
    requested: bool


def describe(
    brain: Brain,
    graph: DependencyGraph,
    by_module: Mapping[MemoryType, Sequence[BlockId]],
    requested: Iterable[BlockId],
    limit: int = SHOWN_PER_MODULE,
) -> list[Affected]:
    """Titles and origins of the first `limit` blocks per module (a derived block's origin is its evidence's)."""
    named = set(requested)
    rows: list[Affected] = []
    for memory_type, block_ids in by_module.items():
        for block_id in block_ids[:limit]:
            try:
                title = title_of(brain.resolve(block_id))
            except BrainError:
                title = "(bytes not readable)"
            origin = graph.origin(block_id)
            if origin is None:
                origins = sorted({o for e in graph.evidence(block_id) if (o := graph.origin(e)) is not None})
                origin = ", ".join(origins) or None
            rows.append(Affected(block=block_id, memory_type=memory_type, title=title, origin=origin,
                                 requested=block_id in named))
    return rows


def affected_table(output: Output, rows: Sequence[Affected], totals: Mapping[MemoryType, int]) -> list[RenderableType]:
    """The listing: one row per block, and a line per module that has more than was shown."""
    table = output.table("module", "block", "", "title", "origin")
    for row in rows:
        table.add_row(str(row.memory_type), row.block.short, "" if row.requested else "cascade", row.title,
                      row.origin or "-")
    shown: dict[MemoryType, int] = {}
    for row in rows:
        shown[row.memory_type] = shown.get(row.memory_type, 0) + 1
    notes = [f"... and {totals[t] - n} more {t} blocks (see --json)" for t, n in shown.items() if totals[t] > n]
    return [table, *notes]


def confirm_cascade(output: Output, beyond: int, yes: bool, verb: str) -> None:
    """On a terminal, a write reaching blocks beyond the named ones asks first (unless --yes)."""
    if yes or beyond == 0 or not output.is_terminal or not sys.stdin.isatty():
        return
    if not typer.confirm(f"{verb} {beyond} more blocks than you named (listed above)?", default=False, err=True):
        output.message("not confirmed: nothing was written")
        raise typer.Exit(1)
