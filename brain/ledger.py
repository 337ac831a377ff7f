"""The ledger: derived views of a snapshot's provenance module (§7.1), accessibility (§7.2), the evidence
closure (§7.1) and the drop cascade (§7.4), named apart.

`closure` follows evidence edges only (`derivation.derived_from`), as the reference's API does;
`cascade` adds the structural edges (`relations[].target`, `steps[].uses`) a drop must follow.
`superseded_by[loser]` is one winner (the latest record's); a loser claimed by two different winners is a
precedence conflict, kept whole in `precedence_conflicts`.

Accessibility (§7.2, `brain.lifecycle.accessibility`): a supersession hides its loser only while its winner
is still a member; a ledger built from a snapshot's modules knows the membership, one built from bare
records treats every winner as a member.

Records are applied in time order (`at`, then record block id) so "last wins" means the latest record.
Provenance v2 records (later schema, read as generic blocks) are mapped onto the v1 record models; a v2
derivation names its producer through `assisted_by`, so its first collaborator stands in as producer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ConfigDict, TypeAdapter, ValidationError

from brain.blocks.base import Block
from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import (
    DemotionRecord,
    DerivationRecord,
    NormalizationRecord,
    Producer,
    ProvenanceBlock,
    Record,
    RegistrationRecord,
    RemovalRecord,
    SupersessionRecord,
    ValidationRecord,
)
from brain.identity import BlockId
from brain.lifecycle.accessibility import is_accessible
from brain.lifecycle.cascade import reach



class Module(Protocol):
    """What the ledger reads of a module (`brain.module.Module`): membership and its decoded blocks."""

    def __contains__(self, block_id: object) -> bool: ...

    def blocks(self) -> Iterator[Block]: ...


_RECORD = TypeAdapter(Record, config=ConfigDict(defer_build=True))  # built on first use (`brain.frozen`)


def record_of(block: Block) -> Record | None:
    """The ledger record a provenance block holds (v1 typed, v2 mapped), or None if it is not one."""
    if isinstance(block, ProvenanceBlock):
        return block.record
    if block.memory_type is not MemoryType.PROVENANCE:
        return None
    raw: dict[str, Any] = dict(block.payload().get("record", {}))
    collaborators = raw.pop("assisted_by", None) or []
    if raw.get("record_type") == "derivation" and "producer" not in raw and collaborators:
        first = collaborators[0]
        model = first.get("model")
        raw["producer"] = {"kind": "model", "id": model} if model else {"kind": "actor", "id": first["id"]}
    try:
        return _RECORD.validate_python(raw)
    except ValidationError:
        return None


def structural_targets(block: Block) -> set[BlockId]:
    """Blocks this one depends on structurally: semantic `relations[].target`, procedural `steps[].uses`."""
    payload = block.payload()
    found: set[object] = set()  # checked below: a generic block's payload is only schema-checked
    if block.memory_type is MemoryType.SEMANTIC:
        found.update(r.get("target") for r in payload.get("relations") or () if isinstance(r, dict))
    elif block.memory_type is MemoryType.PROCEDURAL:
        for step in payload.get("steps") or ():
            if isinstance(step, dict):
                found.update(step.get("uses") or ())
    return {BlockId.parse(x) for x in found if isinstance(x, str)}


def membership(modules: Mapping[MemoryType, Module]) -> Callable[[BlockId], bool] | None:
    """The membership accessibility consults: any module but provenance (None without one: every winner counts)."""
    held = [module for t, module in modules.items() if t is not MemoryType.PROVENANCE]
    return (lambda block_id: any(block_id in module for module in held)) if held else None


@dataclass
class Ledger:
    """What the provenance records say about every block, plus the dependency graph used by drops."""

    records: list[tuple[BlockId, Record]] = field(default_factory=list)
    registrations: dict[BlockId, RegistrationRecord] = field(default_factory=dict)
    normalizations: dict[BlockId, NormalizationRecord] = field(default_factory=dict)
    derivations: dict[BlockId, DerivationRecord] = field(default_factory=dict)
    validations: dict[BlockId, ValidationRecord] = field(default_factory=dict)
    evidence: dict[BlockId, tuple[BlockId, ...]] = field(default_factory=dict)
    dependents: defaultdict[BlockId, set[BlockId]] = field(default_factory=lambda: defaultdict(set))
    producer: dict[BlockId, Producer] = field(default_factory=dict)
    locators: dict[BlockId, str] = field(default_factory=dict)
    tasks: dict[BlockId, str] = field(default_factory=dict)
    superseded_by: dict[BlockId, BlockId] = field(default_factory=dict)
    winners: dict[BlockId, tuple[BlockId, ...]] = field(default_factory=dict)
    supersessions: list[SupersessionRecord] = field(default_factory=list)
    demoted: set[BlockId] = field(default_factory=set)
    demotions: dict[BlockId, DemotionRecord] = field(default_factory=dict)
    removed: set[BlockId] = field(default_factory=set)
    removals: list[tuple[BlockId, RemovalRecord]] = field(default_factory=list)
    is_member: Callable[[BlockId], bool] | None = field(default=None, repr=False)
    _structural: defaultdict[BlockId, set[BlockId]] | None = field(default=None, repr=False)
    _structural_edges: Callable[[], Iterable[tuple[BlockId, BlockId]]] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, modules: Mapping[MemoryType, Module], *, members: Mapping[MemoryType, Module] | None = None) -> Ledger:
        """Build the views from the modules of one snapshot.

        Reads the provenance module now; the semantic and procedural blocks (for structural edges) are
        read only when `structural_dependents` or `cascade` is first used. `members` (default: `modules`)
        is the membership accessibility consults; without any non-provenance module every winner counts.
        """
        records: list[tuple[BlockId, Record]] = []
        provenance = modules.get(MemoryType.PROVENANCE)
        if provenance is not None:
            for block in provenance.blocks():
                record = record_of(block)
                if record is not None:
                    records.append((block.block_id, record))
        derived = [modules[t] for t in (MemoryType.SEMANTIC, MemoryType.PROCEDURAL) if t in modules]

        def structural() -> Iterator[tuple[BlockId, BlockId]]:
            for module in derived:
                for block in module.blocks():
                    yield from ((target, block.block_id) for target in structural_targets(block))

        ledger = cls.from_records(records)
        ledger._structural, ledger._structural_edges = None, structural
        ledger.is_member = membership(modules if members is None else members)
        return ledger

    @classmethod
    def from_records(
        cls, records: Iterable[tuple[BlockId, Record]], structural: Iterable[tuple[BlockId, BlockId]] = ()
    ) -> Ledger:
        """Pure construction from `(record block id, record)` pairs and `(target, dependent)` edges."""
        ledger = cls()
        for record_id, record in sorted(records, key=lambda pair: (pair[1].at, pair[0])):
            ledger._apply(record_id, record)
        ledger._structural = defaultdict(set)
        for target, dependent in structural:
            ledger._structural[target].add(dependent)
        return ledger

    @property
    def structural_dependents(self) -> defaultdict[BlockId, set[BlockId]]:
        """target → blocks that name it in `relations[].target` or `steps[].uses` (§7.4)."""
        if self._structural is None:
            self._structural = defaultdict(set)
            for target, dependent in self._structural_edges() if self._structural_edges is not None else ():
                self._structural[target].add(dependent)
        return self._structural

    def _apply(self, record_id: BlockId, record: Record) -> None:
        self.records.append((record_id, record))
        if isinstance(record, RegistrationRecord):
            self.registrations[record.block] = record
        elif isinstance(record, NormalizationRecord):
            self.normalizations[record.block] = record
        elif isinstance(record, DerivationRecord):
            self.derivations[record.block] = record
            cited = (*self.evidence.get(record.block, ()), *record.derived_from)
            self.evidence[record.block] = tuple(dict.fromkeys(cited))
            for source in record.derived_from:
                self.dependents[source].add(record.block)
            self.producer[record.block] = record.producer
            if record.locator is not None:
                self.locators[record.block] = record.locator
            if record.task is not None:
                self.tasks[record.block] = record.task
        elif isinstance(record, ValidationRecord):
            self.validations[record.block] = record
        elif isinstance(record, SupersessionRecord):
            self.supersessions.append(record)
            self.superseded_by[record.supersedes] = record.block
            claimed = self.winners.get(record.supersedes, ())
            if record.block not in claimed:
                self.winners[record.supersedes] = (*claimed, record.block)
        elif isinstance(record, DemotionRecord):
            self.demoted.add(record.block)
            self.demotions[record.block] = record
        elif isinstance(record, RemovalRecord):
            self.removals.append((record_id, record))
            self.removed.update(record.blocks)

    @property
    def precedence_conflicts(self) -> dict[BlockId, tuple[BlockId, ...]]:
        """Losers claimed by two or more different winners → every winner, in record order (§7.1)."""
        return {loser: claimed for loser, claimed in self.winners.items() if len(claimed) > 1}

    def is_accessible(self, block_id: BlockId) -> bool:
        """Not demoted, and not the loser of a supersession whose winner is still a member (§7.2)."""
        return is_accessible(block_id, self.winners, self.demoted, self.is_member)

    def closure(self, sources: BlockId | Iterable[BlockId]) -> set[BlockId]:
        """Everything that cites `sources`, transitively: evidence edges only, sources excluded (§7.1).

        May name blocks that are no longer members anywhere; callers intersect with module membership.
        """
        return reach(sources, lambda b: self.dependents.get(b, ()))

    def cascade(self, sources: BlockId | Iterable[BlockId]) -> set[BlockId]:
        """The drop cascade of `sources` (§7.4): evidence and structural edges, transitively, sources excluded."""
        structural = self.structural_dependents
        return reach(sources, lambda b: (*self.dependents.get(b, ()), *structural.get(b, ())))

    def made_by(self, producer: Producer) -> set[BlockId]:
        """Blocks whose derivation names `producer` (kind + id, and version when `producer` gives one)."""
        return {
            block_id
            for block_id, made in self.producer.items()
            if made.kind == producer.kind
            and made.id == producer.id
            and (producer.version is None or made.version == producer.version)
        }
