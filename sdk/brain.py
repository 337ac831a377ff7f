"""`sdk.Brain`: every operation of the `brain` command as a method, for notebooks, scripts and services.

Thin on purpose (sqlite-utils' rule: the CLI and the library mirror each other): each method is a few lines
calling the use case the command calls, so both learn one vocabulary and give the same results. The use
cases live below this package: `brain` (lifecycle, trust, prune, verify, log), `ingest` (ingest + sync +
sign, targets), `oci` (pack, push, pull, diff sides), `retrieval` (search). Errors are `brain.errors`
families; each carries the exit code the command would exit with (`BrainError.exit_code`).

The heavy layers import when a method first needs them, so `import sdk` costs what `import brain` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain as CoreBrain
from brain.identity import BlockId, OciDigest
from brain.ledger import Ledger
from brain.module import Module
from brain.snapshot import Snapshot, TrustRoot

if TYPE_CHECKING:
    from brain.authn.records import SignatureRecord
    from brain.authn.signer import Signer
    from brain.branches.operations import BranchChange, BranchList, CheckoutResult
    from brain.lifecycle.compare import DiffResult
    from brain.lifecycle.log import LogEntry
    from brain.lifecycle.prune import PruneReport
    from brain.lifecycle.redact_run import RedactionDone, RedactOutcome
    from brain.lifecycle.usecases import DropOutcome, StanceOutcome
    from brain.reconcile.operations import Outcome
    from brain.reconcile.plan import MergePlan
    from brain.reconcile.state import AcceptedRemovals, ReconcileState, Resolution
    from brain.verify import VerifyReport
    from ingest.usecase import SignedIngestResult
    from oci.pack import PackResult
    from oci.pull import PullResult
    from oci.push import PushResult
    from retrieval.models import ContextResult, SearchResult
    from retrieval.proofs import Prover
    from retrieval.query import Searcher, Views

DEFAULT_LOCK_TIMEOUT = 10.0


class Brain:
    """A brain directory and who acts on it; `core` is the protocol-level `brain.Brain` (reads, proofs, writer)."""

    def __init__(self, core: CoreBrain, *, actor: str | None = None, lock_timeout: float | None = DEFAULT_LOCK_TIMEOUT):
        self.core = core
        self._actor = actor
        self._resolved: str | None = None
        self.lock_timeout = lock_timeout
        self.pulled: PullResult | None = None
        """What `Brain.pull` installed (None for a brain opened or created here)."""
        self._warm: tuple[Prover, Views] | None = None  # proof trees and views kept between searches

    def __repr__(self) -> str:
        return f"sdk.Brain({str(self.path)!r})"

    # --- opening -------------------------------------------------------------------------------------------

    @classmethod
    def init(
        cls, path: Path | str, *, actor: str | None = None, trust_root: TrustRoot | None = None,
        sign_with: str | Signer | None = None,
    ) -> Brain:  # fmt: skip
        """Create an empty brain at `path` (`brain init`); with `trust_root`, a governed genesis signed by
        `sign_with`."""
        if trust_root is None:
            return cls(CoreBrain.init(Path(path)), actor=actor)
        from brain.trust_ops import init_governed
        from ingest.usecase import open_signer

        core, _, _ = init_governed(Path(path), trust_root, _signer(open_signer(sign_with)))
        return cls(core, actor=actor)

    @classmethod
    def open(cls, path: Path | str, *, actor: str | None = None) -> Brain:
        """Open an existing brain (`NotABrainError` if `path` is not one)."""
        return cls(CoreBrain.open(Path(path)), actor=actor)

    @classmethod
    def pull(
        cls, ref: str, path: Path | str, *, actor: str | None = None, modules: set[MemoryType] | None = None,
        force: bool = False, plain_http: bool = False, require_signed: bool = False,
    ) -> Brain:  # fmt: skip
        """Pull `ref` into `path` (created if needed), verified and authenticated before the head moves
        (`brain pull`); the report is the returned brain's `pulled`."""
        from oci.authenticate import PullPolicy
        from oci.pull import brain_to_pull_into
        from oci.pull import pull as pull_artifact
        from oci.reference import parse_reference

        reference = parse_reference(ref, plain_http=plain_http)
        with brain_to_pull_into(Path(path)) as (core, _):
            result = pull_artifact(core, reference, modules, force=force, lock_timeout=DEFAULT_LOCK_TIMEOUT,
                                   authn=PullPolicy(require_signed=require_signed))
        brain = cls(core, actor=actor)
        brain.pulled = result
        return brain

    # --- reading -------------------------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self.core.path

    @property
    def actor(self) -> str:
        """The acting identity writes record: the one given, else git's user.email or `$USER@localhost.localdomain`."""
        from sdk.actor import resolve_actor

        if self._resolved is None:
            self._resolved = resolve_actor(self._actor)
        return self._resolved

    def snapshot(self) -> Snapshot | None:
        """The head's snapshot (None for an empty brain)."""
        return self.core.snapshot()

    def snapshot_digest(self) -> OciDigest | None:
        """The head's digest (None for an empty brain)."""
        return self.core.snapshot_digest()

    def modules(self) -> dict[MemoryType, Module]:
        """The head's modules, in module order."""
        return self.core.modules()

    def ledger(self) -> Ledger:
        """The head's ledger (§7.1): `Ledger.of(brain.modules())`."""
        return self.core.ledger()

    def resolve(self, target: str | BlockId) -> BlockId:
        """The block a target names: an id, a unique prefix, a source origin, or a local file's origin."""
        from ingest.targets import resolve_all

        return resolve_all(self.core, [target])[0]

    def search(
        self, query: str, *, limit: int | None = None, types: Sequence[str] = (), expand: bool = True,
        include_superseded: bool = False, subject: str | None = None, since: str | None = None,
        until: str | None = None, at: str | None = None,
    ) -> SearchResult:  # fmt: skip
        """Ranked, verified evidence bundles from the local index, brought to the head first (`brain search`).
        `at`: search that snapshot instead — a branch, `HEAD~N`, a local tag, a snapshot digest or a prefix of
        one (`--at REF`; its index is built in memory, the head's is left alone)."""
        from retrieval import DEFAULT_LIMIT
        from retrieval.query import SearchRequest

        request = SearchRequest(query=query, types=tuple(t.lower() for t in types), subject=subject, since=since,
                                until=until, limit=DEFAULT_LIMIT if limit is None else limit,
                                include_superseded=include_superseded, expand=expand)
        request.validate()
        searcher = self._searcher(at)
        try:
            return searcher.search(request)
        finally:
            searcher.close()

    def context(
        self, query: str, *, max_tokens: int = 2000, types: Sequence[str] = (), include_superseded: bool = False,
        at: str | None = None,
    ) -> ContextResult:
        """The best verified hits for `query` packed into a `max_tokens` budget, each citable (`brain context`);
        `at` as for `search`."""
        from retrieval.context import ContextRequest, pack

        request = ContextRequest(query=query, max_tokens=max_tokens, types=tuple(t.lower() for t in types),
                                 include_superseded=include_superseded)
        request.validate()
        request.search().validate()
        searcher = self._searcher(at)
        try:
            return pack(searcher, request)
        finally:
            searcher.close()

    def _searcher(self, at: str | None) -> Searcher:
        """A searcher over the head, or over the snapshot `at` names (resolved as `--at REF` is); its proof
        trees and views are this object's, warm from the last search (both keyed by content: a moved head
        only adds to them)."""
        from retrieval.proofs import Prover
        from retrieval.query import Searcher, Views

        if self._warm is None:
            self._warm = (Prover(self.core), Views(self.core))
        prover, views = self._warm
        if at is None:
            return Searcher(self.core, prover=prover, views=views)
        from brain.branches.operations import resolve_start
        from oci.diff_sides import local_tag_snapshot
        from retrieval.pinned import searcher_at

        snapshot = resolve_start(self.core, at, tagged=lambda tag: local_tag_snapshot(self.core, tag))
        return searcher_at(self.core, snapshot, prover=prover, views=views)

    def verify(self, *, deep: bool = False, snapshot: OciDigest | None = None, jobs: int | None = None) -> VerifyReport:
        """Integrity, ledger consistency and resolvability (`brain verify`); `report.ok` says whether it passed."""
        from brain.verify import verify_brain
        from ingest.renormalizer import InstalledPipelines

        return verify_brain(self.core, snapshot=snapshot, jobs=jobs,
                            renormalizer=InstalledPipelines() if deep else None)

    def log(self) -> list[LogEntry]:
        """The snapshot history, newest first (`brain log`)."""
        from brain.lifecycle.log import log

        return log(self.core)

    def diff(self, a: str | None = None, b: str | None = None, *, plain_http: bool = False) -> DiffResult:
        """What changed between two snapshots (`brain diff`): digests, prefixes, tags, HEAD~N or registry REFs;
        default: the head's first parent and the head."""
        from oci.diff_sides import diff

        return diff(self.core, a, b, plain_http=plain_http)

    # --- writing -------------------------------------------------------------------------------------------

    def ingest(
        self, paths: Sequence[Path | str], *, proposer: str = "heuristic", license: str | None = None,
        origin: str | None = None, sync: bool = False, strict: bool = False, dry_run: bool = False,
        shard: str | None = None, base: str | None = None, sign_with: str | Signer | None = None,
    ) -> SignedIngestResult:  # fmt: skip
        """Register sources, propose knowledge, commit what the gate validates (`brain ingest`); with `sync`, drop
        or demote sources whose files are gone; `strict` raises `ProblemsFoundError` after committing if any
        source failed or any candidate was rejected. `license` is an SPDX expression; `shard="I/N"` ingests only
        that shard's sources, `base` refuses unless the brain starts from that snapshot (`"empty"`: none)."""
        from ingest.license import spdx_expression
        from ingest.run import IngestOptions
        from ingest.shard import Shard
        from ingest.usecase import ingest_paths, strict_failure

        options = IngestOptions(proposer=proposer, license=None if license is None else spdx_expression(license),
                                origin=origin, dry_run=dry_run, shard=None if shard is None else Shard.parse(shard),
                                base=base)
        result = ingest_paths(self.core, [Path(p) for p in paths], options, actor=self.actor, sync=sync,
                              sign_with=sign_with, lock_timeout=self.lock_timeout)
        if strict and (failure := strict_failure(result)) is not None:
            raise failure
        return result

    def drop(
        self, targets: Sequence[str | BlockId] = (), *, reason: str, allow_canonical: bool = False,
        dry_run: bool = False, policy: str | None = None, producer: str | None = None,
        modules: Sequence[MemoryType] = (), sign_with: str | Signer | None = None,
    ) -> DropOutcome:  # fmt: skip
        """Drop blocks and their cascade in one snapshot (`brain drop`): `outcome.removals` by module, and
        `outcome.snapshot` unless `dry_run`. Name `targets`, or everything a `producer` made."""
        from brain.errors import UsageError
        from brain.lifecycle.usecases import drop, made_by
        from ingest.lifecycle import LOG_LINEAGE
        from ingest.targets import resolve_all
        from ingest.usecase import open_signer

        if bool(targets) == (producer is not None):
            raise UsageError("name the targets to drop, or a producer, not both and not neither")
        select = made_by(producer, modules) if producer is not None else (lambda m, g: resolve_all(self.core, targets))
        return drop(self.core, select, actor=None if dry_run else self.actor, reason=reason, policy=policy,
                    allow_canonical=allow_canonical, dry_run=dry_run, signer=open_signer(sign_with),
                    lineage=LOG_LINEAGE, lock_timeout=self.lock_timeout)

    def supersede(
        self, old: str | BlockId, new: str | BlockId, *, reason: str | None = None,
        sign_with: str | Signer | None = None,
    ) -> StanceOutcome:
        """Record that `new` supersedes `old` (`brain supersede`): both stay members, `old` is no longer accessible."""
        from brain.lifecycle.usecases import supersede
        from ingest.lifecycle import LOG_LINEAGE
        from ingest.targets import resolve_all
        from ingest.usecase import open_signer

        loser, winner = resolve_all(self.core, [old, new])
        return supersede(self.core, loser, winner, actor=self.actor, reason=reason, signer=open_signer(sign_with),
                         lineage=LOG_LINEAGE, lock_timeout=self.lock_timeout)

    def demote(
        self, targets: Sequence[str | BlockId], *, reason: str | None = None, policy: str | None = None,
        sign_with: str | Signer | None = None,
    ) -> StanceOutcome:  # fmt: skip
        """Demote blocks (`brain demote`): they stay members but are no longer accessible."""
        from brain.lifecycle.usecases import demote
        from ingest.lifecycle import LOG_LINEAGE
        from ingest.targets import resolve_all
        from ingest.usecase import open_signer

        named = resolve_all(self.core, targets)
        return demote(self.core, named, actor=self.actor, reason=reason, policy=policy, signer=open_signer(sign_with),
                      lineage=LOG_LINEAGE, lock_timeout=self.lock_timeout)

    def redact(
        self, targets: Sequence[str | BlockId], *, reason: str, only: bool = False, dry_run: bool = False,
        sign_with: str | Signer | None = None,
    ) -> RedactOutcome:  # fmt: skip
        """Destroy blocks' bytes everywhere in the brain directory, and those of what quotes them (`only`: just
        these); they stay members, listed as tombstones (`brain redact`). `outcome.tombstones` by module, and
        `outcome.snapshot` unless `dry_run`; copies pushed to registries are `oci.redaction.remote_copies`."""
        from brain.lifecycle.redact_run import redact_blocks
        from ingest.lifecycle import LOG_LINEAGE
        from ingest.targets import resolve_all
        from ingest.usecase import open_signer
        from oci.redaction import purge_copies

        return redact_blocks(self.core, resolve_all(self.core, targets), actor=None if dry_run else self.actor,
                             reason=reason, purge=purge_copies, lineage=LOG_LINEAGE, only=only, dry_run=dry_run,
                             signer=open_signer(sign_with), lock_timeout=self.lock_timeout)

    def finish_redaction(self) -> RedactionDone | None:
        """Finish an interrupted redaction (`brain redact --resume`; None: there was none)."""
        from brain.lifecycle.redact_run import resume
        from oci.redaction import purge_copies

        return resume(self.core, purge_copies, lock_timeout=self.lock_timeout)

    def prune(self, *, keep: int | None = None, dry_run: bool = False) -> PruneReport:
        """Delete blobs no retained snapshot or packed artifact reaches (`brain prune`)."""
        from brain.lifecycle.prune import prune
        from oci.retention import index_roots

        return prune(self.core, actor=None if dry_run else self.actor, roots=index_roots, keep=keep, dry_run=dry_run,
                     lock_timeout=self.lock_timeout)

    def sign(self, snapshot: OciDigest | None = None, *, sign_with: str | Signer) -> SignatureRecord:
        """Sign `snapshot` (default: the head) claiming the scopes its change requires (`brain sign`)."""
        from brain.authenticity import sign_snapshot
        from ingest.usecase import open_signer

        record, _ = sign_snapshot(self.core, _signer(open_signer(sign_with)), snapshot, lock_timeout=self.lock_timeout)
        return record

    def pin(self, trust_root: OciDigest | None = None) -> None:
        """Pin the trust root this brain must descend from (`brain trust pin`; default: the head's)."""
        from brain.trust_ops import pin_trust_root

        pin_trust_root(self.core, trust_root, lock_timeout=self.lock_timeout)

    # --- branches (§10; docs/branches.md) -------------------------------------------------------------------

    def branches(self) -> BranchList:
        """The branches and which is current (`brain branch`)."""
        from brain.branches.operations import branch_list

        return branch_list(self.core)

    def create_branch(self, name: str, *, at: str | None = None) -> BranchChange:
        """Create branch `name` at `at` (a branch or a snapshot digest or prefix; default: the head)
        (`brain branch create`)."""
        from brain.branches.operations import create_branch_at

        return create_branch_at(self.core, name, self.actor, at, lock_timeout=self.lock_timeout)

    def delete_branch(self, name: str, *, force: bool = False) -> BranchChange:
        """Delete branch `name`; its snapshots stay stored until pruned (`brain branch delete`)."""
        from brain.branches.operations import delete_branch

        return delete_branch(self.core, name, self.actor, force=force, lock_timeout=self.lock_timeout)

    def checkout(self, name: str) -> CheckoutResult:
        """Make `name` the current branch (`brain checkout`)."""
        from brain.branches.operations import checkout

        return checkout(self.core, name, self.actor, lock_timeout=self.lock_timeout)

    def merge(
        self, refs: Sequence[str], *, reason: str = "", strategy: str = "merge", plan: bool = False,
        fast_forward: str = "auto", allow_unrelated: bool = False, plain_http: bool = False,
        sign_with: str | Signer | None = None,
    ) -> Outcome:  # fmt: skip
        """Merge branches, snapshots, local tags or registry references into the current branch (`brain merge`).

        `outcome.kind` is `up_to_date`, `fast_forward`, `merged`, `planned` (`plan=True`: nothing written) or
        `halted`: questions are open (`outcome.plan.needs_answers`; the command exits 5 here), answered with
        `reconcile_resolve`/`reconcile_accept_removals`, then `reconcile_continue`. `strategy`: merge, rebase or
        squash; `fast_forward`: auto, only or never."""
        from brain.errors import UsageError
        from brain.head_signing import HeadSigning
        from brain.reconcile.operations import merge
        from brain.snapshot import TrustScope
        from ingest.merge_index import index_of, lineage_hook
        from ingest.usecase import open_signer
        from oci.merge_target import resolve_merge_target

        if not plan and not reason.strip():
            raise UsageError("a merge needs a reason (it is kept in the history log)", hint="pass reason='...'")
        theirs = [resolve_merge_target(self.core, ref, plain_http=plain_http, lock_timeout=self.lock_timeout)[0]
                  for ref in refs]
        signing = HeadSigning.load(self.core, open_signer(sign_with))
        if not plan:
            signing.require({TrustScope.COMMIT}, "this merge")
        outcome = merge(self.core, self.actor, theirs, index_of(self.core, persist=not plan), strategy=strategy,  # type: ignore[arg-type]
                        reason=reason or "plan", plan_only=plan, fast_forward_mode=fast_forward,  # type: ignore[arg-type]
                        allow_unrelated=allow_unrelated, lock_timeout=self.lock_timeout,
                        after_commit=lineage_hook(self.core))
        if outcome.kind == "merged":
            signing.sign_new_head(lock_timeout=self.lock_timeout)
        return outcome

    def reconcile_status(self) -> tuple[ReconcileState, MergePlan]:
        """The open reconciliation and its plan with the answers so far (`brain reconcile status`)."""
        from brain.reconcile.operations import status
        from ingest.merge_index import index_of

        return status(self.core, index_of(self.core, persist=False))

    def reconcile_resolve(
        self, block: str, answer: str, *, prefer: str | None = None, reason: str | None = None
    ) -> tuple[BlockId, Resolution]:
        """Answer one open question (`brain reconcile resolve`): `answer` is admit, reject or prefer (with
        `prefer=WINNER`); `block` may be a prefix."""
        from brain.reconcile.operations import resolve
        from ingest.merge_index import index_of

        return resolve(self.core, self.actor, block, answer, index_of(self.core, persist=False),  # type: ignore[arg-type]
                       prefer=prefer, reason=reason, lock_timeout=self.lock_timeout)

    def reconcile_accept_removals(self, *, reason: str, allow_canonical: bool = False) -> AcceptedRemovals:
        """Accept every withdrawn block of ours in one statement (`brain reconcile accept-removals`)."""
        from brain.reconcile.operations import accept_removals
        from ingest.merge_index import index_of

        return accept_removals(self.core, self.actor, reason, index_of(self.core, persist=False),
                               allow_canonical=allow_canonical, lock_timeout=self.lock_timeout)

    def reconcile_continue(self, *, sign_with: str | Signer | None = None) -> Outcome:
        """Recompute the plan with the answers and commit it (`brain reconcile continue`)."""
        from brain.head_signing import HeadSigning
        from brain.reconcile.operations import continue_reconcile
        from brain.snapshot import TrustScope
        from ingest.merge_index import index_of, lineage_hook
        from ingest.usecase import open_signer

        signing = HeadSigning.prepare(self.core, open_signer(sign_with), {TrustScope.COMMIT}, "this merge")
        outcome = continue_reconcile(self.core, self.actor, index_of(self.core, persist=True),
                                     lock_timeout=self.lock_timeout, after_commit=lineage_hook(self.core))
        signing.sign_new_head(lock_timeout=self.lock_timeout)
        return outcome

    def reconcile_abort(self) -> ReconcileState | None:
        """Discard the open reconciliation; nothing was committed (`brain reconcile abort`). Returns its state
        (None: the file was unreadable, discarded all the same); `NotFoundError` when none is open."""
        from brain.reconcile.operations import abort

        return abort(self.core, self.actor, lock_timeout=self.lock_timeout)

    # --- registries ----------------------------------------------------------------------------------------

    def pack(self, tag: str | None = None, *, modules: set[MemoryType] | None = None) -> PackResult:
        """Pack the head as its OCI artifact inside the brain, optionally tagged (`brain pack`)."""
        from oci.pack import pack

        return pack(self.core, tag, modules, lock_timeout=self.lock_timeout)

    def push(
        self, ref: str, *, force: bool = False, immutable: bool = False, plain_http: bool = False,
        allow_narrowing: bool = False,
    ) -> PushResult:
        """Publish the head to a registry (`brain push`; no tag: the current branch's), packing or re-packing
        its tag first if needed."""
        from oci.push import push
        from oci.reference import parse_reference

        return push(self.core, parse_reference(ref, plain_http=plain_http), force=force, immutable=immutable,
                    lock_timeout=self.lock_timeout, allow_narrowing=allow_narrowing)


def _signer(signer: Signer | None) -> Signer:
    from brain.errors import UsageError

    if signer is None:
        raise UsageError("this needs a key", hint="pass sign_with='path/to/key' (an Ed25519 key file or an agent key)")
    return signer


__all__ = ["Brain"]
