"""`brain ingest PATH... --sync`: the brain follows the folder. After the run, every registered source whose
origin lies under the ingested roots and whose file is gone leaves the brain in one more snapshot:

- dropped with its cascade (§7.3, §7.4: evidence and structural edges, every module);
- when the cascade reaches an episode (episodes are never dropped), the source and the episodes it reaches
  are demoted instead, and the rest of its cascade is dropped (removal records `cascaded_from` the source).

Without `--sync` the same sources are only reported as `missing`. What is gone is decided from the files on
disk and the origins in the brain alone, never from a cache (a pulled brain has none, a moved project's
are stale): an origin under a root names the file `root/<path below the root's prefix>`; it is gone only if
that file does not exist, no file of the run has its origin or its bytes (a renamed file keeps the same
canonical block), and the run's `--include`/`--exclude` globs do not leave it out (an excluded file is out
of scope: never dropped for being excluded). Every version registered under a gone origin leaves (a
replaced file's older versions too: dropping only the current one would make the previous one accessible
again, its winner gone). Which origins lie under a root follows `ingest.register.Registrar.origin_of`:
the root's default origin prefix (`ingest.sources.origins`: repository-relative) or `--origin`, then the
path below the root; a file root covers its own origin only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from brain.blocks import MemoryType
from brain.blocks.provenance import Actor, ProvenanceBlock, RemovalMechanism
from brain.brain import Brain
from brain.errors import LifecycleRefusedError
from brain.identity import BlockId, OciDigest, utc_timestamp
from brain.lifecycle.drop import DropPlan, Members, drop_cascade, module_of, plan_drop
from brain.lifecycle.records import (
    actor_of,
    ascending,
    demotion_record,
    removal_records,
)
from ingest.fingerprints import FingerprintIndex
from ingest.lineage import LineageLog
from ingest.lineage_graph import LineageGraph, graph_of, log_commit
from ingest.report import IngestResult, SyncOutcome
from ingest.sources.ignore import PathFilters
from ingest.shard import Shard
from ingest.sources.origins import origin_prefix


_NO_FILTERS = PathFilters.from_globs((), ())


@dataclass(frozen=True)
class Scope:
    """Which origins one ingest root covers: every origin starting with `prefix` whose path below the root
    the run's globs (`filters`) do not leave out."""

    root: Path
    prefix: str
    filters: PathFilters = _NO_FILTERS
    shard: Shard | None = None
    """`--shard I/N`: only origins of that shard are covered (a source of another shard is never dropped)."""

    def relpath(self, origin: str) -> str | None:
        """The path below the root that `origin` names, or None when the origin lies outside this root."""
        if not origin.startswith(self.prefix) or len(origin) == len(self.prefix):
            return None
        return origin[len(self.prefix):]

    def covers(self, origin: str) -> bool:
        if self.shard is not None and not self.shard.holds(origin):
            return False
        relpath = self.relpath(origin)
        return relpath is not None and not _left_out(self.filters, relpath)

    def on_disk(self, origin: str) -> bool:
        """Whether the file `origin` names under this root exists (any kind of file: it is not gone)."""
        relpath = self.relpath(origin)
        return relpath is not None and os.path.lexists(self.root / relpath)


def _left_out(filters: PathFilters, relpath: str) -> bool:
    """Whether `--include`/`--exclude` leave `relpath` (or a directory above it) out of the run."""
    parts = relpath.split("/")
    directories = ("/".join(parts[:i]) for i in range(1, len(parts)))
    return filters.skips(relpath, is_dir=False) or any(filters.skips(d, is_dir=True) for d in directories)


def scope_of(root: Path, origin_option: str | None, filters: PathFilters = _NO_FILTERS) -> Scope | None:
    """The scope of a directory root (mirrors `Registrar.origin_of`); None for a file root, which exists
    (discovery refuses a missing root) and so was seen by the run."""
    absolute = Path(os.path.abspath(root))
    if not absolute.is_dir():
        return None
    prefix = f"{origin_option.rstrip('/')}/" if origin_option else origin_prefix(absolute)
    return Scope(absolute, prefix, filters)


def _gone_origin(origin: str, scopes: Sequence[Scope], seen_origins: set[str]) -> bool:
    """An origin the run did not see, under a root and in its scope, whose file is not on disk."""
    if origin in seen_origins:
        return False
    covering = [s for s in scopes if s.covers(origin)]
    return bool(covering) and not any(s.on_disk(origin) for s in scopes)


@dataclass
class SyncPlan:
    """The gone sources, and what `--sync` does about them."""

    gone: list[tuple[str, BlockId]] = field(default_factory=list)
    dropped: DropPlan | None = None
    each: dict[BlockId, DropPlan] = field(default_factory=dict)  # per dropped source, for the report
    demoted: dict[BlockId, tuple[tuple[BlockId, ...], dict[MemoryType, tuple[BlockId, ...]]]] = field(
        default_factory=dict
    )  # source → (episodes demoted with it, the rest of its cascade dropped)

    def outcomes(self, applied: bool) -> list[SyncOutcome]:
        rows = []
        for origin, block in self.gone:
            if not applied:
                rows.append(SyncOutcome(origin=origin, block=str(block), action="missing"))
            elif block in self.demoted:
                episodes, rest = self.demoted[block]
                counts = {str(t): len(ids) for t, ids in rest.items() if ids}
                rows.append(SyncOutcome(origin=origin, block=str(block), action="demoted", dropped=counts,
                                        demoted=1 + len(episodes)))
            else:
                each = self.each.get(block)
                counts = {} if each is None else {str(t): len(ids) for t, ids in each.removals.items()}
                rows.append(SyncOutcome(origin=origin, block=str(block), action="dropped", dropped=counts))
        return rows

    @property
    def empty(self) -> bool:
        return not self.gone


def find_gone(
    scopes: Sequence[Scope],
    graph: LineageGraph,
    members: Members,
    seen_origins: set[str],
    seen_blocks: set[str],
) -> list[tuple[str, BlockId]]:
    """(origin, canonical block) of every current source under `scopes` whose file is gone (module docstring)."""
    canonical = members.get(MemoryType.CANONICAL)
    if canonical is None:
        return []
    lineage = graph.lineage
    gone: list[tuple[str, BlockId]] = []
    for origin in sorted(lineage.origins):
        if not _gone_origin(origin, scopes, seen_origins):
            continue
        for block_hex in sorted(lineage.origins[origin]):
            block = BlockId(block_hex)
            if block_hex in seen_blocks or block not in canonical:
                continue
            # Every version registered under the origin goes, superseded ones too: dropping only the current
            # one would make the previous version accessible again (its winner gone, §7.2).
            gone.append((origin, block))
    return gone


def plan_sync(gone: list[tuple[str, BlockId]], graph: LineageGraph, members: Members) -> SyncPlan:
    """Drop each gone source with its cascade, or demote it when its cascade reaches an episode."""
    plan = SyncPlan(gone=gone)
    droppable: list[BlockId] = []
    for _, source in gone:
        try:
            plan.each[source] = plan_drop([source], members, graph, allow_canonical=True)
            droppable.append(source)
        except LifecycleRefusedError as e:
            if e.code != "cascade-reaches-episodic":
                raise
            plan.demoted[source] = _demotion_split(source, graph, members)
    if droppable:
        plan.dropped = plan_drop(droppable, members, graph, allow_canonical=True)
    if plan.dropped is not None:  # a demoted source's cascade may overlap a dropped one's: remove once
        taken = {b for ids in plan.dropped.removals.values() for b in ids}
        for source, (episodes, rest) in list(plan.demoted.items()):
            plan.demoted[source] = (episodes, {t: tuple(b for b in ids if b not in taken) for t, ids in rest.items()})
    return plan


def _demotion_split(
    source: BlockId, graph: LineageGraph, members: Members
) -> tuple[tuple[BlockId, ...], dict[MemoryType, tuple[BlockId, ...]]]:
    episodes: set[BlockId] = set()
    rest: dict[MemoryType, set[BlockId]] = {}
    for block in drop_cascade(graph, [source]):
        memory_type = module_of(block, members)
        if memory_type is None or memory_type is MemoryType.PROVENANCE:
            continue
        if memory_type is MemoryType.EPISODIC:
            episodes.add(block)
        else:
            rest.setdefault(memory_type, set()).add(block)
    return ascending(episodes), {t: ascending(ids) for t, ids in rest.items()}


def sync_records(plan: SyncPlan, *, actor: Actor, at: str, reasons: Mapping[BlockId, str]) -> tuple[
    list[ProvenanceBlock], dict[MemoryType, list[BlockId]]
]:
    """The records `--sync` writes and the members it removes."""
    records: list[ProvenanceBlock] = []
    removed: dict[MemoryType, list[BlockId]] = {}
    taken: set[BlockId] = set()
    # One drop per source (its own reason), in id order; a block two sources share leaves with the first.
    for source, each in sorted(plan.each.items(), key=lambda item: item[0].hex):
        rest = {t: tuple(b for b in ids if b not in taken) for t, ids in each.removals.items()}
        records += removal_records(rest, each.requested_modules, source, actor=actor, at=at, reason=reasons[source])
        for memory_type, ids in rest.items():
            removed.setdefault(memory_type, []).extend(ids)
            taken.update(ids)
    done: set[BlockId] = set()
    for source, (episodes, rest) in sorted(plan.demoted.items(), key=lambda item: item[0].hex):
        reason = reasons[source]
        for block in (source, *episodes):
            if block not in done:
                records.append(demotion_record(block, actor=actor, at=at, reason=reason))
                done.add(block)
        records += removal_records(rest, (), source, actor=actor, at=at, reason=reason,
                                   mechanism=RemovalMechanism.DROP)
        for memory_type, ids in rest.items():
            removed.setdefault(memory_type, []).extend(ids)
    return records, removed


def reason_for(origin: str) -> str:
    """The recorded reason for a source that left its folder."""
    return f"source deleted: {origin}"


def sync_after(
    brain: Brain,
    roots: Sequence[Path],
    origin_option: str | None,
    result: IngestResult,
    *,
    apply: bool,
    dry_run: bool,
    actor: str,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> IngestResult:
    """The ingest result with `missing` filled in; with `apply` (and not `dry_run`) the gone sources are
    removed in one more snapshot, under the writer lock, planned on the head as the lock found it.
    `include`/`exclude` are the run's globs: what they leave out is out of the sync's scope; a run's
    `--shard` limits the scope to that shard's origins."""
    filters = PathFilters.from_globs(include, exclude, use_git=False)
    shard = None if result.shard is None else Shard(result.shard.index, result.shard.count)
    scopes = [replace(s, shard=shard) for s in (scope_of(r, origin_option, filters) for r in roots) if s is not None]
    if not scopes:
        return result
    seen_origins = {o.origin for o in result.outcomes}
    seen_blocks = {BlockId.parse(o.block).hex for o in result.outcomes if o.block is not None}
    if not apply or dry_run:
        snapshot = brain.snapshot_digest()
        if snapshot is None or _nothing_missing(brain, snapshot, scopes, seen_origins):
            return result
        members: Members = brain.modules(snapshot)
        graph = graph_of(brain, snapshot, persist=not dry_run)
        gone = find_gone(scopes, graph, members, seen_origins, seen_blocks)
        plan = plan_sync(gone, graph, members) if apply else SyncPlan(gone=gone)
        return result.model_copy(update={"missing": tuple(plan.outcomes(applied=apply))})
    with brain.writer(actor, lock_timeout, on_wait) as writer:
        if writer.head is None:
            return result
        parent = writer.head.snapshot
        if _nothing_missing(brain, parent, scopes, seen_origins):
            return result
        members = brain.modules(parent)  # Module answers `in` from its composition, read on first use
        graph = graph_of(brain, parent)
        gone = find_gone(scopes, graph, members, seen_origins, seen_blocks)
        if not gone:
            return result
        plan = plan_sync(gone, graph, members)
        reasons = {block: reason_for(origin) for origin, block in gone}
        records, removed = sync_records(plan, actor=actor_of(writer.actor), at=utc_timestamp(), reasons=reasons)
        for memory_type, ids in removed.items():
            writer.remove(memory_type, ids)
        for record in records:
            writer.add(record)
        digest = writer.commit()
        if digest is not None:  # under the lock: the log must describe the parent it is appended to
            log_commit(brain, parent, digest, records)
            _forget_gone(FingerprintIndex.load(brain.path), gone)
    update = {"missing": tuple(plan.outcomes(applied=True)), "snapshot": str(digest or result.snapshot)}
    return result.model_copy(update=update)


def _nothing_missing(brain: Brain, snapshot: OciDigest, scopes: Sequence[Scope], seen_origins: set[str]) -> bool:
    """The common case, cheaply: the lineage log describes `snapshot` and every origin it names under the
    roots was seen by the run, so `find_gone` could find nothing. Reads only the log's `registered` lines;
    the whole graph (the log decoded, or rebuilt from the ledger) is loaded only when this says no."""
    origins = LineageLog(brain.path).origins(snapshot)
    if origins is None:
        return False
    return not any(_gone_origin(origin, scopes, seen_origins) for origin in origins)


def _forget_gone(index: FingerprintIndex, gone: list[tuple[str, BlockId]]) -> None:
    """Fingerprint entries of removed sources' paths that no longer exist (the files are gone)."""
    hexes = {block.hex for _, block in gone}
    stale = [
        p for p in index.paths() if (e := index.get(p)) is not None and e.block.hex in hexes and not os.path.exists(p)
    ]
    for path in stale:
        index.forget(path)
    if stale:
        index.save()
