"""How `brain ingest` shows its run to people: a progress bar while it works, then a short summary.

The summary's numbers are the result's own (`rejected` is the sum of the `rejected by code` counts; the
bar's last words are the blocks the run added). Without `--verbose`, problems are counted per code with
the first few sources of each; `--verbose` adds one row per problem. `--json` prints the whole result.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from rich.console import RenderableType

from cli.output import Output, ProgressSink
from ingest.budget import ProposerUsage
from ingest.report import IngestProgress, IngestResult, SourceOutcome, SourceProblemReport
from ingest.usecase import SignedIngestResult

FIRST_SOURCES = 3
"""How many sources a summary line names per problem code."""

# Notes people must see whatever the verbosity: a source replaced the version another file had registered.
_ALWAYS_SHOWN = ("replaced-other-path",)


def format_bytes(count: int) -> str:
    """`1.2 MB`: decimal units, as file managers show sizes."""
    size = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{count} B"


@dataclass
class IngestProgressBar:
    """The library's progress callback as one bar of sources, opened on the first event."""

    output: Output
    stack: ExitStack
    _sink: ProgressSink | None = None
    _done: int = field(default=0)

    def __call__(self, event: IngestProgress) -> None:
        if self._sink is None:
            self._sink = self.stack.enter_context(self.output.progress("ingest", total=event.total))
        detail = f"{format_bytes(event.bytes)}, {event.blocks} blocks, {event.relpath}"
        self._sink.advance(event.files - self._done, item=detail)
        self._done = event.files

    def conclude(self, result: IngestResult) -> None:
        """End the bar on the run's totals (the last event came before the final checkpoint's blocks)."""
        if self._sink is not None:
            added = "would be added" if result.dry_run else "added"
            self._sink.conclude(f"{format_bytes(result.bytes_registered)}, {result.blocks_added} blocks {added}")


@contextmanager
def ingest_progress(output: Output) -> Iterator[IngestProgressBar]:
    """A progress callback for one ingest run; the bar closes when the block ends."""
    with ExitStack() as stack:
        yield IngestProgressBar(output, stack)


def render_ingest(result: IngestResult, output: Output, *, verbose: bool = False) -> Iterator[RenderableType]:
    """The summary lines, the per-code counts with their first sources, and with `verbose` every problem."""
    verb = "would register" if result.dry_run else "registered"
    yield (
        f"{verb} {result.registered}, "
        + (f"replaced {result.replaced}, " if result.replaced else "")
        + f"unchanged {result.unchanged}, duplicate {result.duplicate}, "
        f"skipped {result.skipped}, failed {result.failed} (of {result.sources} sources, "
        f"{format_bytes(result.bytes_registered)})"
    )
    yield (
        f"proposed {result.proposed}, validated {result.validated}, rejected {result.rejected}"
        f" (cache hits {result.cache_hits}); {result.blocks_added} blocks "
        + ("would be added" if result.dry_run else f"added in {result.checkpoints} snapshot(s)")
    )
    if result.missing:
        yield _missing_line(result)
    if result.snapshot and not result.dry_run:
        yield f"snapshot {result.snapshot}"
    rows = [(o, p) for o in result.outcomes for p in o.problems]
    rejections = [(o, p) for o, p in rows if p.kind == "rejection"]
    problems = [(o, p) for o, p in rows if p.kind != "rejection"]
    for title, counts, found in (
        ("rejected by code", result.rejected_by_code, rejections),
        ("problems by code", result.problems_by_code, problems),
    ):
        if counts:
            yield f"{title}: " + ", ".join(f"{code} {n}" for code, n in counts.items())
            if not verbose:
                yield from _first_sources({c: n for c, n in counts.items() if c not in _ALWAYS_SHOWN}, found)
    for outcome, problem in problems:
        if problem.code in _ALWAYS_SHOWN and not verbose:
            yield f"note: origin {outcome.origin} {problem.detail}"
    if verbose and rows:
        table = output.table("source", "stage", "kind", "code", "detail")
        for outcome, problem in rows:
            table.add_row(outcome.origin, problem.stage, problem.kind, problem.code, problem.detail)
        yield table
    elif rows:
        yield "one row per problem: --verbose (or --json)"


def _first_sources(
    counts: dict[str, int], found: Iterable[tuple[SourceOutcome, SourceProblemReport]]
) -> Iterator[str]:
    """One line per code: the first sources it concerns (`and N more` for the rest)."""
    sources: dict[str, list[str]] = {code: [] for code in counts}
    for outcome, problem in found:
        named = sources.setdefault(problem.code, [])
        if outcome.origin not in named:
            named.append(outcome.origin)
    for code in counts:
        named = sources.get(code, [])
        more = len(named) - FIRST_SOURCES
        yield f"  {code}: " + ", ".join(named[:FIRST_SOURCES]) + (f" and {more} more" if more > 0 else "")


def _missing_line(result: IngestResult) -> str:
    """One line for the sources whose files are gone (`ingest.sync`)."""
    gone = result.missing
    if all(m.action == "missing" for m in gone):
        first = ", ".join(m.origin for m in gone[:3]) + (", ..." if len(gone) > 3 else "")
        return (
            f"missing {len(gone)} sources no longer under the roots ({first}): still in the brain; "
            "pass --sync to drop them"
        )
    dropped = [m for m in gone if m.action == "dropped"]
    demoted = [m for m in gone if m.action == "demoted"]
    blocks = sum(n for m in gone for n in m.dropped.values())
    verb = "would remove" if result.dry_run else "removed"
    line = f"sync: {verb} {len(gone)} deleted sources: {len(dropped)} dropped, {blocks} blocks in all"
    if demoted:
        line += f"; {len(demoted)} demoted with their episodes (episodes are never dropped): "
        line += ", ".join(m.origin for m in demoted[:3]) + (", ..." if len(demoted) > 3 else "")
    return line


def render_signed_ingest(result: SignedIngestResult, output: Output, *, verbose: bool) -> Iterator[RenderableType]:
    """`render_ingest`, then what the model spent and the signature, if any."""
    if result.shard is not None:
        base = f", from {result.shard.base}" if result.shard.base else ""
        yield (f"shard {result.shard.shard}: kept {result.shard.kept:,} source(s), "
               f"skipped {result.shard.skipped:,} of other shards{base}")
    yield from render_ingest(result, output, verbose=verbose)
    if result.usage is not None:
        yield usage_line(result.usage)
    if result.signed is not None:
        yield f"signed by {result.signed.key} (record {result.signed.record})"


def usage_line(usage: ProposerUsage) -> str:
    """`tokens 1,234 in + 567 out (~$0.0123)`, estimated after a dry run, and what the budget held back."""
    verb = "would spend about" if usage.estimated else "spent"
    cost = f", ${usage.cost_usd}" if usage.cost_usd is not None else ""
    line = f"model {verb} {usage.prompt_tokens:,} input + {usage.completion_tokens:,} output tokens{cost}"
    if usage.budget_exhausted:
        line += f"; budget exhausted: {usage.budget_exhausted} source(s) not proposed (the next run proposes them)"
    return line
