"""`brain sign`: add a signature record over a snapshot (default: the head), or over a rotation plan's bytes."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer

from brain.errors import BrainError, UsageError
from cli.context import CliContext, cli_context
from cli.options import JsonFlag
from cli.output import Result
from cli.signing import SignWithOption, load_signer


class SignResult(Result):
    """The record that was made: over which snapshot, by which key, claiming what; `stored` if kept in the brain."""

    snapshot: str
    record: str
    key: str
    scopes: list[str]
    stored: bool
    new: bool
    output: str | None = None


def sign(
    ctx: typer.Context,
    snapshot: Annotated[
        str | None,
        typer.Argument(metavar="[SNAPSHOT]", help="The snapshot to sign (digest or unique prefix); default: the head.")
    ] = None,
    sign_with: SignWithOption = None,
    document: Annotated[
        Path | None,
        typer.Option(
            "--document", metavar="FILE", help="Sign the exact bytes of a rotation plan (`brain trust rotate --plan`)."
        ),
    ] = None,
    output_file: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", metavar="FILE", help="With --document: write the record here (default: stdout)."
        )
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Sign a snapshot, claiming the scopes its change requires (refused if the key lacks them)."""
    from brain.authenticity import sign_snapshot

    context = cli_context(ctx)
    if sign_with is None:
        raise UsageError("brain sign needs a key", hint="pass --sign-with KEY or set BRAIN_SIGN_WITH")
    if document is not None:
        if snapshot is not None:
            raise UsageError("give a SNAPSHOT or --document FILE, not both")
        _sign_document(context, document, sign_with, output_file, as_json)
        return
    brain = context.open_brain()
    target = None if snapshot is None else brain.resolve_snapshot_prefix(snapshot)
    signer = load_signer(sign_with)
    record, added = sign_snapshot(brain, signer, target, lock_timeout=context.lock_timeout, on_wait=context.wait_note())
    result = SignResult(snapshot=str(record.snapshot), record=str(record.digest), key=record.key,
                        scopes=[str(s) for s in record.scopes], stored=True, new=added)
    context.output(as_json).result(result, _render)


def _sign_document(
    context: CliContext, document: Path, sign_with: str, output_file: Path | None, as_json: bool
) -> None:
    from brain.trust_ops import read_plan, sign_plan

    plan = read_plan(document, "--document")
    signer = load_signer(sign_with)
    try:
        brain = context.open_brain()
    except BrainError:
        brain = None  # a holder may countersign without a copy of the brain; the apply step judges it
    record = sign_plan(brain, plan, signer, output=output_file)
    if output_file is None and not as_json:
        sys.stdout.write(record.to_bytes().decode("utf-8") + "\n")
        return
    result = SignResult(snapshot=str(record.snapshot), record=str(record.digest), key=record.key,
                        scopes=[str(s) for s in record.scopes], stored=False, new=True,
                        output=None if output_file is None else str(output_file))
    context.output(as_json).result(result, _render)


def _render(result: SignResult) -> Iterable[str]:
    what = "signed" if result.new else "already signed"
    yield f"{what} snapshot {result.snapshot}"
    yield f"record {result.record} by {result.key}, claiming {', '.join(result.scopes) or 'nothing'}"
    if result.output:
        yield f"written to {result.output}"
