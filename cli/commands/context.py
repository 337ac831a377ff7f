"""`brain context QUERY --max-tokens N`: the prompt-ready pack of the best verified hits within a token budget
(`retrieval.context`; the same answer as the MCP tool `context` and `GET /v1/context`)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import RenderableType
from rich.text import Text

from cli.commands.search import AtOption, TagsOption, TypesOption, open_searcher
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import printable

if TYPE_CHECKING:
    from retrieval.models import ContextResult

DEFAULT_TOKENS = 2000


def context(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What the agent needs to know.", show_default=False)],
    max_tokens: Annotated[int, typer.Option("--max-tokens", "-n", metavar="N",
                                            help="Token budget of the pack (conservative estimate).")] = DEFAULT_TOKENS,
    types: TypesOption = None,
    tags: TagsOption = None,
    include_superseded: Annotated[
        bool, typer.Option("--include-superseded", help="Let superseded and demoted blocks through.")
    ] = False,
    output_format: Annotated[
        Literal["text", "markdown"],
        typer.Option("--format", metavar="FORMAT", help="text (a summary per item) or markdown (the pack to paste)."),
    ] = "text",
    at: AtOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Pack the best verified hits for QUERY into a token budget, each citable (origin, locator, block id)."""
    from retrieval.context import ContextRequest, pack, render_markdown
    from retrieval.recovery import answered

    cli = cli_context(ctx)
    request = ContextRequest(query=query, max_tokens=max_tokens, types=tuple(t.lower() for t in types or ()),
                             include_superseded=include_superseded, tags=tuple(tags or ()))
    request.validate()
    request.search().validate()  # before the index is opened: a bad request writes nothing
    output = cli.output(as_json)
    searcher = open_searcher(cli.open_brain(), at)
    try:
        result = answered(lambda: searcher.index, lambda: pack(searcher, request), output.message)
    finally:
        searcher.close()
    for note in result.notes:
        output.message(f"note: {note}")
    for item in result.items:
        if not item.verified:
            output.message(f"warning: {item.block} failed verification (bytes or proof); run `brain verify`")
    if output_format == "markdown" and not as_json:
        sys.stdout.write(printable(render_markdown(result), keep_newlines=True))
        return
    output.result(result, lambda r: _render(r, output))


def _render(result: ContextResult, output: object) -> Iterable[RenderableType]:
    lines: list[RenderableType] = [Text(f"{len(result.items)} items, ~{result.tokens} of {result.budget} tokens",
                                        style="bold")]
    for item in result.items:
        where = f"{item.origin}:{item.locator}" if item.origin and item.locator else item.origin or item.block
        check = "" if item.verified else " (NOT VERIFIED)"
        first = item.text.split("\n", 1)[0][:100]
        lines.append(Text(f"{item.score:.3f}  {item.memory_type:<10} {where}{check}"))
        lines.append(Text(f"    {first}", style="dim"))
    return lines
