"""`brain trust show|pin|rotate|revoke`: the trust root in force, the consumer's pin, and revisions (§9.5).

A revision is a snapshot that keeps the head's modules and changes only the trust root; it moves the head
once the previous root's govern quorum has signed it. With one govern key that happens in one command
(`--sign-with`); with several, `--plan FILE` writes the exact bytes, each holder runs
`brain sign --document FILE -o R`, and `--apply FILE --record R...` moves the head.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import Field
from rich.console import RenderableType

from brain.authn.rotation import RootChange
from brain.errors import UsageError
from brain.identity import OciDigest
from brain.snapshot import TrustRoot
from cli.context import CliContext, cli_context
from cli.options import JsonFlag
from cli.output import Output, Result
from cli.signing import (
    load_signer,
    parse_trust_key_spec,
    read_public_key,
)

if TYPE_CHECKING:
    from brain.trust_ops import Revision

trust = typer.Typer(name="trust", help="Show, pin and revise the brain's trust root.", no_args_is_help=True)


class TrustKeyView(Result):
    """One key of the root in force."""

    fingerprint: str
    key: str
    scopes: list[str]
    since: int
    subject: str | None = None
    retired_from: int | None = None
    compromised_from: str | None = None


class TrustShowResult(Result):
    """The head's trust root and the local pin."""

    snapshot: str
    trust_root: str | None
    revision: int | None
    govern_quorum: int | None
    keys: list[TrustKeyView]
    pin: dict[str, str] | None
    pin_satisfied: bool | None


class PinResult(Result):
    """The pin now recorded in boltzmann/trust.json."""

    trust_root: str
    source: str
    genesis: str | None
    pinned_at: str


class RevisionResult(Result):
    """A revision planned (written to a file) or applied (the head moved)."""

    snapshot: str
    revision: int
    trust_root: str
    applied: bool
    plan: str | None = None
    quorum_required: int | None = None
    quorum_met: int | None = None
    records: list[str] = Field(default_factory=list)


def _views(root: TrustRoot | None) -> list[TrustKeyView]:
    from brain.authn.keys import parse_trust_key

    views = []
    for entry in () if root is None else root.keys:
        views.append(TrustKeyView(
            fingerprint=parse_trust_key(entry.key).fingerprint, key=entry.key, scopes=[str(s) for s in entry.scopes],
            since=entry.since, subject=entry.subject, retired_from=entry.retired_from,
            compromised_from=None if entry.compromised_from is None else str(entry.compromised_from),
        ))
    return views


@trust.command("show")
def show(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Show the head's trust root (keys, scopes, quorum) and the local pin."""
    from brain.authenticity import judge
    from brain.store.authn_files import read_pin

    context = cli_context(ctx)
    brain = context.open_brain()
    head = brain.snapshot()
    if head is None:
        raise UsageError(f"the brain at {brain.path} is empty")
    root = head.trust_root
    pin = read_pin(brain.path)
    satisfied = None if pin is None else judge(brain).pinned
    result = TrustShowResult(
        snapshot=str(brain.snapshot_digest()), trust_root=None if root is None else str(root.digest),
        revision=None if root is None else root.revision, govern_quorum=None if root is None else root.govern_quorum,
        keys=_views(root), pin=None if pin is None else {k: str(v) for k, v in pin.to_json().items()},
        pin_satisfied=satisfied,
    )
    output = context.output(as_json)
    output.result(result, lambda r: _render_show(r, output))


def _render_show(result: TrustShowResult, output: Output) -> Iterable[RenderableType]:
    if result.trust_root is None:
        yield f"snapshot {result.snapshot}: not governed (no trust root)"
    else:
        yield f"trust root {result.trust_root}  revision {result.revision}, govern quorum {result.govern_quorum}"
        table = output.table("key", "scopes", "since", "subject", "status")
        for key in result.keys:
            status = "compromised from " + key.compromised_from[:19] if key.compromised_from else (
                f"retired from {key.retired_from}" if key.retired_from else "active")
            table.add_row(key.fingerprint, ",".join(key.scopes), str(key.since), key.subject or "-", status)
        yield table
    if result.pin is None:
        yield "pin: none (`brain trust pin` records the current root)"
    else:
        state = "satisfied" if result.pin_satisfied else "NOT satisfied by this chain"
        yield f"pin: {result.pin['trust_root']} ({result.pin['source']}), {state}"


@trust.command("pin")
def pin(
    ctx: typer.Context,
    digest: Annotated[
        str | None,
        typer.Argument(metavar="[DIGEST]", help="A trust-root digest obtained out of band; default: the head's.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Pin the trust root this brain must descend from (boltzmann/trust.json)."""
    from brain.trust_ops import pin_trust_root

    context = cli_context(ctx)
    brain = context.open_brain()
    target = None if digest is None else OciDigest.parse(digest)
    record = pin_trust_root(brain, target, lock_timeout=context.lock_timeout, on_wait=context.wait_note())
    genesis = record.genesis
    result = PinResult(trust_root=str(record.trust_root), source=str(record.source),
                       genesis=None if genesis is None else str(genesis), pinned_at=record.pinned_at)
    context.output(as_json).result(result, lambda r: f"pinned trust root {r.trust_root} ({r.source})")


_SignWithMany = Annotated[
    list[str] | None,
    typer.Option(
        "--sign-with", envvar="BRAIN_SIGN_WITH", metavar="KEY",
        help="Sign the revision with this govern key (repeatable).",
    ),
]
_Plan = Annotated[
    Path | None,
    typer.Option("--plan", metavar="FILE", help="Write the revision's exact bytes here for several holders to sign."),
]
_Apply = Annotated[Path | None, typer.Option("--apply", metavar="FILE", help="Apply a plan written by --plan.")]
_Records = Annotated[
    list[Path] | None,
    typer.Option("--record", metavar="FILE", help="With --apply: a record from `brain sign --document` (repeatable)."),
]


@trust.command("rotate")
def rotate(
    ctx: typer.Context,
    add: Annotated[
        list[str] | None, typer.Option("--add", metavar="PUBKEY[=SCOPES][@SUBJECT]", help="Admit a key (repeatable).")
    ] = None,
    remove: Annotated[
        list[str] | None, typer.Option("--remove", metavar="PUBKEY", help="Remove a key (repeatable).")
    ] = None,
    scopes: Annotated[
        list[str] | None, typer.Option("--scopes", metavar="PUBKEY=SCOPES", help="Change a key's scopes (repeatable).")
    ] = None,
    quorum: Annotated[int | None, typer.Option("--quorum", min=1, metavar="N", help="The new govern quorum.")] = None,
    sign_with: _SignWithMany = None,
    plan: _Plan = None,
    apply: _Apply = None,
    record: _Records = None,
    as_json: JsonFlag = False,
) -> None:
    """Make a trust-root revision: add/remove keys, change scopes or the quorum."""
    context = cli_context(ctx)
    if apply is not None:
        if add or remove or scopes or quorum is not None or plan is not None:
            raise UsageError("--apply takes only --record and --sign-with: the plan already says what changes")
        _apply(context, apply, list(record or ()), list(sign_with or ()), as_json)
        return
    change = RootChange(
        add=[parse_trust_key_spec(s) for s in add or ()], remove=[read_public_key(k) for k in remove or ()],
        quorum=quorum,
    )
    for spec in scopes or ():
        entry = parse_trust_key_spec(spec)
        change.scopes[read_public_key(entry.key).blob] = entry.scopes
    _revise(context, change, list(sign_with or ()), plan, as_json)


@trust.command("revoke")
def revoke(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(metavar="KEY", help="The key: a .pub file or 'ssh-ed25519 AAAA...'.")],
    retired: Annotated[
        bool, typer.Option("--retired", help="Retire it from the new revision on (earlier signatures stand).")
    ] = False,
    compromised_from: Annotated[
        str | None,
        typer.Option(
            "--compromised-from", metavar="SNAPSHOT", help="Withdraw its signatures over SNAPSHOT and descendants."
        )
    ] = None,
    sign_with: _SignWithMany = None,
    plan: _Plan = None,
    as_json: JsonFlag = False,
) -> None:
    """Revoke a key by a revision: retire it, or mark it compromised from a snapshot on."""
    context = cli_context(ctx)
    if retired == (compromised_from is not None):
        raise UsageError("say how: --retired or --compromised-from SNAPSHOT (one of them)")
    public = read_public_key(key)
    change = RootChange()
    if retired:
        change.retire.append(public)
    else:
        brain = context.open_brain()
        change.compromised[public.blob] = brain.resolve_snapshot_prefix(compromised_from or "")
    _revise(context, change, list(sign_with or ()), plan, as_json)


def _revise(context: CliContext, change: RootChange, keys: list[str], plan_file: Path | None, as_json: bool) -> None:
    from brain.trust_ops import revise_trust_root

    brain = context.open_brain()
    signers = (load_signer(k) for k in keys)  # opened once the revision is planned
    revision = revise_trust_root(brain, change, signers, plan_file=plan_file, lock_timeout=context.lock_timeout,
                                 on_wait=context.wait_note())
    context.output(as_json).result(_revision_result(revision, plan_file), _render_revision)


def _apply(context: CliContext, plan_file: Path, record_files: list[Path], keys: list[str], as_json: bool) -> None:
    from brain.trust_ops import apply_plan, read_plan, read_record

    brain = context.open_brain()
    plan = read_plan(plan_file, "--apply")
    records = [read_record(path) for path in record_files]
    revision = apply_plan(brain, plan, records, (load_signer(k) for k in keys), lock_timeout=context.lock_timeout,
                          on_wait=context.wait_note())
    context.output(as_json).result(_revision_result(revision, None), _render_revision)


def _revision_result(revision: Revision, plan_file: Path | None) -> RevisionResult:
    root = revision.plan.trust_root
    assert root is not None
    if not revision.applied:
        return RevisionResult(snapshot=str(revision.plan.digest), revision=root.revision, trust_root=str(root.digest),
                              applied=False, plan=str(plan_file))
    auth = revision.authentication
    assert auth is not None
    return RevisionResult(snapshot=str(revision.digest), revision=root.revision, trust_root=str(root.digest),
                          applied=True, quorum_required=auth.quorum_required, quorum_met=auth.quorum_met,
                          records=[str(r.digest) for r in revision.records])


def _render_revision(result: RevisionResult) -> Iterable[str]:
    if not result.applied:
        yield f"planned revision {result.revision} (snapshot {result.snapshot}) in {result.plan}"
        yield (
            f"each govern holder: brain sign --document {result.plan} --sign-with KEY -o RECORD; "
            f"then brain trust rotate --apply {result.plan} --record RECORD..."
        )
        return
    yield f"trust root revision {result.revision} is the head: {result.snapshot}"
    yield f"quorum {result.quorum_met} of {result.quorum_required}; {len(result.records)} record(s)"
