"""`brain sign`: add a signature record over a snapshot (default: the head), or over a rotation plan's bytes."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer

from brain.errors import BrainError, InvalidInputError, UsageError
from brain.identity import OciDigest
from brain.store.user_files import MIB, read_user_file
from cli.context import CliContext, cli_context
from cli.options import JsonFlag
from cli.output import Result
from cli.signing import SignWithOption, load_signer

MAX_DOCUMENT_BYTES = MIB  # a trust root, rotation plan or signature record is a few KiB


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
        str | None, typer.Argument(metavar="[SNAPSHOT]", help="The snapshot to sign (digest or unique prefix); default: the head.")
    ] = None,
    sign_with: SignWithOption = None,
    document: Annotated[
        Path | None,
        typer.Option("--document", metavar="FILE", help="Sign the exact bytes of a rotation plan (`brain trust rotate --plan`)."),
    ] = None,
    output_file: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="With --document: write the record here (default: stdout).")
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


def _sign_document(context: CliContext, document: Path, sign_with: str, output_file: Path | None, as_json: bool) -> None:
    from brain.authenticity import plan_refusal
    from brain.authn.signer import make_record
    from brain.snapshot import Snapshot, TrustScope

    try:
        data = read_user_file(document, "--document", MAX_DOCUMENT_BYTES)
    except OSError as e:
        raise UsageError(f"cannot read --document {document}: {e.strerror}") from None
    try:
        plan = Snapshot.decode(data)  # a plan is a snapshot document, byte for byte what the head will be
    except BrainError as e:
        raise InvalidInputError(f"--document {document} is not a rotation plan (a snapshot document): {e.message}") from None
    signer = load_signer(sign_with)
    try:
        brain = context.open_brain()
    except BrainError:
        brain = None  # a holder may countersign without a copy of the brain; the apply step judges it
    if brain is not None:
        problem = plan_refusal(brain, plan, signer)
        if problem is not None:
            raise problem
    record = make_record(signer, data, {TrustScope.GOVERN})
    if output_file is not None:
        output_file.write_bytes(record.to_bytes())
    elif not as_json:
        sys.stdout.write(record.to_bytes().decode("utf-8") + "\n")
        return
    result = SignResult(snapshot=str(OciDigest.of(data)), record=str(record.digest), key=record.key,
                        scopes=[str(s) for s in record.scopes], stored=False, new=True,
                        output=None if output_file is None else str(output_file))
    context.output(as_json).result(result, _render)


def _render(result: SignResult) -> Iterable[str]:
    what = "signed" if result.new else "already signed"
    yield f"{what} snapshot {result.snapshot}"
    yield f"record {result.record} by {result.key}, claiming {', '.join(result.scopes) or 'nothing'}"
    if result.output:
        yield f"written to {result.output}"
