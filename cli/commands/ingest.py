"""`brain ingest`: register source files, propose knowledge from them, commit what the gate validates."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from brain.errors import UsageError
from cli.config_secrets import is_env_name
from cli.context import cli_context
from cli.options import JsonFlag
from cli.signing import SignWithOption, passphrase_for

if TYPE_CHECKING:
    from ingest.budget import CostLimits

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
    license_: Annotated[
        str | None,
        typer.Option("--license", metavar="SPDX", help="License recorded: an SPDX expression (MIT OR Apache-2.0)."),
    ] = None,
    license_unchecked: Annotated[
        str | None,
        typer.Option("--license-unchecked", metavar="TEXT", help="License recorded as written (not SPDX)."),
    ] = None,
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
    no_ignore: Annotated[
        bool, typer.Option("--no-ignore", help="Ingest what .gitignore and .git/info/exclude leave out.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would happen; write nothing.")] = False,
    sync: Annotated[
        bool, typer.Option("--sync", help="Drop sources whose files are gone from the roots (with their cascade).")
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Exit 1 if any source failed or any candidate was rejected "
                 "(a duplicate of a member is not a problem).",
        )
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="One row per problem (default: counts and first sources).")
    ] = False,
    sign_with: SignWithOption = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", metavar="N", help="Stop proposing before a model would spend more tokens.")
    ] = None,
    max_cost: Annotated[
        str | None,
        typer.Option(
            "--max-cost", metavar="USD", help="Stop proposing before a model would cost more (needs --price)."
        )
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option("--shard", metavar="I/N", help="Only the sources of shard I of N (by a hash of each origin)."),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option("--base", metavar="REF", help="Refuse unless the brain starts from this snapshot (or `empty`)."),
    ] = None,
    price: Annotated[
        str | None,
        typer.Option("--price", metavar="input=P,output=Q", help="The model's prices in USD per million tokens."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Ingest files: register their bytes, propose knowledge, commit what the validation gate accepts."""
    # The run and its report load here, not with every command (`brain --help` among them).
    from cli.ingest_report import ingest_progress, render_signed_ingest
    from ingest.proposers.loader import ProposerOptions
    from ingest.report import IngestResult
    from ingest.run import IngestOptions, parse_allowed
    from ingest.usecase import ingest_paths, strict_failure
    from ingest.shard import Shard

    context = cli_context(ctx)
    license_text = _license(license_, license_unchecked)
    api_key = None
    if api_key_env is not None:
        if not is_env_name(api_key_env):
            raise UsageError(
                "--api-key-env takes the NAME of an environment variable, not a key (the value is not shown)",
                hint="export the key, e.g. OPENAI_API_KEY=..., and pass --api-key-env OPENAI_API_KEY",
            )
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise UsageError(f"--api-key-env {api_key_env}: that environment variable is not set")
    cost = cost_limits(max_tokens, max_cost, price)
    options = IngestOptions(
        cost=cost,
        include=tuple(include or ()),
        exclude=tuple(exclude or ()),
        media_type=media_type.strip().lower() if media_type else None,
        license=license_text,
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
        vcs_ignore=not no_ignore,
        shard=None if shard is None else Shard.parse(shard),
        base=base,
    )
    brain = context.open_brain()
    output = context.output(as_json)
    with ingest_progress(output) as on_progress:

        def after_run(run: IngestResult) -> None:
            on_progress.conclude(run)
            on_progress.stack.close()  # the bar ends with the run, before the sync
            if run.sources == 0:
                output.warning(
                    "no source found under " + ", ".join(map(str, paths)) + ": ignored paths (.gitignore inside a git "
                    "work tree, .brainignore, --include/--exclude) and tool caches are left out; --no-ignore includes "
                    "git-ignored files"
                )

        result = ingest_paths(
            brain, paths, options, actor=context.actor(), sync=sync, sign_with=sign_with, passphrase=passphrase_for,
            lock_timeout=context.lock_timeout, on_wait=output.message, on_progress=on_progress, on_run=after_run,
        )  # fmt: skip
    if result.usage is None and (cost.max_tokens is not None or cost.max_cost is not None):
        output.warning(f"--max-tokens/--max-cost had no effect: the {proposer} proposer is local and costs nothing")
    output.result(result, lambda r: render_signed_ingest(r, output, verbose=verbose))
    if strict and (failure := strict_failure(result)) is not None:
        raise failure


def cost_limits(max_tokens: int | None, max_cost: str | None, price: str | None) -> CostLimits:
    """`--max-tokens`, `--max-cost`, `--price` checked before anything is read or written."""
    from ingest.budget import CostLimits, parse_money, parse_prices

    limits = CostLimits(
        max_tokens=max_tokens,
        max_cost=None if max_cost is None else parse_money(max_cost),
        prices=None if price is None else parse_prices(price),
    )
    limits.budget()  # refuses a negative limit, or a cost limit without prices
    return limits


def _license(spdx: str | None, unchecked: str | None) -> str | None:
    """The license to record: `--license` checked and canonical, or `--license-unchecked` as written."""
    from ingest.license import spdx_expression, unchecked_license

    if spdx is not None and unchecked is not None:
        raise UsageError("--license and --license-unchecked exclude each other", hint="give one of them")
    if unchecked is not None:
        return unchecked_license(unchecked)
    return None if spdx is None else spdx_expression(spdx)
