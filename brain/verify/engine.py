"""`verify_brain`: run every check on one snapshot of a brain and collect a `VerifyReport`.

Order: history (head, retained, parents, compositions), member blocks (in parallel), the content blobs
they name (in parallel), the ledger, the parent→child transitions, then `--deep` if asked. Damage is
reported, never raised; only a brain whose head pointer cannot be read at all raises
(`BrainUnreadableError`, exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from brain.identity import OciDigest
from brain.installed import left_out_modules
from brain.store.blobs import BlobStore
from brain.store.head import read_head
from brain.store.redaction import intent_path, unfinished
from brain.verify.deep import Renormalizer, deep_problems
from brain.verify.facts import MISSING, OK, BlockFacts, NamedBlob, from_wire, to_wire
from brain.verify.history import HistoryWalker, ModuleState
from brain.verify.integrity import blob_problems, block_problems, inspect_blobs, inspect_blocks
from brain.verify.ledger_checks import LedgerIndex, ledger_problems
from brain.concurrency import PARALLEL_THRESHOLD, parallel_map
from brain.verify.report import MODULE_NAMES, DeepCounts, ModuleSummary, Problem, VerifyReport
from brain.verify.resolvability import (
    block_resolvability,
    content_resolvability,
    read_tombstoned_blobs,
    tally,
)
from brain.verify.transitions import transition_problems

if TYPE_CHECKING:
    from brain.brain import Brain

MODULE_RANK = {name: rank for rank, name in enumerate(MODULE_NAMES)}


class _Run:
    """State of one verification: the store, the facts read so far, and the report being filled."""

    def __init__(self, root: Path, jobs: int | None, threshold: int) -> None:
        self.root = Path(root)
        self.blobs = BlobStore(self.root)
        self.jobs = jobs
        self.threshold = threshold
        self.facts: dict[str, BlockFacts] = {}
        self.blob_results: dict[str, tuple[str, int]] = {}

    def read_facts(self, block_ids: Iterable[str]) -> Mapping[str, BlockFacts]:
        """Facts of `block_ids`, reading (in parallel) only those not read before."""
        wanted = list(block_ids)
        todo = [b for b in wanted if b not in self.facts]
        for facts in parallel_map(inspect_blocks, self.root, todo, self.jobs, self.threshold, to_wire, from_wire):
            self.facts[facts.block_id] = facts
        return {b: self.facts[b] for b in wanted}

    def inspect_blobs(
        self, facts: Iterable[BlockFacts], skip: frozenset[str] = frozenset()
    ) -> dict[str, tuple[str, int]]:
        """`(state, length)` of every distinct content blob named by readable `facts`, except `skip`."""
        digests = sorted({blob.digest for f in facts if f.ok for blob in f.blobs} - skip)
        todo = [d for d in digests if d not in self.blob_results]
        # Content blobs are fewer and larger than blocks, so a pool pays off sooner.
        threshold = max(1, self.threshold // 8)
        for digest, state, length in parallel_map(inspect_blobs, self.root, todo, self.jobs, threshold):
            self.blob_results[digest] = (state, length)
        return {d: self.blob_results[d] for d in digests}


def verify_brain(
    brain: Brain | Path,
    *,
    snapshot: OciDigest | None = None,
    jobs: int | None = None,
    renormalizer: Renormalizer | None = None,
    parallel_threshold: int = PARALLEL_THRESHOLD,
) -> VerifyReport:
    """Check integrity, ledger consistency and resolvability of `snapshot` (default: the head).

    `jobs` worker processes re-hash and decode blocks (default: all cores); `renormalizer` enables the
    `--deep` re-run of normalization pipelines.
    """
    run = _Run(brain if isinstance(brain, Path) else brain.path, jobs, parallel_threshold)
    report = _verify(run, snapshot, renormalizer)
    report.sort_problems()
    return report


def _verify(run: _Run, snapshot: OciDigest | None, renormalizer: Renormalizer | None) -> VerifyReport:
    head = read_head(run.root)
    target = snapshot if snapshot is not None else (None if head is None else head.snapshot)
    report = VerifyReport(snapshot=None if target is None else str(target))
    if unfinished(run.root):
        report.extend([Problem.of("redaction-unfinished", f"{intent_path(run.root)} lists bytes still to destroy")])
    if target is None:
        return report
    history = HistoryWalker(run.blobs, run.jobs).walk(head, target)
    report.extend(history.problems)
    report.snapshots_checked = len(history.snapshots)
    report.partial_history = history.partial
    if history.partial:
        report.extend([Problem.of("history-partial", "; ".join(history.partial_reasons))])
    states = history.modules.get(str(target))
    if states is None:
        return report
    ordered = dict(sorted(states.items(), key=lambda item: MODULE_RANK.get(item[0], len(MODULE_RANK))))
    _check_members(run, report, ordered, selective=head is not None and head.origin is not None and head.origin.partial)
    members: dict[str, frozenset[str] | None] = {module: state.members for module, state in ordered.items()}
    target_snapshot = history.snapshots.get(str(target))
    if target_snapshot is not None:
        # Modules a partial pull left out are unknown, not empty: checks that need them are undecidable.
        origin = head.origin if head is not None and target == head.snapshot else None
        source = f" from {origin.reference}" if origin is not None else ""
        for left_out in left_out_modules(run.blobs, head if origin is not None else None, target_snapshot):
            members[str(left_out)] = None
            detail = f"left out by a partial pull{source}: its blocks are not stored here"
            report.extend([Problem.of("module-not-installed", detail, module=str(left_out))])
    provenance = ordered.get("provenance")
    records = list(run.read_facts(_readable(provenance)).values())
    index = LedgerIndex.of(records)
    ledger_complete = all(f.ok for f in records) and not (provenance is not None and provenance.tombstones)
    decidable = not history.partial and all(
        state.members is not None for states_at in history.modules.values() for state in states_at.values()
    )
    report.extend(ledger_problems(members, run.facts, index, history.ever_members(), decidable, ledger_complete))
    report.extend(transition_problems(history, run.read_facts))
    if renormalizer is not None and "canonical" in ordered:
        canonical = [run.facts[b] for b in _readable(ordered["canonical"]) if b in run.facts]
        states_of_blobs = {digest: state for digest, (state, _) in run.inspect_blobs(canonical).items()}
        report.deep = DeepCounts()
        report.extend(deep_problems(canonical, index, states_of_blobs, renormalizer, run.blobs.directory, report.deep))
    return report


def _readable(state: ModuleState | None) -> list[str]:
    """Members whose bytes should be stored (tombstones excluded), sorted."""
    if state is None or state.members is None:
        return []
    return sorted(state.members - state.tombstones)


def _check_members(run: _Run, report: VerifyReport, states: dict[str, ModuleState], selective: bool) -> None:
    """Block and content integrity of every module, with resolvability counts.

    After a selective pull (`selective`), a module none of whose blocks is stored was left out on purpose:
    one `module-not-installed` note instead of an error per block.
    """
    run.read_facts(b for state in states.values() for b in _readable(state))
    tombstoned_blobs = read_tombstoned_blobs(run.root)
    named: dict[str, list[tuple[NamedBlob, str]]] = {}
    for module, state in states.items():
        block_states: list[str] = []
        readable = _readable(state)
        if selective and readable and all(run.facts[b].state == MISSING for b in readable):
            detail = f"none of its {len(readable)} blocks are stored (the brain was pulled selectively)"
            report.extend([Problem.of("module-not-installed", detail, module=module)])
            report.modules[module] = ModuleSummary(
                root=str(state.ref.root), block_count=state.ref.block_count, blocks=tally([MISSING] * len(readable))
            )
            continue
        for block_id in sorted(state.members or ()):
            facts = run.facts.get(block_id)
            block_states.append(block_resolvability(block_id, state.tombstones, facts))
            if facts is None:
                continue
            if not facts.ok or facts.memory_type != module:
                report.extend(block_problems(module, facts, str(run.blobs.path(OciDigest.parse(block_id)))))
            if facts.ok:
                named.setdefault(module, []).extend((blob, block_id) for blob in facts.blobs)
        report.modules[module] = ModuleSummary(
            root=str(state.ref.root), block_count=state.ref.block_count, blocks=tally(block_states)
        )
    all_facts = [run.facts[b] for state in states.values() for b in _readable(state) if b in run.facts]
    results = run.inspect_blobs(all_facts, tombstoned_blobs)
    for module, pairs in named.items():
        content_states: dict[str, str] = {}
        for blob, owner in pairs:
            result = results.get(blob.digest)
            first = blob.digest not in content_states
            content_states.setdefault(
                blob.digest, content_resolvability(blob.digest, tombstoned_blobs, result and result[0])
            )
            # A missing or corrupt blob is reported once; each stated size is compared on its own.
            if result is not None and (first or result[0] == OK):
                where = str(run.blobs.path(OciDigest.parse(blob.digest)))
                report.extend(blob_problems(module, blob, owner, result[0], result[1], where))
        report.modules[module].content = tally(list(content_states.values()))


__all__ = ["verify_brain"]
