"""`brain tags [REF]`: the local tags of `index.json`, or a registry repository's tags with REF."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

import typer
from rich.console import RenderableType

from brain.identity import OciDigest
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result
from cli.transfer import PlainHttpFlag


class TagEntry(Result):
    """One tag and the manifest it names."""

    tag: str
    digest: OciDigest
    size: int


class TagsResult(Result):
    """`{"tags": [{"tag", "digest", "size"}]}` in index order."""

    tags: list[TagEntry]


class RemoteTagsResult(Result):
    """`{"repository": "host/name", "tags": [...]}` in the registry's order."""

    repository: str
    tags: list[str]


def tags(
    ctx: typer.Context,
    reference: Annotated[
        str | None,
        typer.Argument(metavar="[REF]", help="A registry repository (HOST[:PORT]/REPOSITORY) to list instead."),
    ] = None,
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """List the brain's tags and their manifest digests, or with REF a registry repository's tags."""
    context = cli_context(ctx)
    output = context.output(as_json)
    if reference is not None:
        from oci.auth import resolve_credentials
        from oci.reference import parse_reference
        from oci.remote_tags import list_tags
        from oci.transport import RegistryClient

        ref = parse_reference(reference, plain_http=plain_http)
        names = list_tags(RegistryClient(ref, resolve_credentials(ref.registry)))
        remote = RemoteTagsResult(repository=f"{ref.registry}/{ref.repository}", tags=names)
        output.result(remote, lambda r: _render_remote(r, output))
        return
    brain = context.open_brain()
    result = TagsResult(
        tags=[TagEntry(tag=name, digest=d.digest, size=d.size) for name, d in brain.layout.tags()]
    )
    output.result(result, lambda r: _render(r, output))


def _render(result: TagsResult, output: Output) -> Iterable[RenderableType]:
    if not result.tags:
        yield "no tags (pack with `brain pack --tag TAG`)"
        return
    table = output.table("tag", "manifest", "size")
    for entry in result.tags:
        table.add_row(entry.tag, str(entry.digest), str(entry.size))
    yield table


def _render_remote(result: RemoteTagsResult, output: Output) -> Iterable[RenderableType]:
    if not result.tags:
        yield f"no tags in {result.repository}"
        return
    table = output.table("tag")
    for name in result.tags:
        table.add_row(name)
    yield table
