"""`brain diff [A] [B]`: what changed between two snapshots, per module, with titles, origins and reasons.

A and B are snapshot digests or prefixes, local tags, `HEAD`, `HEAD~N`, or a registry REF (one manifest, its
config and, when the compositions are not stored here, its history layer). Default: the head's first parent
and the head; one argument: that and the head. The use case is `oci.diff_sides.diff` (sides) over
`brain.lifecycle.compare.compare` (member lists from the compositions; only changed blocks are decoded).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import RenderableType

from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output
from cli.transfer import PlainHttpFlag

if TYPE_CHECKING:
    from brain.lifecycle.compare import Change, DiffResult


def diff(
    ctx: typer.Context,
    a: Annotated[str | None, typer.Argument(metavar="[A]", help="Snapshot, tag, HEAD~N or REF (default: HEAD~1).",
                                            show_default=False)] = None,
    b: Annotated[str | None, typer.Argument(metavar="[B]", help="Snapshot, tag, HEAD~N or REF (default: HEAD).",
                                            show_default=False)] = None,
    output_format: Annotated[
        Literal["text", "markdown"], typer.Option("--format", metavar="FORMAT", help="text or markdown (a table).")
    ] = "text",
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 when the snapshots differ.")] = False,
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Show what changed between two snapshots (default: the head's parent and the head)."""
    from ingest.lifecycle import LOG_LINEAGE
    from oci.diff_sides import diff as compare_snapshots

    context = cli_context(ctx)
    result = compare_snapshots(context.open_brain(), a, b, plain_http=plain_http, lineage=LOG_LINEAGE)
    output = context.output(as_json)
    if output_format == "markdown" and not as_json:
        output.result(result, lambda r: [markdown(r)])
    else:
        output.result(result, lambda r: _render(r, output))
    if exit_code and result.differ:
        raise typer.Exit(1)


_KINDS = ("added", "removed", "superseded", "demoted", "redacted")


def _rows(result: DiffResult) -> Iterable[tuple[str, str, Change]]:
    for module, changes in result.modules.items():
        for kind in _KINDS:
            for change in getattr(changes, kind):
                yield module, kind, change


def _detail(kind: str, change: Change) -> str:
    if kind == "removed" and change.mechanism:
        return f"{change.mechanism}: {change.reason}"
    if kind == "superseded" and change.winner is not None:
        return f"by {change.winner.short}"
    if kind == "demoted":
        return change.reason or ""
    return ""


def _counts_line(result: DiffResult) -> str:
    counts = ", ".join(f"{n} {kind}" for kind, n in result.counts.items() if n) or "no changes"
    before = f"{result.a} ({result.a_snapshot.short})" if result.a_snapshot is not None else result.a
    return f"{before} → {result.b} ({result.b_snapshot.short}): {counts}"


def _render(result: DiffResult, output: Output) -> list[RenderableType]:
    if not result.differ:
        return [f"{_counts_line(result)}: identical"]
    table = output.table("module", "change", "block", "title", "origin", "detail")
    for module, kind, change in _rows(result):
        table.add_row(
            module, kind, change.block.short, change.title or "-", change.origin or "-", _detail(kind, change)
        )
    return [table, _counts_line(result), result.summary]


def markdown(result: DiffResult) -> str:
    """A table to paste in a pull-request comment."""

    def cell(text: str | None) -> str:
        return (text or "").replace("|", "\\|").replace("\n", " ")

    lines = [f"**brain diff** `{result.a}` → `{result.b}`: {result.summary}", ""]
    if not result.differ:
        return "\n".join([*lines, "No changes."])
    lines += ["| module | change | block | title | origin | detail |", "|---|---|---|---|---|---|"]
    for module, kind, change in _rows(result):
        lines.append(
            f"| {module} | {kind} | `{change.block.short}` | {cell(change.title)} | {cell(change.origin)} | "
            f"{cell(_detail(kind, change))} |"
        )
    lines += ["", _counts_line(result)]
    return "\n".join(lines)


__all__ = ["diff", "markdown"]
