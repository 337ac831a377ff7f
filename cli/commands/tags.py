"""`brain tags`: the tags of `index.json` and the manifests they name."""

from __future__ import annotations

from collections.abc import Iterable

import typer
from rich.console import RenderableType

from brain.identity import OciDigest
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result


class TagEntry(Result):
    """One tag and the manifest it names."""

    tag: str
    digest: OciDigest
    size: int


class TagsResult(Result):
    """`{"tags": [{"tag", "digest", "size"}]}` in index order."""

    tags: list[TagEntry]


def tags(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List the brain's tags and their manifest digests."""
    context = cli_context(ctx)
    brain = context.open_brain()
    result = TagsResult(
        tags=[TagEntry(tag=name, digest=d.digest, size=d.size) for name, d in brain.layout.tags()]
    )
    output = context.output(as_json)
    output.result(result, lambda r: _render(r, output))


def _render(result: TagsResult, output: Output) -> Iterable[RenderableType]:
    if not result.tags:
        yield "no tags (pack with `brain pack --tag TAG`)"
        return
    table = output.table("tag", "manifest", "size")
    for entry in result.tags:
        table.add_row(entry.tag, str(entry.digest), str(entry.size))
    yield table
