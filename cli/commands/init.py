"""`brain init`: create an empty brain directory, or a governed one whose signed genesis holds a trust root."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from brain.brain import Brain
from brain.errors import InvalidInputError, UsageError
from brain.identity import parse_strict
from brain.snapshot import TrustRoot
from brain.store.user_files import MIB, read_user_file
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Result
from cli.signing import SignWithOption, load_signer, parse_trust_key_spec

MAX_DOCUMENT_BYTES = MIB  # a trust root, rotation plan or signature record is a few KiB


class InitResult(Result):
    """The brain that was created."""

    brain: str


class GovernedInitResult(InitResult):
    """A governed brain: its genesis, trust root, and the signature record over the genesis."""

    genesis: str
    trust_root: str
    record: str
    key: str


def _trust_root(keys: list[str], quorum: int, root_file: Path | None) -> TrustRoot | None:
    if root_file is not None:
        if keys:
            raise UsageError("give either --trust-key options or --trust-root FILE, not both")
        try:
            document = parse_strict(read_user_file(root_file, "--trust-root", MAX_DOCUMENT_BYTES))
            return TrustRoot.model_validate(document)
        except OSError as e:
            raise UsageError(f"cannot read --trust-root {root_file}: {e.strerror}") from None
        except ValidationError as e:
            first = e.errors(include_url=False)[0]
            where = ".".join(map(str, first["loc"])) or "document"
            raise InvalidInputError(f"--trust-root {root_file} is not a trust root: {where}: {first['msg']}") from None
    if not keys:
        return None
    entries = tuple(parse_trust_key_spec(spec) for spec in keys)
    try:
        return TrustRoot(govern_quorum=quorum, keys=entries, revision=1)
    except ValidationError as e:
        raise InvalidInputError(f"invalid trust root: {e.errors(include_url=False)[0]['msg']}") from None


def init(
    ctx: typer.Context,
    trust_key: Annotated[
        list[str] | None,
        typer.Option(
            "--trust-key", metavar="PUBKEY[=SCOPES][@SUBJECT]",
            help="Govern the brain: a key its trust root lists (repeatable); PUBKEY is a .pub file or "
            "'ssh-ed25519 AAAA...'; SCOPES default to ingest,commit,govern.",
        ),
    ] = None,
    quorum: Annotated[
        int, typer.Option("--quorum", min=1, metavar="N", help="Govern signatures a trust-root revision needs.")
    ] = 1,
    trust_root: Annotated[
        Path | None,
        typer.Option("--trust-root", metavar="FILE", help="The trust root as a JSON file (instead of --trust-key).")
    ] = None,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Create an empty brain at --brain (refuses an existing one); with --trust-key, a governed, signed genesis."""
    from brain.trust_ops import init_governed

    context = cli_context(ctx)
    root = _trust_root(list(trust_key or ()), quorum, trust_root)
    if root is None:
        if sign_with is not None:
            raise UsageError(
                "--sign-with (or BRAIN_SIGN_WITH) needs a governed brain",
                hint="add --trust-key PUBKEY or --trust-root FILE, or unset BRAIN_SIGN_WITH for an ungoverned brain",
            )
        Brain.init(context.brain_path)
        result = InitResult(brain=str(context.brain_path))
        context.output(as_json).result(result, lambda r: f"Initialized an empty brain in {r.brain}")
        return
    if sign_with is None:
        raise UsageError("a governed genesis must be signed", hint="add --sign-with KEY (a key holding govern)")
    # Everything that can fail (the key, its scopes, the signature) happens before the directory exists.
    _, digest, record = init_governed(
        context.brain_path, root, load_signer(sign_with), lock_timeout=context.lock_timeout, on_wait=context.wait_note()
    )
    result = GovernedInitResult(brain=str(context.brain_path), genesis=str(digest), trust_root=str(root.digest),
                                record=str(record.digest), key=record.key)
    context.output(as_json).result(result, _render)


def _render(result: GovernedInitResult) -> Iterable[str]:
    yield f"Initialized a governed brain in {result.brain}"
    yield f"genesis     {result.genesis}"
    yield f"trust root  {result.trust_root}"
    yield f"signed by   {result.key} (record {result.record})"
