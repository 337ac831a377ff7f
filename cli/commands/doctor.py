"""`brain doctor`: check what a CI job needs (brain, disk, actor, registry, proposer, signing key) and say what to fix.

Each check reads its target from the command line, else from the config file (`[push] reference`,
`[ingest] proposer/model/base-url/api-key-env`, `[sign] sign-with`, `$BRAIN_SIGN_WITH`), else skips with a note
saying how to ask for it. A check that fails exits 1 after all checks ran; warnings do not.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.console import RenderableType

from brain.errors import BrainError, ProblemsFoundError
from cli.context import CliContext, cli_context
from cli.options import JsonFlag
from cli.output import Output, Result, styled
from cli.transfer import PlainHttpFlag

MIN_FREE_BYTES = 256 << 20
WARN_FREE_BYTES = 2 << 30
MIN_FREE_INODES = 10_000
PROBE_TIMEOUT = 10.0
Status = Literal["ok", "warn", "fail", "skip"]


class Check(Result):
    """One check: what, its status, what was seen, and what to do about it."""

    check: str
    status: Status
    detail: str
    fix: str | None = None


class DoctorResult(Result):
    """Every check in order; `ok` is False when any failed."""

    ok: bool
    checks: list[Check]


def _configured(context: CliContext, command: str, key: str) -> Any:
    bound = context.config_file
    if bound is None:
        return None
    for setting in bound.settings:
        if setting.command == (command,) and setting.key == key:
            return setting.value
    return None


def _brain(context: CliContext) -> Check:
    path = context.brain_path
    if not path.exists():
        return Check(
            check="brain", status="warn", detail=f"no brain at {path}",
            fix="`brain init`, or `brain pull REF` to start from a published one",
        )
    try:
        brain = context.open_brain()
        head = brain.snapshot_digest()
    except BrainError as e:
        return Check(check="brain", status="fail", detail=e.message, fix=e.hint)
    lock_dir = path / "boltzmann"
    if not os.access(lock_dir if lock_dir.exists() else path, os.W_OK):
        return Check(
            check="brain", status="fail", detail=f"{path} is not writable by this user", fix="fix its permissions"
        )
    return Check(check="brain", status="ok", detail=f"{path}: " + (f"head {head.short}" if head else "empty"))


def _disk(context: CliContext) -> Check:
    path = context.brain_path if context.brain_path.exists() else Path.cwd()
    usage = shutil.disk_usage(path)
    stats = os.statvfs(path)
    free_inodes = stats.f_favail
    detail = f"{usage.free / 2**30:.1f} GiB free, {free_inodes} inodes free on the file system of {path}"
    if usage.free < MIN_FREE_BYTES or (stats.f_files and free_inodes < MIN_FREE_INODES):
        return Check(
            check="disk", status="fail", detail=detail, fix="free space (or inodes) or point --brain elsewhere"
        )
    if usage.free < WARN_FREE_BYTES:
        return Check(check="disk", status="warn", detail=detail, fix="large ingests and pulls may run out of space")
    return Check(check="disk", status="ok", detail=detail)


def _actor(context: CliContext) -> Check:
    try:
        actor = context.actor()
    except BrainError as e:
        return Check(check="actor", status="fail", detail=e.message, fix=e.hint)
    return Check(check="actor", status="ok", detail=f"{actor} ({context.sources.get('actor', 'default')})")


def _registry(reference: str | None, plain_http: bool) -> Check:
    if not reference:
        return Check(
            check="registry", status="skip", detail="no registry to check",
            fix="pass --registry REF or set [push] reference",
        )
    from oci.auth import resolve_credentials
    from oci.reference import parse_reference
    from oci.remote_tags import list_tags
    from oci.transport import RegistryClient

    try:
        ref = parse_reference(reference, plain_http=plain_http)
        credentials = resolve_credentials(ref.registry)
        client = RegistryClient(ref, credentials, timeout=(PROBE_TIMEOUT, PROBE_TIMEOUT))
        client.ping()
        who = f"as {credentials.username}" if credentials and credentials.username else "anonymously"
        try:
            count = f"{len(list_tags(client))} tag(s) in {ref.repository}"
        except BrainError:
            count = f"{ref.repository} does not exist yet"
    except BrainError as e:
        return Check(
            check="registry", status="fail", detail=e.message,
            fix=e.hint or f"check `brain login {reference.split('/')[0]}`",
        )
    return Check(check="registry", status="ok", detail=f"{ref.registry} answers {who}; {count}")


def _proposer(name: str | None, model: str | None, base_url: str | None, key_env: str | None) -> Check:
    if not name or name == "heuristic":
        return Check(check="proposer", status="ok", detail="heuristic (built in, offline)")
    if name != "openai":
        return Check(check="proposer", status="skip", detail=f"{name}: only the openai proposer's endpoint is probed")
    import openai

    environ = os.environ
    base_url = (
        base_url
        or environ.get("BRAIN_OPENAI_BASE_URL")
        or environ.get("OPENAI_BASE_URL")
        or "https://api.openai.com/v1"
    )
    key = environ.get(key_env) if key_env else environ.get("BRAIN_OPENAI_API_KEY") or environ.get("OPENAI_API_KEY")
    model = model or environ.get("BRAIN_OPENAI_MODEL")
    if key_env and not key:
        return Check(
            check="proposer", status="fail", detail=f"{key_env} is not set",
            fix=f"export {key_env} from the CI secret store",
        )
    client = openai.OpenAI(base_url=base_url, api_key=key or "unused", max_retries=0, timeout=PROBE_TIMEOUT)
    try:
        models = [m.id for m in client.models.list()]
    except openai.APIStatusError as e:
        return Check(
            check="proposer", status="fail", detail=f"{base_url} answered HTTP {e.status_code}",
            fix="check the API key and the base URL",
        )
    except openai.APIError as e:
        return Check(
            check="proposer", status="fail", detail=f"{base_url}: {type(e).__name__}",
            fix="check that the endpoint is running and reachable",
        )
    if model and models and model not in models:
        return Check(
            check="proposer", status="warn", detail=f"{base_url} answers but does not list model {model}",
            fix="check --model",
        )
    return Check(
        check="proposer", status="ok",
        detail=f"{base_url} answers; {len(models)} model(s)" + (f", {model} among them" if model in models else ""),
    )


def _signing_key(context: CliContext, spec: str | None) -> Check:
    """Load the signer `--sign-with` names, sign a probe and verify it; name its scopes in the brain's trust root."""
    if not spec:
        return Check(check="signing key", status="skip", detail="no signing key to check",
                     fix="pass --sign-with KEY, set BRAIN_SIGN_WITH or [sign] sign-with")  # fmt: skip
    from brain.authn.ed25519 import verify
    from cli.signing import load_signer

    try:
        signer = load_signer(spec)
        probe = b"brain doctor: is this key usable?"
        usable = verify(signer.public_key.raw_ed25519, signer.sign(probe), probe)
    except BrainError as e:
        return Check(check="signing key", status="fail", detail=e.message, fix=e.hint or "use an OpenSSH Ed25519 key")
    fingerprint = signer.public_key.fingerprint
    if not usable:
        return Check(check="signing key", status="fail", detail=f"{fingerprint} made a signature that does not verify")
    path = Path(spec).expanduser()
    if path.is_file() and path.stat().st_mode & 0o077:
        return Check(
            check="signing key", status="warn", detail=f"{fingerprint}: {path} is readable by others",
            fix=f"chmod 600 {path}",
        )
    return Check(
        check="signing key", status="ok",
        detail=f"{fingerprint} signs" + _trusted_scopes(context, signer.public_key.text),
    )


def _trusted_scopes(context: CliContext, key_text: str) -> str:
    """`; in the trust root with ingest, commit` (or what is missing) for a governed brain at --brain."""
    try:
        snapshot = context.open_brain().snapshot()
    except BrainError:
        return ""
    root = snapshot.trust_root if snapshot is not None else None
    if root is None:
        return ""
    entry = next((k for k in root.keys if k.key == key_text and k.retired_from is None), None)
    if entry is None:
        return "; but the brain's trust root does not list it (its signatures would not count)"
    return f"; the trust root grants {', '.join(str(s) for s in entry.scopes)}"


def doctor(
    ctx: typer.Context,
    registry: Annotated[
        str | None,
        typer.Option("--registry", metavar="REF", help="Registry repository to check (default: [push] reference)."),
    ] = None,
    proposer: Annotated[
        str | None, typer.Option("--proposer", metavar="NAME", help="Proposer to probe (default: [ingest] proposer).")
    ] = None,
    signing_key: Annotated[
        Path | None,
        typer.Option(
            "--sign-with", envvar="BRAIN_SIGN_WITH", metavar="KEY",
            help="Signing key to try (default: [sign] sign-with).",
        ),
    ] = None,
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Check the environment a CI job needs and say what to fix (exit 1 if a check fails)."""
    context = cli_context(ctx)
    key = signing_key or _configured(context, "sign", "sign-with") or _configured(context, "ingest", "sign-with")
    checks: list[Callable[[], Check]] = [
        lambda: _brain(context),
        lambda: _disk(context),
        lambda: _actor(context),
        lambda: _registry(registry or _configured(context, "push", "reference"), plain_http),
        lambda: _proposer(
            proposer or _configured(context, "ingest", "proposer"), _configured(context, "ingest", "model"),
            _configured(context, "ingest", "base-url"), _configured(context, "ingest", "api-key-env"),
        ),
        lambda: _signing_key(context, str(key) if key else None),
    ]  # fmt: skip
    results = [check() for check in checks]
    result = DoctorResult(ok=not any(c.status == "fail" for c in results), checks=results)
    output = context.output(as_json)
    output.result(result, lambda r: _render(r, output))
    if not result.ok:
        failed = ", ".join(c.check for c in results if c.status == "fail")
        raise ProblemsFoundError(f"doctor: {failed} failed", hint="each failed row says what to fix")


_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


def _render(result: DoctorResult, output: Output) -> Iterable[RenderableType]:
    table = output.table("check", "status", "detail", "fix")
    for check in result.checks:
        table.add_row(check.check, styled(check.status, _STYLE[check.status]), check.detail, check.fix or "")
    yield table
