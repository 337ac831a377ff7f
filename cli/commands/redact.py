"""`brain redact ID... --reason TEXT`: destroy blocks' bytes, keep them as members (§7.5).

The blocks whose evidence reaches the named ones are redacted too (shown first, like a drop's cascade;
`--only` limits it to the named blocks). One snapshot lists them in their module references' `tombstones`
and adds `removal` records (mechanism `tombstone`); then the bytes leave the whole brain directory: blobs
(recorded in `boltzmann/tombstones.json` first, so nothing writes them back), the packed artifacts in
`index.json` that hold them (their tags are reported, to re-pack), and the caches that quote block text.
Re-running completes an interrupted redaction.
"""

from __future__ import annotations

from typing import Annotated

import typer

from brain.errors import LifecycleRefusedError, NotFoundError, UsageError
from brain.identity import BlockId, OciDigest, utc_timestamp
from brain.lifecycle.apply import commit_records
from brain.lifecycle.destroy import destroy
from brain.lifecycle.records import actor_of
from brain.lifecycle.redact import RedactPlan, plan_redaction
from brain.snapshot import TrustScope
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
from cli.signing import SigningPlan, SignWithOption, with_signature


class RedactResult(Result):
    """What a redaction tombstoned and destroyed (or would, with --dry-run), or why it was refused."""

    dry_run: bool
    snapshot: OciDigest | None
    tombstoned: dict[str, list[BlockId]]
    destroyed_blobs: int
    destroyed_bytes: int
    purged_caches: list[str]
    affected_tags: list[str]
    refused: Refusal | None


def redact(
    ctx: typer.Context,
    blocks: Annotated[list[str], typer.Argument(metavar="ID|ORIGIN...", help="Block ids, unambiguous prefixes or source origins.",
                                                show_default=False)],
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why (recorded, and in tombstones.json).")] = "",
    only: Annotated[bool, typer.Option("--only", help="Only the named blocks, not what quotes them.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be destroyed; write nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before redacting a cascade.")] = False,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Destroy blocks' bytes everywhere in the brain directory; they stay members, listed as tombstones."""
    from ingest.lineage_graph import graph_of  # the lineage log (and the gate's key) load when the command runs

    context = cli_context(ctx)
    if not reason.strip():
        raise UsageError("a redaction needs --reason TEXT (it is recorded in every removal record)")
    brain = context.open_brain()
    output = context.output(as_json)
    named = resolve_all(brain, blocks)

    def plan_on(snapshot: OciDigest, *, persist: bool) -> RedactPlan:
        modules = brain.modules(snapshot)
        members = {t: m.members for t, m in modules.items()}
        tombstoned = frozenset().union(*(m.tombstones for m in modules.values()))
        graph = graph_of(brain, snapshot, persist=persist)
        try:
            plan = plan_redaction(named, members, tombstoned.__contains__, graph, only=only)
        except LifecycleRefusedError as e:
            if as_json:
                output.result(_result(dry_run, None, {}, refused=Refusal.of(e)), lambda r: [])
            raise
        if not as_json and plan.tombstones:
            rows = describe(brain, graph, plan.tombstones, plan.requested)
            totals = {t: len(ids) for t, ids in plan.tombstones.items()}
            output.result(rows, lambda r: affected_table(output, r, totals))
        return plan

    if dry_run:
        head = brain.snapshot_digest()
        if head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to redact")
        plan = plan_on(head, persist=False)
        note = f"dry run: would redact {len(plan.blocks)} blocks; nothing was written"
        output.result(_result(True, None, plan.tombstones), lambda r: [note])
        return
    from oci.redaction import purge_artifacts

    signing = SigningPlan.prepare(brain, sign_with, {TrustScope.REDACT, TrustScope.COMMIT}, "this redaction")
    with context.writer(brain) as writer:
        if writer.head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to redact")
        plan = plan_on(writer.head.snapshot, persist=True)
        confirm_cascade(output, len(plan.cascade), yes, "redact")
        digest = None
        if plan.tombstones:
            for memory_type, ids in plan.tombstones.items():
                writer.tombstone(memory_type, ids)
            records = plan.records(actor=actor_of(writer.actor), at=utc_timestamp(), reason=reason)
            digest = commit_records(writer, records)
        head = writer.head.snapshot
        # Under the lock, after the head names the tombstones: an interrupted run is completed by the next one.
        destroyed = destroy(brain, head, reason)
        redacted = frozenset().union(*(m.tombstones for m in brain.modules(head).values()))
        purged = purge_artifacts(brain, redacted)
    result = _result(False, digest, plan.tombstones, destroyed.blobs + purged.blobs, destroyed.bytes,
                     destroyed.caches, purged.tags)
    signed = signing.sign_new_head(context)
    result = with_signature(result, signed)

    def render(r: RedactResult) -> list[str]:
        lines = [f"redacted {len(plan.blocks)} blocks in snapshot {digest.short}" if digest
                 else "already redacted: completed the destruction"]
        lines.append(f"destroyed {r.destroyed_blobs} blobs ({r.destroyed_bytes} bytes); caches purged: "
                     f"{', '.join(r.purged_caches) or 'none'}")
        if r.affected_tags:
            lines.append(f"tags that held the bytes were removed: {', '.join(r.affected_tags)} "
                         "(re-pack them with `brain pack --tag TAG`)")
        lines.append("remote copies are not ours to erase: delete pushed tags that predate this redaction")
        if signed is not None:
            lines.append(f"signed by {signed.key} (record {signed.record.short})")
        return lines

    output.result(result, render)


def _result(
    dry_run: bool,
    snapshot: OciDigest | None,
    tombstones: dict,
    blobs: int = 0,
    size: int = 0,
    caches: list[str] | None = None,
    tags: list[str] | None = None,
    *,
    refused: Refusal | None = None,
) -> RedactResult:
    return RedactResult(
        dry_run=dry_run, snapshot=snapshot, tombstoned={str(t): list(ids) for t, ids in tombstones.items()},
        destroyed_blobs=blobs, destroyed_bytes=size, purged_caches=caches or [], affected_tags=tags or [],
        refused=refused,
    )
