"""`brain ingest`, the use case: discover sources, register them, propose, validate, commit in checkpoints.

Each source is one immutable `SourceRecord` (`ingest.record`) passed through the stages in order, each
returning a new record: discover (here), register (`Registrar.register`), ask (`Questions.job_for`),
judge and stage (`Deriver.run`), commit (`_Run._checkpoint`, here); the result reports each committed
record's outcome, in discovery order.

One writer lock for the whole run. Every `checkpoint` registered sources (and at the end) the staged
work is committed as one snapshot. By default the interval grows with the run: `DEFAULT_CHECKPOINT`
sources, or half of those registered so far, at most `MAX_CHECKPOINT`: each checkpoint rewrites every
changed composition in full, so a fixed interval makes a long run quadratic. (Counted, never timed:
the same sources give the same snapshots, history included.) and only then is the fingerprint index saved, so the
index never claims a file whose block is not in a committed snapshot. A kill at any moment leaves the last
checkpoint's snapshot as the head; re-running skips what it committed (fingerprints, membership) and
redoes the rest (cached answers make the redo cheap), so nothing is duplicated.

`--dry-run` runs the same steps against a `DryRunSink`: no lock, no blob, no cache entry, no fingerprint
is written. Library code: progress goes to a callback, problems into the result, never to a terminal.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from brain.blocks import MemoryType
from brain.blocks.canonical import CanonicalBlock
from brain.brain import Brain
from brain.errors import UsageError
from brain.identity import BlockId, OciDigest
from brain.module import DestroyedBlockError
from brain.snapshot import Snapshot
from brain.store.head import interim_moves
from ingest import PROPOSABLE_MEMORY_TYPES
from ingest.answers import answer_source
from ingest.budget import CostLimits
from ingest.budgeted import Meter
from ingest.cache import ProposalCache
from ingest.commit import DryRunSink, Members, Sink, Stager, acting_actor
from ingest.answers import Job
from ingest.derive import DeriveOptions, Deriver, Questions
from ingest.fingerprints import FingerprintIndex
from ingest.lineage import Fact, Lineage, read_lineage
from ingest.proposers import Proposer
from ingest.proposers.loader import DEFAULT_PROPOSER, ProposerOptions, load_proposer
from ingest.record import SourceRecord
from ingest.register import Registrar, RegisterOptions, origin_of
from ingest.replace import RunLineage
from ingest.report import IngestProgress, IngestResult, SourceOutcome, summarize
from ingest.shard import Shard, ShardReport, check_base, resolve_base, select
from ingest.sources import SourceFile, SourceProblem, discover

_Found = tuple[SourceFile | SourceProblem, bool]
DEFAULT_CHECKPOINT = 500
MAX_CHECKPOINT = 2500
_BARE_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*")


@dataclass(frozen=True)
class IngestOptions:
    """Everything `brain ingest` lets a user choose."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    media_type: str | None = None
    license: str | None = None
    origin: str | None = None
    proposer: str = DEFAULT_PROPOSER
    proposer_options: ProposerOptions = field(default_factory=ProposerOptions)
    allow: tuple[MemoryType, ...] = tuple(sorted(PROPOSABLE_MEMORY_TYPES, key=lambda m: m.value))
    instructions: str | None = None
    checkpoint: int | None = None
    """Commit every N registered sources exactly; None: the growing default (module docstring)."""
    use_cache: bool = True
    dry_run: bool = False
    vcs_ignore: bool = True
    """Honour `.gitignore` and `.git/info/exclude` (`--no-ignore` turns it off)."""
    cost: CostLimits = field(default_factory=CostLimits)
    """`--max-tokens`, `--max-cost`, `--price` for a model-backed proposer (`ingest.budget`)."""
    shard: Shard | None = None
    """`--shard I/N`: only the sources whose origin falls in shard I of N (`ingest.shard`)."""
    base: str | None = None
    """`--base REF`: refuse unless the head is that snapshot or descends from it (`ingest.shard`)."""


def default_checkpoint_interval(committed: int) -> int:
    """Sources per checkpoint once `committed` sources of this run are in snapshots (see the module docstring)."""
    return max(DEFAULT_CHECKPOINT, min(MAX_CHECKPOINT, committed // 2))


def parse_allowed(text: str) -> tuple[MemoryType, ...]:
    """`--allow semantic,procedural` as sorted memory types; canonical/provenance are usage errors."""
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    if not names:
        raise UsageError("--allow needs at least one memory type", hint="e.g. --allow semantic,procedural")
    types = {MemoryType.parse(name) for name in names}
    refused = sorted(t.value for t in types if t not in PROPOSABLE_MEMORY_TYPES)
    if refused:
        raise UsageError(
            f"--allow {text!r} names {', '.join(refused)}, which are never proposed (§2)",
            hint="choose among episodic, procedural, semantic",
        )
    return tuple(sorted(types, key=lambda m: m.value))


def ingest(
    brain: Brain,
    paths: Sequence[Path],
    options: IngestOptions,
    *,
    actor: str,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    on_progress: Callable[[IngestProgress], None] | None = None,
) -> IngestResult:
    """Ingest `paths` (files or directories) into `brain`; see the module docstring."""
    if options.checkpoint is not None and options.checkpoint < 1:
        raise UsageError(f"--checkpoint must be at least 1 (got {options.checkpoint})")
    if options.media_type is not None and _BARE_MEDIA_TYPE.fullmatch(options.media_type) is None:
        raise UsageError(
            f"--media-type {options.media_type!r} is not a bare lowercase type/subtype", hint="e.g. text/markdown"
        )
    base = _check_base(brain, options)
    proposer = load_proposer(options.proposer, options.proposer_options)
    found, kept, skipped = select(_discover_all(brain, paths, options), options.shard, partial(_origin, options.origin))
    writer: AbstractContextManager[Sink] = (
        nullcontext(DryRunSink(brain)) if options.dry_run else brain.writer(actor, lock_timeout, on_wait)
    )
    with writer as sink:
        stages = _Stages.build(brain, sink, proposer, options, actor, total=len(found))
        run = _Run(brain, stages, options, on_progress, total=len(found))
        try:
            result = run.execute(_drained(found))
        finally:
            run.deriver.close()
    if options.shard is not None:
        report = ShardReport(shard=str(options.shard), index=options.shard.index, count=options.shard.count,
                             kept=kept, skipped=skipped, base=None if base is None else str(base))
        result = result.model_copy(update={"shard": report})
    return result if stages.meter is None else result.model_copy(update={"usage": stages.meter.usage()})


def _drained(items: list[_Found]) -> Iterator[_Found]:
    """Every item of `items` in order, each let go of by the list once handed out: a record keeps what it needs
    of its source, so discovery's objects are not held through the whole run (100,000 sources: ~90 MB)."""
    items.reverse()
    while items:
        yield items.pop()


def _check_base(brain: Brain, options: IngestOptions) -> OciDigest | None:
    """`--base`: the snapshot it names, after checking the head starts from it (None without `--base`)."""
    if options.base is None:
        return None
    base = resolve_base(brain, options.base)
    check_base(brain, base, options.base, options.shard)
    return base


def _origin(origin_option: str | None, item: tuple[SourceFile | SourceProblem, bool]) -> str:
    """The origin a discovered item is sharded by: its registration origin (a problem: the one it would get)."""
    source, root_is_dir = item
    if isinstance(source, SourceProblem):
        return origin_of(None, source.relpath, root_is_dir, origin_option)
    return origin_of(source.origin, source.relpath, root_is_dir, origin_option)


def _discover_all(
    brain: Brain, paths: Sequence[Path], options: IngestOptions
) -> list[tuple[SourceFile | SourceProblem, bool]]:
    """Every source of every root, before the lock is taken (a missing root fails before any write)."""
    found: list[tuple[SourceFile | SourceProblem, bool]] = []
    inside = Path(os.path.realpath(brain.path))
    for root in paths:
        if Path(os.path.realpath(root)).is_relative_to(inside):
            raise UsageError(f"{root} is inside the brain {brain.path}", hint="ingest source files, not the brain")
        is_dir = Path(root).is_dir()
        # Absolute once here, so the fingerprint index never calls getcwd() per source.
        found_here = discover(
            Path(os.path.abspath(root)), options.include, options.exclude, skip=[brain.path],
            vcs_ignore=options.vcs_ignore,
        )
        for item in found_here:
            found.append((item, is_dir))
    return found


@dataclass
class _Stages:
    """The parts of one run, each given only what it uses."""

    index: FingerprintIndex
    cache: ProposalCache
    lineage: RunLineage
    stager: Stager
    registrar: Registrar
    questions: Questions
    deriver: Deriver
    meter: Meter | None = None

    @classmethod
    def build(
        cls, brain: Brain, sink: Sink, proposer: Proposer, options: IngestOptions, actor: str, *, total: int
    ) -> _Stages:
        """The stages in dependency order: membership, lineage, staging, registering, asking, judging."""
        persist = not options.dry_run
        members = Members(sink)
        start = brain.snapshot()
        lineage = RunLineage(
            brain.path,
            brain.snapshot_digest() if start is not None else None,
            partial(_read_lineage, brain, start),
            members.has,
            persist=persist,
        )
        stager = Stager(sink, acting_actor(actor), members, lineage, partial(_blob_size, brain))
        index = FingerprintIndex.load(brain.path)
        register_options = RegisterOptions(
            license=options.license, origin=options.origin, media_type=options.media_type, use_index=options.use_cache
        )
        registrar = Registrar(stager, index, register_options, brain.blobs.path if persist else None, lineage)
        derive_options = DeriveOptions(
            allowed=options.allow,
            instructions=options.instructions,
            read_cache=options.use_cache,
            write_cache=persist,
            concurrency=options.proposer_options.concurrency or 1,
        )
        cache = ProposalCache(brain.path)
        questions = Questions(proposer, cache, derive_options, lineage.answered, partial(_stored_view, brain))
        meter = Meter.of(proposer, options.cost, dry_run=options.dry_run)
        answers = answer_source(
            proposer,
            cache,
            total,
            concurrency=derive_options.concurrency,
            read_cache=derive_options.read_cache,
            write_cache=derive_options.write_cache,
            wrap=meter.wrap if meter is not None else None,
        )
        return cls(index, cache, lineage, stager, registrar, questions, Deriver(stager, answers), meter)


class _Run:
    """The state of one ingest run."""

    def __init__(
        self,
        brain: Brain,
        stages: _Stages,
        options: IngestOptions,
        on_progress: Callable[[IngestProgress], None] | None,
        *,
        total: int,
    ) -> None:
        self.brain = brain
        self.options = options
        self.dry_run = options.dry_run
        self.index = stages.index
        self.cache = stages.cache
        self.lineage = stages.lineage
        self.stager = stages.stager
        self.registrar = stages.registrar
        self.questions = stages.questions
        self.deriver = stages.deriver
        self.batch_size = stages.deriver.answers.batch  # the answer source's schedule
        self.on_progress = on_progress
        self.total = total
        self.outcomes: list[SourceOutcome] = []  # of the committed records, in discovery order
        self.pending: list[tuple[SourceRecord, Job | None]] = []  # registered (or asked), waiting for answers
        self.staged: list[SourceRecord] = []  # judged and staged, waiting for the next checkpoint's commit
        self.pending_jobs = 0
        self.snapshot: OciDigest | None = None
        self.checkpoints = 0
        self.registered = 0
        self.bytes = 0

    def execute(self, found: Iterable[tuple[SourceFile | SourceProblem, bool]]) -> IngestResult:
        """Handle every discovered item, checkpointing along the way; returns the summary."""
        since_checkpoint = 0
        for item, root_is_dir in found:
            if isinstance(item, SourceProblem):
                # Queued, not reported: outcomes stay in discovery order behind the sources waiting for answers.
                self.pending.append((SourceRecord.of_problem(item), None))
                self._progress(item.relpath)
                continue
            discovered = SourceRecord.discovered(item, self.registrar.origin_of(item, root_is_dir))
            record, job = self._register_and_ask(discovered)
            self.pending.append((record, job))
            if job is not None:
                self.pending_jobs += 1
                self.deriver.offer(job)
            if record.status in ("registered", "replaced"):
                self.bytes += record.size or 0
                since_checkpoint += 1
                self.registered += 1
            if self.pending_jobs >= self.batch_size:
                self._flush()
            if self._checkpoint_due(since_checkpoint):
                with interim_moves(since_checkpoint):  # the last checkpoint, after the loop, moves the head again
                    self._checkpoint()
                since_checkpoint = 0
            self._progress(item.relpath)
        self._checkpoint()
        return summarize(
            self.outcomes,
            dry_run=self.dry_run,
            snapshot=None if self.snapshot is None else str(self.snapshot),
            checkpoints=self.checkpoints,
            blocks_added=self.stager.blocks_added,
        )

    def _register_and_ask(self, discovered: SourceRecord) -> tuple[SourceRecord, Job | None]:
        """The register and ask stages of one source; the view's bytes are let go of on return."""
        registered, view = self.registrar.register(discovered)
        return registered, self.questions.job_for(registered, view)

    def _flush(self) -> None:
        """The judge and stage stages for the queued sources (their answers first), in discovery order."""
        jobs = [job for _, job in self.pending if job is not None]
        judged = iter(self.deriver.run(jobs))
        for record, job in self.pending:
            done = record if job is None else next(judged)
            if done.fingerprint is not None and not self.dry_run:
                self.index.remember(done.fingerprint)
            self.staged.append(done)
        self.pending.clear()
        self.pending_jobs = 0

    def _checkpoint_due(self, since: int) -> bool:
        if self.options.checkpoint is not None:
            return since >= self.options.checkpoint
        return since >= default_checkpoint_interval(self.registered - since)

    def _checkpoint(self) -> None:
        self._flush()
        digest = self.stager.checkpoint()
        self.outcomes.extend(record.advance("commit").outcome() for record in self.staged)
        self.staged.clear()
        if digest is not None:
            self.snapshot = digest
            self.checkpoints += 1
        if not self.dry_run:
            # Only after the commit: the index must never name a block that is not committed.
            self.index.save()
            self.cache.close()  # flushed with each checkpoint; reopened by the next answer
            if digest is not None:
                self.lineage.save(digest)
        if self.snapshot is None and not self.dry_run:
            self.snapshot = self.brain.snapshot_digest()

    def _progress(self, relpath: str) -> None:
        if self.on_progress is not None:
            done = len(self.outcomes) + len(self.staged) + len(self.pending)
            self.on_progress(IngestProgress(done, self.total, self.bytes, self.stager.blocks_added, relpath))


def _blob_size(brain: Brain, digest: OciDigest) -> int | None:
    return brain.blobs.size(digest) if brain.blobs.has(digest) else None


def _stored_view(brain: Brain, block_id: BlockId) -> bytes | None:
    """The normalized view of a canonical member, read back (and re-hashed) from the store; None when a
    redaction destroyed it (a redacted source is never asked about again)."""
    try:
        block = brain.resolve(block_id)
    except DestroyedBlockError:
        return None
    view = block.normalized_view if isinstance(block, CanonicalBlock) else None
    return brain.blobs.get(view.blob) if view is not None else None


def _read_lineage(brain: Brain, start: Snapshot | None) -> tuple[Lineage, list[Fact]]:
    """The lineage of `start` from its provenance and semantic members (redacted ones have no bytes)."""
    modules = brain.modules(start) if start is not None else {}

    def readable(memory_type: MemoryType) -> list[BlockId]:
        module = modules.get(memory_type)
        return [] if module is None else [b for b in module.block_ids if b not in module.tombstones]

    linked = readable(MemoryType.SEMANTIC) + readable(MemoryType.PROCEDURAL)
    return read_lineage(brain.path, readable(MemoryType.PROVENANCE), linked)
