"""`brain ingest`: register source files, propose knowledge from them, commit what the gate validates."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import RenderableType

from brain.errors import ProblemsFoundError, UsageError
from brain.snapshot import TrustScope
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, ProgressSink
from cli.signing import SignedHead, SigningPlan, SignWithOption
from ingest.report import IngestProgress, IngestResult


class SignedIngestResult(IngestResult):
    """The ingest result, plus the signature record over the snapshot it made (`--sign-with`)."""

    signed: SignedHead | None = None

_Repeat = list[str] | None


def ingest(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(metavar="PATH", help="Files or directories to ingest.")],
    include: Annotated[
        _Repeat, typer.Option("--include", metavar="GLOB", help="Only files matching (repeatable).")
    ] = None,
    exclude: Annotated[
        _Repeat, typer.Option("--exclude", metavar="GLOB", help="Skip matching paths (repeatable).")
    ] = None,
    media_type: Annotated[
        str | None, typer.Option("--media-type", metavar="TYPE", help="Declare every source's media type.")
    ] = None,
    license_: Annotated[str | None, typer.Option("--license", metavar="SPDX", help="License recorded.")] = None,
    origin: Annotated[
        str | None, typer.Option("--origin", metavar="URL", help="Origin recorded (joined with paths under a dir).")
    ] = None,
    proposer: Annotated[
        str, typer.Option("--proposer", metavar="NAME", help="heuristic, exec:COMMAND, openai, or a plugin.")
    ] = "heuristic",
    model: Annotated[str | None, typer.Option("--model", metavar="NAME", help="Model (openai).")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", metavar="URL", help="Endpoint (openai).")] = None,
    api_key_env: Annotated[
        str | None, typer.Option("--api-key-env", metavar="VAR", help="Environment variable holding the API key.")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", metavar="N", min=1, help="Proposals in flight.")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", metavar="SECONDS", min=0.001, help="Per-proposal time limit.")
    ] = None,
    allow: Annotated[
        str, typer.Option("--allow", metavar="TYPES", help="Proposable types, comma-separated.")
    ] = "episodic,procedural,semantic",
    instructions: Annotated[
        str | None, typer.Option("--instructions", metavar="TEXT", help="Extra instructions for the proposer.")
    ] = None,
    checkpoint: Annotated[
        int | None,
        typer.Option(
            "--checkpoint",
            metavar="N",
            min=1,
            help="Commit a snapshot every N registered sources (default: 500, growing to 2500 in long runs).",
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Ignore the fingerprint index and the proposal cache.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would happen; write nothing.")] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 if any source failed or any candidate was rejected.")
    ] = False,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Ingest files: register their bytes, propose knowledge, commit what the validation gate accepts."""
    from ingest.proposers.loader import ProposerOptions
    from ingest.run import IngestOptions, parse_allowed
    from ingest.run import ingest as run_ingest

    context = cli_context(ctx)
    api_key = None
    if api_key_env is not None:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise UsageError(f"--api-key-env {api_key_env}: that environment variable is not set")
    options = IngestOptions(
        include=tuple(include or ()),
        exclude=tuple(exclude or ()),
        media_type=media_type.strip().lower() if media_type else None,
        license=license_,
        origin=origin,
        proposer=proposer,
        proposer_options=ProposerOptions(
            timeout=timeout, concurrency=concurrency, model=model, base_url=base_url, api_key=api_key
        ),
        allow=parse_allowed(allow),
        instructions=instructions,
        checkpoint=checkpoint,
        use_cache=not no_cache,
        dry_run=dry_run,
    )
    brain = context.open_brain()
    output = context.output(as_json)
    signing = SigningPlan.prepare(brain, None if dry_run else sign_with, {TrustScope.INGEST, TrustScope.COMMIT}, "this ingest")
    with _progress(output) as on_progress:
        result = run_ingest(
            brain,
            paths,
            options,
            actor=context.actor(),
            lock_timeout=context.lock_timeout,
            on_wait=output.message,
            on_progress=on_progress,
        )
    result = SignedIngestResult(**dict(result), signed=signing.sign_new_head(context))
    output.result(result, lambda r: _render(r, output))
    if strict and result.strict_problems:
        raise ProblemsFoundError(
            f"--strict: {result.strict_problems} problem(s) (failed sources or rejected candidates); "
            "the valid part was committed"
        )


@contextmanager
def _progress(output: Output) -> Iterator[Callable[[IngestProgress], None]]:
    """A progress callback that opens one bar (files) on the first event; bytes and blocks ride along."""
    with ExitStack() as stack:
        state: dict[str, ProgressSink | int] = {}

        def on_progress(event: IngestProgress) -> None:
            sink = state.get("sink")
            if sink is None:
                sink = stack.enter_context(output.progress("ingest", total=event.total))
                state["sink"], state["done"] = sink, 0
            assert not isinstance(sink, int)
            done = state["done"]
            assert isinstance(done, int)
            detail = f"{_bytes(event.bytes)}, {event.blocks} blocks, {event.relpath}"
            sink.advance(event.files - done, item=detail)
            state["done"] = event.files

        yield on_progress


def _bytes(count: int) -> str:
    size = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{count} B"


def _render(result: IngestResult, output: Output) -> Iterable[RenderableType]:
    verb = "would register" if result.dry_run else "registered"
    yield (
        f"{verb} {result.registered}, "
        + (f"replaced {result.replaced}, " if result.replaced else "")
        + f"unchanged {result.unchanged}, duplicate {result.duplicate}, "
        f"skipped {result.skipped}, failed {result.failed} (of {result.sources} sources, "
        f"{_bytes(result.bytes_registered)})"
    )
    yield (
        f"proposed {result.proposed}, validated {result.validated}, rejected {result.rejected}"
        f" (cache hits {result.cache_hits}); {result.blocks_added} blocks "
        + ("would be added" if result.dry_run else f"added in {result.checkpoints} snapshot(s)")
    )
    if result.rejected_by_code:
        yield "rejected by code: " + ", ".join(f"{code} {n}" for code, n in result.rejected_by_code.items())
    if result.problems_by_code:
        yield "problems by code: " + ", ".join(f"{code} {n}" for code, n in result.problems_by_code.items())
    if result.snapshot and not result.dry_run:
        yield f"snapshot {result.snapshot}"
    if isinstance(result, SignedIngestResult) and result.signed is not None:
        yield f"signed by {result.signed.key} (record {result.signed.record})"
    rows = [(o, p) for o in result.outcomes for p in o.problems]
    if rows:
        table = output.table("source", "stage", "kind", "code", "detail")
        for outcome, problem in rows:
            table.add_row(outcome.relpath, problem.stage, problem.kind, problem.code, problem.detail)
        yield table
