"""`brain diff`: what changed between two snapshots, per module, with titles, origins and reasons.

A `Side` is one snapshot's module references and member lists, wherever they come from (this brain, or a
registry: `oci.diff_sides`). Member lists are compared from the compositions; only the changed blocks
(and the provenance records added in between) are decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import RegistrationRecord
from brain.brain import Brain
from brain.composition import ModuleRef
from brain.errors import BrainError, NotFoundError
from brain.frozen import FrozenModel
from brain.identity import BlockId, OciDigest
from brain.lifecycle.describe import title_of
from brain.lifecycle.diff import ModuleChange, apply_records, module_changes, summary_line
from brain.lifecycle.summary import readable_records
from brain.lifecycle.usecases import LEDGER_LINEAGE, Lineage

TITLES_PER_LIST = 200
EMPTY = "(empty)"


class Change(FrozenModel):
    """One changed block."""

    block: BlockId
    title: str | None
    origin: str | None = None
    mechanism: str | None = None
    reason: str | None = None
    winner: BlockId | None = None


class ModuleDiff(FrozenModel):
    """One module's changes."""

    added: list[Change]
    removed: list[Change]
    superseded: list[Change]
    demoted: list[Change]
    redacted: list[Change]


class DiffResult(FrozenModel):
    """The two snapshots compared, the changes per module, and the counts."""

    a: str
    b: str
    a_snapshot: OciDigest | None
    b_snapshot: OciDigest
    differ: bool
    modules: dict[str, ModuleDiff]
    counts: dict[str, int]
    summary: str


class Side:
    """One side of the comparison: its label, snapshot digest, module references and member lists."""

    def __init__(self, label: str, snapshot: OciDigest | None, refs: Mapping[MemoryType, ModuleRef],
                 members: Callable[[ModuleRef], Sequence[BlockId]]) -> None:
        self.label, self.snapshot, self.refs, self.members = label, snapshot, dict(refs), members

    @classmethod
    def empty(cls) -> Side:
        """Nothing: the side before a first snapshot."""
        return cls(EMPTY, None, {}, lambda ref: ())

    @classmethod
    def local(cls, brain: Brain, label: str, digest: OciDigest) -> Side:
        """A snapshot stored in `brain`."""
        snapshot = brain.snapshot(digest)
        assert snapshot is not None
        return cls(label, digest, {MemoryType(k): v for k, v in snapshot.modules.items()},
                   lambda ref: brain.composition(ref).block_ids)


def compare(brain: Brain, left: Side, right: Side, lineage: Lineage | None = None) -> DiffResult:
    """The diff of two sides (pure apart from reading the changed blocks' bytes when stored here); origins come
    from the records read and the head's `lineage` (default: its full ledger)."""
    changes = module_changes(left.refs, right.refs, lambda ref: _members(left, right, ref))
    provenance = changes.get(MemoryType.PROVENANCE)
    members = {t: set(right.members(ref)) for t, ref in right.refs.items() if t is not MemoryType.PROVENANCE
               and t in changes}

    def module_of(block: BlockId) -> MemoryType | None:
        return next((t for t, ids in members.items() if block in ids), None)

    records = readable_records(brain, () if provenance is None else (*provenance.added, *provenance.removed))
    apply_records(changes, records, module_of)
    origins = _Origins(brain, records, lineage or LEDGER_LINEAGE)
    modules = {str(t): _module_diff(brain, c, origins) for t, c in changes.items() if not c.empty}
    counts = {
        kind: sum(len(getattr(m, kind)) for m in modules.values())
        for kind in ("added", "removed", "superseded", "demoted", "redacted")
    }
    differ = left.snapshot != right.snapshot and any(counts.values()) or left.refs != right.refs
    return DiffResult(
        a=left.label, b=right.label, a_snapshot=left.snapshot, b_snapshot=_known(right.snapshot), differ=bool(differ),
        modules=modules, counts=counts, summary=summary_line(changes),
    )


def _known(snapshot: OciDigest | None) -> OciDigest:
    if snapshot is None:
        raise NotFoundError("nothing to compare: the second side is empty")
    return snapshot


class _Origins(Mapping[BlockId, str]):
    """Registered origins: the registrations just read, else the head's lineage (looked up per changed block)."""

    def __init__(self, brain: Brain, records: Iterable[object], lineage: Lineage) -> None:
        self.recorded = {r.block: r.origin for r in records if isinstance(r, RegistrationRecord) and r.origin}
        head = brain.snapshot_digest()
        self.graph = None if head is None else lineage.graph(brain, head)

    def __getitem__(self, block: BlockId) -> str:
        found = self.recorded.get(block) or (None if self.graph is None else self.graph.origin(block))
        if found is None:
            raise KeyError(block)
        return found

    def __iter__(self) -> Iterator[BlockId]:
        return iter(self.recorded)

    def __len__(self) -> int:
        return len(self.recorded)


def _members(left: Side, right: Side, ref: ModuleRef) -> Sequence[BlockId]:
    for side in (right, left):
        if any(r.composition == ref.composition for r in side.refs.values()):
            return side.members(ref)
    raise NotFoundError(f"composition {ref.composition} is not available")


def _module_diff(brain: Brain, change: ModuleChange, origins: Mapping[BlockId, str]) -> ModuleDiff:
    removed_by = change.removed_by

    def entries(blocks: Iterable[BlockId]) -> list[Change]:
        rows = []
        for i, block in enumerate(blocks):
            record = removed_by.get(block)
            rows.append(Change(
                block=block,
                title=_title(brain, block) if i < TITLES_PER_LIST else None,
                origin=origins.get(block),
                mechanism=None if record is None else str(record.mechanism),
                reason=None if record is None else record.reason,
            ))
        return rows

    return ModuleDiff(
        added=entries(change.added),
        removed=entries(change.removed),
        superseded=[
            Change(block=loser, title=_title(brain, loser), winner=winner)
            for loser, winner in change.superseded.items()
        ],
        demoted=[Change(block=b, title=_title(brain, b), reason=reason) for b, reason in change.demoted.items()],
        redacted=[Change(block=b, title=None) for b in change.redacted],
    )


def _title(brain: Brain, block: BlockId) -> str | None:
    try:
        return title_of(brain.resolve(block))
    except BrainError:
        return None


__all__ = ["EMPTY", "Change", "DiffResult", "ModuleDiff", "Side", "compare"]
