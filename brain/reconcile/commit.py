"""Committing a reconciliation through `brain.writer` (§10.6): `merge` (one snapshot, parents = [our head,
theirs…]), `squash` (one snapshot, parent = our head), `rebase` (one single-parent snapshot per snapshot of
theirs above the ancestor whose history contains it, the head moved once at the end), and the fast-forward.

Modules whose result equals one side's composition keep that side's module reference verbatim; others get a
new composition (tombstones of the sides that are still members carried). The journal line is written once
the snapshot is durable, before the head moves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.blocks.provenance import ProvenanceBlock
from brain.composition import Composition, ModuleRef
from brain.identity import OciDigest
from brain.reconcile.arithmetic import ModuleMerge
from brain.reconcile.judge import Judgement
from brain.reconcile.plan import MergePlan

if TYPE_CHECKING:
    from brain.snapshot import Snapshot
    from brain.writer import Writer


def fast_forward(writer: Writer, theirs: OciDigest) -> OciDigest:
    """Move the head to `theirs` (keeping the current origin): no snapshot is written."""
    writer.move_head(theirs)
    return theirs


def stage_result(
    writer: Writer,
    merges: Iterable[ModuleMerge],
    result: Mapping[MemoryType, frozenset[str]],
    records: Iterable[ProvenanceBlock],
    sides: Iterable[Snapshot],
) -> None:
    """Stage every module of the result, plus `records` in provenance."""
    snapshots = list(sides)
    new = list(records)
    for block in new:
        writer.put_blob(block.canonical_bytes())
    by_type = {m.memory_type: m for m in merges}
    for memory_type in MODULE_ORDER:
        if memory_type not in by_type:
            continue
        hexes = set(result.get(memory_type, frozenset()))
        if memory_type is MemoryType.PROVENANCE:
            hexes |= {b.block_id.hex for b in new}
        merge = by_type[memory_type]
        mine = snapshots[0].modules.get(memory_type.value)
        if merge.ours is not None and hexes == merge.ours and writer.refs.get(memory_type) == mine:
            continue  # unchanged from our head (and not changed by an earlier rebase step): its reference stands
        writer.adopt(memory_type, _ref_for(writer, memory_type, hexes, snapshots))


def _ref_for(writer: Writer, memory_type: MemoryType, hexes: set[str], sides: list[Snapshot]) -> ModuleRef:
    refs = [s.modules[memory_type.value] for s in sides if memory_type.value in s.modules]
    composition = Composition.of_hexes(memory_type, sorted(hexes))
    for ref in refs:
        if ref.composition == composition.digest:
            if sides[0].modules.get(memory_type.value) != ref:
                writer.brain.composition(ref)  # adopted from them verbatim: its root is checked first
            return ref
    writer.put_blob(composition.to_bytes())
    tombstones = sorted({t for ref in refs for t in ref.tombstones or () if t.hex in hexes}, key=lambda b: b.hex)
    return composition.module_ref(tombstones=tuple(tombstones) or None)


def commit_merge(
    writer: Writer,
    plan: MergePlan,
    judgement: Judgement,
    records: list[ProvenanceBlock],
    sides: list[Snapshot],
    *,
    squash: bool,
    journal: Callable[[OciDigest], None],
) -> OciDigest:
    """One snapshot: `parents` = [our head, theirs…] (merge) or `parent` = our head (squash)."""
    stage_result(writer, plan.merges, judgement.result, records, sides)
    digest = writer.commit(merged=() if squash else plan.theirs, before_head=journal)
    assert digest is not None  # a snapshot with merged parents is always written; squash changed modules
    return digest


def commit_rebase(
    writer: Writer,
    steps: list[tuple[list[ModuleMerge], Mapping[MemoryType, frozenset[str]], list[ProvenanceBlock]]],
    sides: list[Snapshot],
    journal: Callable[[OciDigest], None],
) -> tuple[OciDigest, ...]:
    """One single-parent snapshot per step; the head moves once, to the last."""
    written: list[OciDigest] = []
    for merges, result, records in steps:
        stage_result(writer, merges, result, records, sides)
        digest = writer.commit(publish=False)
        if digest is not None:
            written.append(digest)
    if not written:
        return ()
    journal(written[-1])
    writer.publish_head()
    return tuple(written)


def journal_entry(plan: MergePlan, strategy: str, actor: dict[str, Any], reason: str, at: str,
                  judgement: Judgement, state: dict[str, Any] | None) -> Callable[[OciDigest], dict[str, Any]]:
    """The history-log line for a reconciliation snapshot (who, why, every decision)."""
    decisions = {
        str(v.block): {"verdict": v.verdict.value, "codes": list(v.codes), "resolution": v.resolution}
        for v in judgement.verdicts.values()
    }

    def entry(snapshot: OciDigest) -> dict[str, Any]:
        found: dict[str, Any] = {
            "snapshot": str(snapshot),
            "ours": str(plan.ours),
            "theirs": [str(t) for t in plan.theirs],
            "ancestor": None if plan.ancestor is None else str(plan.ancestor),
            "strategy": strategy,
            "actor": actor,
            "reason": reason,
            "at": at,
            "verdicts": decisions,
        }
        if state is not None:
            found["resolutions"] = state.get("resolutions", {})
            if "accepted_removals" in state:
                found["accepted_removals"] = state["accepted_removals"]
        return {k: v for k, v in found.items() if v is not None}

    return entry
