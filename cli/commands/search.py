"""`brain search QUERY`: ranked, verified evidence bundles from the local index, with associative expansion.

The index (`boltzmann/search/`) is brought to the head first (incrementally; from scratch with
`--reindex`). Accessible blocks only unless `--include-superseded` (§7.2).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import RenderableType
from rich.text import Text

from brain.concurrency import default_jobs
from brain.errors import UsageError
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result
from retrieval import DEFAULT_LIMIT
from retrieval.tokenize import highlight_spans, query_terms

if TYPE_CHECKING:
    from brain.brain import Brain
    from retrieval.models import SearchResult
    from retrieval.query import Searcher


class ReindexResult(Result):
    """`brain search --reindex` without a query: what the rebuilt index describes."""

    snapshot: str
    blocks: int
    not_stored: int


QueryArgument = Annotated[str, typer.Argument(metavar="QUERY", help="Words to search for.", show_default=False)]
AtOption = Annotated[
    str | None,
    typer.Option("--at", metavar="REF", help="Search this snapshot instead of the head: a branch, HEAD~N, a local "
                 "tag or a snapshot digest prefix (its index is built in memory)."),
]
TypesOption = Annotated[
    list[str] | None,
    typer.Option("--type", "-t", metavar="TYPE", help="Only this memory type (repeatable): canonical (passages of "
                 "sources), semantic, procedural, episodic."),
]
TagsOption = Annotated[
    list[str] | None,
    typer.Option("--tag", metavar="TAG", help="Only blocks tagged TAG (repeatable: every tag given, AND; case is "
                 "ignored). Episodes are the blocks that carry tags (§3.2)."),
]


def search(
    ctx: typer.Context,
    query: QueryArgument = "",
    types: TypesOption = None,
    tags: TagsOption = None,
    subject: Annotated[
        str | None, typer.Option("--subject", metavar="S", help="Only blocks about this subject.")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", metavar="DATE", help="Only blocks dated on or after DATE.")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", metavar="DATE", help="Only blocks dated on or before DATE.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", metavar="K", help="At most K matches.")] = DEFAULT_LIMIT,
    include_superseded: Annotated[
        bool, typer.Option("--include-superseded", help="Let superseded and demoted blocks through.")
    ] = False,
    no_expand: Annotated[bool, typer.Option("--no-expand", help="No associative expansion.")] = False,
    reindex: Annotated[bool, typer.Option("--reindex", help="Rebuild the index from scratch first.")] = False,
    evidence: Annotated[str | None, typer.Option(
        "--evidence", metavar="SOURCE",
        help="Only this source (id, prefix or origin) and the blocks drawn from it.")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Say why each match ranked where it did "
                                          "(people's output; --json is unchanged).")] = False,
    at: AtOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Search the brain: verified evidence bundles, with associative expansion."""
    from retrieval.query import SearchRequest  # the engine (sqlite, models): when the command runs
    from retrieval.recovery import answered

    context = cli_context(ctx)
    request = SearchRequest(
        query=query,
        types=tuple(t.lower() for t in types or ()),
        subject=subject,
        since=since,
        until=until,
        limit=limit,
        include_superseded=include_superseded,
        expand=not no_expand,
        tags=tuple(tags or ()),
    )
    output = context.output(as_json)
    if not (reindex and not query):
        request.validate()  # before the index is opened: a bad request writes nothing
    searcher = open_searcher(context.open_brain(), at)
    if at is not None and reindex:
        raise UsageError("--reindex rebuilds the head's index; it does not go with --at")
    try:
        if evidence is not None:
            from retrieval.sources import resolve_source

            searcher.refresh()
            request = request.drawn_from(resolve_source(searcher.brain, searcher.index, evidence).hex)
        if reindex:
            stats = searcher.refresh(rebuild=True, jobs=default_jobs())
            output.message(f"search index rebuilt: {stats.added} blocks")
            if not query:
                rebuilt = ReindexResult(snapshot=str(searcher.index.snapshot_digest()), blocks=stats.added,
                                        not_stored=stats.not_stored)
                output.result(rebuilt, lambda r: [])
                return
        result = answered(lambda: searcher.index, lambda: searcher.search(request), output.message)
    finally:
        searcher.close()
    if searcher.last_update is not None and searcher.last_update.rebuilt and not reindex:
        output.message(f"search index built: {searcher.last_update.added} blocks ({searcher.last_update.reason})")
    for note in result.notes:
        output.message(f"note: {note}")
    for match in result.matches:
        if not match.verified:
            output.message(f"warning: {match.block} failed verification (bytes or proof); run `brain verify`")
    why = searcher.explanations if explain else {}
    output.result(result, lambda r: _render(r, output, why))


def open_searcher(brain: Brain, at: str | None) -> Searcher:
    """The searcher over the head, or over the snapshot `--at REF` names."""
    from retrieval.query import Searcher

    if at is None:
        return Searcher(brain)
    from brain.branches.operations import resolve_start
    from oci.diff_sides import local_tag_snapshot
    from retrieval.pinned import searcher_at

    return searcher_at(brain, resolve_start(brain, at, tagged=lambda tag: local_tag_snapshot(brain, tag)))


def _render(result: SearchResult, output: Output, why: dict[str, str] | None = None) -> Iterable[RenderableType]:
    if not result.matches:
        output.message("no matches")
        return []
    terms = query_terms(result.query)
    lines: list[RenderableType] = []
    last_source = None
    for match in result.matches:
        source = match.evidence[0] if match.evidence else None
        key = source.block if source else match.block
        if key != last_source:
            lines.append(Text(f"== {source.origin or source.block if source else match.title}", style="bold"))
            last_source = key
        flags = "" if match.accessible else " (inaccessible)"
        flags += "" if match.verified else " (NOT VERIFIED)"
        via = f"  via {match.via.edge} from {match.via.from_[7:19]}" if match.via else ""
        lines.append(Text(f"{match.score:.3f}  {match.memory_type:<10} {match.title}{flags}{via}"))
        if why and match.block in why:
            lines.append(Text(f"    why: {why[match.block]}", style="cyan"))
        for evidence in match.evidence[:2]:
            where = f"{evidence.origin or evidence.block}:{evidence.locator}" if evidence.locator else evidence.origin
            lines.append(Text(f"    {where}", style="dim"))
            if evidence.excerpt:
                lines.append(_highlighted("    " + evidence.excerpt.replace("\n", "\n    "), terms))
    return lines


def _highlighted(text: str, terms: list[str]) -> Text:
    """The excerpt with the query's words in bold yellow (rich drops styles where colour is off)."""
    rendered = Text(text)
    for start, end in highlight_spans(text, terms):
        rendered.stylize("bold yellow", start, end)
    return rendered
