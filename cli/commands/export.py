"""`brain export`: the brain's knowledge as JSONL (one object per block) or Markdown (one file per source)."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from brain.errors import UsageError
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Result


class ExportFormat(str, Enum):
    """What `--format` accepts."""

    JSONL = "jsonl"
    MARKDOWN = "markdown"


class ExportResult(Result):
    """Where the export went and how many records of each type it holds."""

    format: ExportFormat
    destination: str
    snapshot: str | None
    counts: dict[str, int]


def export(
    ctx: typer.Context,
    format_: Annotated[ExportFormat, typer.Option("--format", "-f", help="jsonl or markdown.")] = ExportFormat.JSONL,
    to: Annotated[
        Path | None,
        typer.Option(
            "--to", metavar="PATH", help="File (jsonl; default stdout) or new directory (markdown, required)."
        ),
    ] = None,
    provenance: Annotated[bool, typer.Option("--provenance", help="jsonl: add the ledger's records.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Export every accessible block (canonical, semantic, procedural, episodic) for a RAG framework."""
    from export import open as open_reader
    from export.jsonl import write_jsonl, write_jsonl_file
    from export.markdown import write_markdown

    context = cli_context(ctx)
    reader = open_reader(context.open_brain().path)
    output = context.output(as_json)
    if format_ is ExportFormat.MARKDOWN:
        if to is None:
            raise UsageError("--format markdown writes one file per source: it needs --to DIRECTORY")
        if provenance:
            raise UsageError("--provenance is for --format jsonl (markdown files already name their sources)")
        counts = write_markdown(reader, to)
    elif to is None:
        if as_json:
            raise UsageError("the JSONL export goes to stdout, so --json has nowhere to go", hint="add --to FILE")
        counts = write_jsonl(reader, sys.stdout, provenance=provenance)
        output.message(f"exported {sum(counts.values())} record(s) of snapshot {reader.snapshot}")
        return
    else:
        counts = write_jsonl_file(reader, to, provenance=provenance)
    result = ExportResult(
        format=format_, destination=str(to), snapshot=str(reader.snapshot) if reader.snapshot else None, counts=counts
    )
    total = (
        sum(v for k, v in counts.items() if k != "files") if format_ is ExportFormat.MARKDOWN else sum(counts.values())
    )
    output.result(result, lambda r: f"exported {total} record(s) to {r.destination} ({r.format.value})")

