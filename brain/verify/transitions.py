"""Checks between a snapshot and its parents: episodic memory is append-only, removals are explained (§7.7).

For every module whose members shrank from the first parent to the child, each block that left must be
named by a readable v1 `removal` record of the same memory type that is a member of the child's provenance
composition. Episodic blocks may never leave, whatever the records say. A composition or parent that
cannot be resolved makes the step undecidable, which is not a violation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from brain.verify.facts import BlockFacts
from brain.verify.history import History
from brain.verify.report import Problem

FactsLookup = Callable[[Iterable[str]], Mapping[str, BlockFacts]]


def transition_problems(history: History, lookup: FactsLookup) -> list[Problem]:
    """Episodic removals and unexplained removals along first-parent edges (§7.7). A merge's other parents are
    histories it joined: what it left out of them (a refused incoming block, §10.5) was never ours to remove."""
    problems: list[Problem] = []
    for child, snapshot in history.snapshots.items():
        for position, parent_digest in enumerate(snapshot.parent_digests[:1]):
            parent = str(parent_digest)
            if parent not in history.snapshots:
                continue
            removed = _removed(history, child, parent)
            episodic = removed.pop("episodic", set())
            for block_id in sorted(episodic):
                problems.append(
                    Problem.of(
                        "episodic-removed",
                        f"left the episodic module in snapshot {child} (it was a member of its parent {parent})",
                        module="episodic",
                        block=block_id,
                    )
                )
            if position == 0 and removed:
                problems += _unexplained(history, child, parent, removed, lookup)
    return problems


def _removed(history: History, child: str, parent: str) -> dict[str, set[str]]:
    """Per module, the blocks in the parent's composition but not in the child's (decidable modules only)."""
    before, after = history.modules[parent], history.modules[child]
    removed: dict[str, set[str]] = {}
    for module, state in before.items():
        old = state.members
        later = after.get(module)
        # A module absent from the child was not installed (partial install, §6.8), not emptied: a write
        # keeps every module it ever touched in `modules` (§5.3).
        if later is None:
            continue
        new = later.members
        if old is None or new is None or later.ref.root == state.ref.root:
            continue
        gone = set(old - new)
        if gone:
            removed[module] = gone
    return removed


def _unexplained(
    history: History, child: str, parent: str, removed: dict[str, set[str]], lookup: FactsLookup
) -> list[Problem]:
    provenance = history.modules[child].get("provenance")
    if provenance is None or provenance.members is None:
        return []
    records = lookup(sorted(provenance.members - provenance.tombstones)).values()
    if not all(facts.ok for facts in records):
        return []  # an unreadable record might be the explanation: undecidable, not a violation
    explained: dict[str, set[str]] = {}
    for facts in records:
        record = facts.record
        if facts.ok and record is not None and record.record_type == "removal" and record.schema_version == 1:
            explained.setdefault(record.memory_type or "", set()).update(record.blocks)
    problems = []
    for module in sorted(removed):
        for block_id in sorted(removed[module] - explained.get(module, set())):
            problems.append(
                Problem.of(
                    "removal-unexplained",
                    f"left the {module} module in snapshot {child} (parent {parent}) and no removal record "
                    "of that snapshot's provenance module names it",
                    module=module,
                    block=block_id,
                )
            )
    return problems
