"""`brain cat ID|ORIGIN`: a source's normalized view (or its original bytes), to read what a hit points at."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from brain.errors import UsageError
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import StdoutClosedError

if TYPE_CHECKING:
    from retrieval.models import CatResult

SourceArgument = Annotated[
    str, typer.Argument(metavar="ID|ORIGIN", help="A canonical block id (or prefix), or a source's origin.",
                        show_default=False)
]


def cat(
    ctx: typer.Context,
    source: SourceArgument,
    locator: Annotated[str | None, typer.Option("--locator", "-l", metavar="L",
                                                help="Only this part: L5, L5-L9, p.3 or p.3 L2-L4.")] = None,
    original: Annotated[bool, typer.Option("--original", help="Print the original bytes instead of the view.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Print a source's normalized view (or its original bytes)."""
    # The search index (sqlite) and the retrieval models load when the command runs, not with every command.
    from retrieval.index import SearchIndex
    from retrieval.models import CatResult
    from retrieval.passages import parse_locator
    from retrieval.recovery import answered
    from retrieval.sources import original_bytes, read_view, resolve_source

    if original and (locator is not None or as_json):
        raise UsageError("--original prints the source's bytes as they are; it takes no --locator or --json")
    if locator is not None:
        parse_locator(locator)  # a bad locator is refused before anything is opened or written
    context = cli_context(ctx)
    brain = context.open_brain()
    brain.module(MemoryType.CANONICAL)  # an empty brain has no sources: say so, write nothing
    index = SearchIndex.open(brain)
    note = context.output(as_json).message
    try:
        block_id = answered(lambda: index, lambda: resolve_source(brain, index, source), note)
        if original:
            _write_bytes(original_bytes(brain, block_id))
            return
        view = answered(lambda: index, lambda: read_view(brain, index, block_id, locator), note)
    finally:
        index.close()
    context.output(as_json).result(CatResult.of(view), _render)


def _render(result: CatResult) -> Iterable[RenderableType]:
    from retrieval.passages import PAGE_BREAK

    pages = result.text.split(PAGE_BREAK)
    for number, page in enumerate(pages, start=1):
        if len(pages) > 1:
            yield f"--- page {number} ---"
        yield page.rstrip("\n")


def _write_bytes(chunks: Iterable[bytes]) -> None:
    out = sys.stdout.buffer
    try:
        for chunk in chunks:
            out.write(chunk)
        out.flush()
    except BrokenPipeError as e:
        raise StdoutClosedError() from e
