"""`brain redact ID... --reason TEXT`: destroy blocks' bytes, keep them as members (§7.5).

The blocks whose evidence reaches the named ones are redacted too (shown first, like a drop's cascade;
`--only` limits it to the named blocks); a block that is no longer a member (dropped) but still stored is
destroyed as well. The order (intent, snapshot, destruction, packed copies) is `brain.lifecycle.redact_run`;
an interrupted redaction is finished by `--resume` (or by the next `brain redact`), and until then every
other command refuses. Remote copies are named with the command that deletes them (`oci.redaction`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from brain.errors import LifecycleRefusedError, UsageError
from brain.identity import BlockId, OciDigest
from brain.lifecycle.graph import DependencyGraph
from brain.lifecycle.redact import RedactPlan
from cli.context import cli_context
from cli.lifecycle_view import (
    Refusal,
    affected_table,
    confirm_cascade,
    describe,
    resolve_all,
)
from cli.options import JsonFlag
from cli.output import Result
from oci.remote_copy import RemoteCopy
from cli.signing import SignedHead, SignWithOption, load_signer, with_signature


class RedactResult(Result):
    """What a redaction tombstoned and destroyed (or would, with --dry-run), or why it was refused."""

    dry_run: bool
    snapshot: OciDigest | None
    tombstoned: dict[str, list[BlockId]]
    destroyed_only: list[BlockId] = []
    destroyed_blobs: int
    destroyed_bytes: int
    purged_caches: list[str]
    affected_tags: list[str]
    resumed: bool = False
    discarded: bool = False
    # Registry manifests known (push log, remotes.json) to still hold the bytes, with the command deleting each.
    remote_copies: list[RemoteCopy] = []
    refused: Refusal | None


def redact(
    ctx: typer.Context,
    blocks: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ID|ORIGIN...", show_default=False, help="Block ids, unambiguous prefixes or source origins."
        ),
    ] = None,
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why (recorded, and in tombstones.json).")
    ] = "",
    only: Annotated[bool, typer.Option("--only", help="Only the named blocks, not what quotes them.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be destroyed; write nothing.")] = False,
    resume_flag: Annotated[
        bool, typer.Option("--resume", help="Finish an interrupted redaction (nothing else).")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before redacting a cascade.")] = False,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Destroy blocks' bytes everywhere in the brain directory; they stay members, listed as tombstones."""
    from brain.lifecycle import redact_run
    from brain.store.redaction import unfinished
    from ingest.lifecycle import LOG_LINEAGE  # the lineage log (and the gate's key) load when the command runs
    from oci.redaction import purge_copies

    context = cli_context(ctx)
    _check_arguments(resume_flag, blocks, reason)
    brain = context.open_brain(unfinished_redaction=True)
    output = context.output(as_json)
    if resume_flag or (unfinished(brain.path) and not dry_run):
        resumed = redact_run.resume(brain, purge_copies, lock_timeout=context.lock_timeout, on_wait=context.wait_note())
        if resume_flag:
            output.result(_done(resumed), _render_resumed)
            return
    named = resolve_all(brain, blocks or [])

    def show(plan: RedactPlan, graph: DependencyGraph) -> None:
        if not as_json and plan.tombstones:
            rows = describe(brain, graph, plan.tombstones, plan.requested)
            totals = {t: len(ids) for t, ids in plan.tombstones.items()}
            output.result(rows, lambda r: affected_table(output, r, totals))

    def confirm(plan: RedactPlan, graph: DependencyGraph) -> None:
        show(plan, graph)
        confirm_cascade(output, len(plan.cascade), yes, "redact")

    try:
        outcome = redact_run.redact_blocks(
            brain, named, actor=None if dry_run else context.actor(), reason=reason, purge=purge_copies,
            lineage=LOG_LINEAGE, only=only, dry_run=dry_run,
            signer=None if dry_run or sign_with is None else load_signer(sign_with), confirm=confirm,
            lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
        )  # fmt: skip
    except LifecycleRefusedError as e:
        if as_json:
            output.result(_result(dry_run, None, {}, refused=Refusal.of(e)), lambda r: [])
        raise
    plan = outcome.plan
    if outcome.done is None:
        show(plan, outcome.graph)
        note = f"dry run: would redact {len(plan.destroyed)} blocks; nothing was written"
        output.result(_result(True, None, plan.tombstones, destroyed_only=plan.destroy_only), lambda r: [note])
        return
    done = outcome.done
    result = _result(False, done.snapshot, plan.tombstones, done.destroyed.blobs + done.purged_blobs,
                     done.destroyed.bytes, done.destroyed.caches, done.tags, destroyed_only=plan.destroy_only)
    result = result.model_copy(update={"remote_copies": _remote_copies(brain)})
    signed = outcome.signed
    result = with_signature(result, signed)

    output.result(result, lambda r: _render(r, len(plan.blocks), signed))


def _check_arguments(resume: bool, blocks: list[str] | None, reason: str) -> None:
    if resume and blocks:
        raise UsageError("--resume finishes the interrupted redaction only; run it without block ids")
    if not resume and not blocks:
        raise UsageError("name the blocks to redact (ids, prefixes or origins), or pass --resume")
    if not resume and not reason.strip():
        raise UsageError("a redaction needs --reason TEXT (it is recorded in every removal record)")


def _render(r: RedactResult, count: int, signed: SignedHead | None) -> list[str]:
    lines = [f"redacted {count} blocks in snapshot {r.snapshot.short}" if r.snapshot
             else "" if r.destroyed_only else "already redacted: completed the destruction"]
    if r.destroyed_only:
        lines.append(f"destroyed the stored bytes of {len(r.destroyed_only)} block(s) that are no longer members")
    lines.append(f"destroyed {r.destroyed_blobs} blobs ({r.destroyed_bytes} bytes); caches purged: "
                 f"{', '.join(r.purged_caches) or 'none'}")
    if r.affected_tags:
        lines.append(f"tags that held the bytes were removed: {', '.join(r.affected_tags)} "
                     "(re-pack them with `brain pack --tag TAG`)")
    if r.remote_copies:
        lines.append(f"{len(r.remote_copies)} remote copies still hold the bytes (a registry is not ours to erase):")
        lines += [f"  {c.line()}" for c in r.remote_copies]
    else:
        lines.append("no remote copy is known to hold the bytes (none pushed or pulled signed from here holds them)")
    if signed is not None:
        lines.append(f"signed by {signed.key} (record {signed.record.short})")
    return [line for line in lines if line]


def _remote_copies(brain: object) -> list[RemoteCopy]:
    from brain.brain import Brain
    from oci.redaction import remote_copies

    assert isinstance(brain, Brain)
    return remote_copies(brain)


def _done(done: object) -> RedactResult:
    from brain.lifecycle.redact_run import RedactionDone

    if done is None:
        return _result(False, None, {})
    assert isinstance(done, RedactionDone)
    result = _result(False, None, {}, done.destroyed.blobs + done.purged_blobs, done.destroyed.bytes,
                     done.destroyed.caches, done.tags)
    return result.model_copy(update={"resumed": done.resumed, "discarded": done.discarded})


def _render_resumed(r: RedactResult) -> list[str]:
    if r.discarded:
        return ["the interrupted redaction had not committed its snapshot: nothing was redacted (run it again)"]
    if not r.resumed:
        return ["no interrupted redaction: nothing to resume"]
    return [f"finished the interrupted redaction: destroyed {r.destroyed_blobs} blobs ({r.destroyed_bytes} bytes); "
            f"caches purged: {', '.join(r.purged_caches) or 'none'}"]


def _result(
    dry_run: bool,
    snapshot: OciDigest | None,
    tombstones: dict,
    blobs: int = 0,
    size: int = 0,
    caches: list[str] | None = None,
    tags: list[str] | None = None,
    *,
    destroyed_only: tuple[BlockId, ...] = (),
    refused: Refusal | None = None,
) -> RedactResult:
    return RedactResult(
        dry_run=dry_run, snapshot=snapshot, tombstoned={str(t): list(ids) for t, ids in tombstones.items()},
        destroyed_only=list(destroyed_only), destroyed_blobs=blobs, destroyed_bytes=size, purged_caches=caches or [],
        affected_tags=tags or [], refused=refused,
    )
