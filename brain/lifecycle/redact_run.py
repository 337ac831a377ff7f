"""The redaction use case (§7.5) in the one order that cannot leak, and its resumption.

Under the writer lock:

1. the intent (`boltzmann/redaction.json`, `brain.store.redaction`): the blocks to tombstone, every digest
   whose file goes (hex → reason) and the head it starts from, fsynced — before anything moves;
2. the snapshot that lists the tombstones and adds the `removal` records: the head moves;
3. the destruction (`brain.lifecycle.destroy`): the digests join `boltzmann/tombstones.json` (so nothing
   writes them back), the blob files go, the text caches go;
4. the packed copies (`purge`, handed in by the caller: the OCI layer's knowledge of layouts and layers);
5. the intent is removed: the redaction is finished.

A kill after 1 leaves an unfinished redaction that every writer refuses, `verify` reports and
`resume` (`brain redact --resume`, or any later `brain redact`) completes: from step 3 if the head moved,
or by discarding the intent if it never did. A redaction of blocks that are no longer members (dropped,
still stored) has no step 2: its destruction is the whole of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from brain.blocks.memory_type import MemoryType
from brain.errors import BrainError, NotFoundError, UsageError
from brain.head_signing import HeadSigning, SignedHead
from brain.identity import BlockId, OciDigest, utc_timestamp
from brain.lifecycle.apply import commit_records
from brain.lifecycle.destroy import Destroyed, destroy, installed_contents, record_destroyed
from brain.lifecycle.graph import DependencyGraph
from brain.lifecycle.records import actor_of
from brain.lifecycle.redact import RedactPlan, content_digests, plan_redaction
from brain.lifecycle.usecases import LEDGER_LINEAGE, Lineage
from brain.lifecycle.vector_payloads import payloads_holding
from brain.module import read_block
from brain.snapshot import TrustScope
from brain.store.head import read_head
from brain.store.lock import WriterLock
from brain.store.redaction import RedactionIntent, clear_intent, read_intent, unfinished, write_intent

if TYPE_CHECKING:
    from brain.authn.signer import Signer
    from brain.blocks.provenance import Actor
    from brain.brain import Brain
    from brain.writer import Writer


class Purged(Protocol):
    """What the caller's purge of packed copies reports."""

    tags: list[str]
    blobs: int


Purge = Callable[["Brain", frozenset[BlockId]], Purged]


@dataclass
class RedactionDone:
    """What one redaction (or the resumption of one) did."""

    snapshot: OciDigest | None = None  # the snapshot that tombstones the blocks (None: none was committed)
    destroyed: Destroyed = field(default_factory=Destroyed)
    purged_blobs: int = 0
    tags: list[str] = field(default_factory=list)
    resumed: bool = False  # an interrupted redaction was completed
    discarded: bool = False  # an interrupted redaction had not committed: its intent was dropped
    redacted: frozenset[BlockId] = frozenset()  # every block whose bytes are now destroyed here


def stored_block_type(brain: Brain, block: BlockId) -> MemoryType | None:
    """The memory type of a stored, readable block envelope (None: not stored, or not a block)."""
    if not brain.blobs.has(block):
        return None
    try:
        return read_block(brain.blobs, block).memory_type
    except BrainError:
        return None


def destruction_set(brain: Brain, head: OciDigest, blocks: Iterable[BlockId], reason: str) -> dict[str, str]:
    """Hex → reason for the envelopes of `blocks`, the content blobs they name that no member staying
    readable in `head` names too, and the vector-index payloads holding their vectors
    (`brain.lifecycle.vector_payloads`)."""
    leaving = list(blocks)
    keep = installed_contents(brain, head, leaving)
    found: dict[str, str] = dict.fromkeys(payloads_holding(brain, head, leaving), reason)
    for block_id in leaving:
        found[block_id.hex] = reason
        try:
            block = read_block(brain.blobs, block_id)
        except BrainError:
            continue  # already destroyed, or unreadable: its envelope digest is still recorded
        for hex_digest in content_digests(block):
            if hex_digest not in keep:
                found[hex_digest] = reason
    return found


def redact(writer: Writer, plan: RedactPlan, *, reason: str, actor: Actor, at: str, purge: Purge) -> RedactionDone:
    """Run `plan` through the open `writer` in the order of the module docstring."""
    brain = writer.brain
    assert writer.head is not None
    parent = writer.head.snapshot
    intent = RedactionIntent(
        parent=parent,
        tombstones={str(t): [str(b) for b in ids] for t, ids in plan.tombstones.items()},
        destroy=destruction_set(brain, parent, plan.destroyed, reason),
        reason=reason,
    )
    write_intent(brain.path, intent)
    digest = None
    if plan.tombstones:
        for memory_type, ids in plan.tombstones.items():
            writer.tombstone(memory_type, ids)
        digest = commit_records(writer, plan.records(actor=actor, at=at, reason=reason))
    assert writer.head is not None
    done = _complete(brain, writer.head.snapshot, intent, purge)
    done.snapshot = digest
    return done


def _complete(brain: Brain, head: OciDigest, intent: RedactionIntent, purge: Purge) -> RedactionDone:
    """Steps 3-5: destroy, purge the packed copies, remove the intent."""
    record_destroyed(brain, intent.destroy)
    destroyed = destroy(brain, head, intent.reason)
    tombstoned = frozenset().union(*(m.tombstones for m in brain.modules(head).values()))
    redacted = tombstoned | {BlockId(h) for h in intent.destroy}
    purged = purge(brain, redacted)
    clear_intent(brain.path)
    return RedactionDone(destroyed=destroyed, purged_blobs=purged.blobs, tags=list(purged.tags), redacted=redacted)


def resume(brain: Brain, purge: Purge, *, lock_timeout: float | None = None,
           on_wait: Callable[[str], None] | None = None) -> RedactionDone | None:
    """Finish an interrupted redaction (None when there is none), under the writer lock."""
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        intent = read_intent(brain.path)
        if intent is None:
            return None
        head = read_head(brain.path)
        committed = not intent.tombstones or (head is not None and head.snapshot != intent.parent)
        if head is None or not committed:
            clear_intent(brain.path)  # killed before its snapshot: the redaction never happened
            return RedactionDone(discarded=True)
        done = _complete(brain, head.snapshot, intent, purge)
        done.resumed = True
        return done


# --- the use case `brain redact` and `sdk.Brain.redact` run ------------------------------------------------------

@dataclass(frozen=True)
class RedactOutcome:
    """A redaction's plan and, unless it was a dry run, what it did; `resumed`: the interrupted redaction it
    finished first (None when there was none)."""

    plan: RedactPlan
    graph: DependencyGraph
    dry_run: bool
    done: RedactionDone | None = None
    resumed: RedactionDone | None = None
    signed: SignedHead | None = None

    @property
    def snapshot(self) -> OciDigest | None:
        """The snapshot that tombstones the blocks (None: a dry run, or only non-members were destroyed)."""
        return None if self.done is None else self.done.snapshot

    @property
    def tombstones(self) -> dict[str, list[BlockId]]:
        """Block ids tombstoned (or that would be) per module name."""
        return {str(t): list(ids) for t, ids in self.plan.tombstones.items()}


def redact_blocks(
    brain: Brain,
    targets: Sequence[BlockId],
    *,
    actor: str | None,
    reason: str,
    purge: Purge,
    lineage: Lineage = LEDGER_LINEAGE,
    only: bool = False,
    dry_run: bool = False,
    signer: Signer | None = None,
    confirm: Callable[[RedactPlan, DependencyGraph], None] | None = None,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> RedactOutcome:
    """Redact `targets` and what quotes them (`only`: just them) in the order of the module docstring.

    `lineage` answers the dependency graph (`ingest.lifecycle.LOG_LINEAGE`: the lineage log, what the CLI and
    `sdk.Brain` use). An interrupted redaction is finished first (unless a dry run). A dry run plans on the head
    without the lock and writes nothing. Otherwise the plan is made under the writer lock, `confirm` (if given) sees it
    before anything is written and may raise to stop, and `signer` signs the new head.
    """
    if not reason.strip():
        raise UsageError("a redaction needs --reason TEXT (it is recorded in every removal record)")
    if dry_run:
        head = brain.snapshot_digest()
        if head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to redact")
        graph = lineage.graph(brain, head, persist=False)
        return RedactOutcome(_plan_on(brain, head, targets, graph, only), graph, dry_run=True)
    resumed = resume(brain, purge, lock_timeout=lock_timeout, on_wait=on_wait) if unfinished(brain.path) else None
    if actor is None:
        raise UsageError("a redaction writes a snapshot: it needs an actor", hint="pass actor=name@example.org")
    signing = HeadSigning.prepare(brain, signer, {TrustScope.REDACT, TrustScope.COMMIT}, "this redaction")
    with brain.writer(actor, lock_timeout, on_wait) as writer:
        if writer.head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: nothing to redact")
        graph = lineage.graph(brain, writer.head.snapshot)
        plan = _plan_on(brain, writer.head.snapshot, targets, graph, only)
        if confirm is not None:
            confirm(plan, graph)
        done = redact(writer, plan, reason=reason, actor=actor_of(writer.actor), at=utc_timestamp(), purge=purge)
    signed = signing.sign_new_head(lock_timeout=lock_timeout, on_wait=on_wait)
    return RedactOutcome(plan, graph, dry_run=False, done=done, resumed=resumed, signed=signed)


def _plan_on(brain: Brain, snapshot: OciDigest, targets: Sequence[BlockId], graph: DependencyGraph,
             only: bool) -> RedactPlan:
    modules = brain.modules(snapshot)
    members = {t: m.members for t, m in modules.items()}
    tombstoned: frozenset[BlockId] = frozenset().union(*(m.tombstones for m in modules.values()))
    return plan_redaction(targets, members, tombstoned.__contains__, graph, only=only,
                          stored=lambda b: stored_block_type(brain, b))
