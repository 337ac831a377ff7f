"""The ledger: derived views of a snapshot's provenance module (§7.1), accessibility (§7.2) and the
cascade closure (§7.4).

Records are applied in time order (`at`, then record block id) so "last wins" means the latest record.
Provenance v2 records (later schema, read as generic blocks) are mapped onto the v1 record models; a v2
derivation names its producer through `assisted_by`, so its first collaborator stands in as producer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

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

if TYPE_CHECKING:
    from brain.module import Module

_RECORD = TypeAdapter(Record)


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
    superseded_by: defaultdict[BlockId, set[BlockId]] = field(default_factory=lambda: defaultdict(set))
    supersessions: list[SupersessionRecord] = field(default_factory=list)
    demoted: set[BlockId] = field(default_factory=set)
    demotions: dict[BlockId, DemotionRecord] = field(default_factory=dict)
    removed: set[BlockId] = field(default_factory=set)
    removals: list[tuple[BlockId, RemovalRecord]] = field(default_factory=list)
    _structural: defaultdict[BlockId, set[BlockId]] | None = field(default=None, repr=False)
    _structural_edges: Callable[[], Iterable[tuple[BlockId, BlockId]]] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, modules: Mapping[MemoryType, Module]) -> Ledger:
        """Build the views from the modules of one snapshot.

        Reads the provenance module now; the semantic and procedural blocks (for structural edges) are
        read only when `structural_dependents` or `closure` is first used.
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
            self.superseded_by[record.supersedes].add(record.block)
        elif isinstance(record, DemotionRecord):
            self.demoted.add(record.block)
            self.demotions[record.block] = record
        elif isinstance(record, RemovalRecord):
            self.removals.append((record_id, record))
            self.removed.update(record.blocks)

    def is_accessible(self, block_id: BlockId) -> bool:
        """No supersession names it as the loser and no demotion names it (§7.2)."""
        return not self.superseded_by.get(block_id) and block_id not in self.demoted

    def closure(self, sources: BlockId | Iterable[BlockId]) -> set[BlockId]:
        """Every transitive dependent of `sources` via evidence and structural edges, sources excluded.

        May name blocks that are no longer members anywhere; callers intersect with module membership.
        """
        start = {sources} if isinstance(sources, BlockId) else set(sources)
        seen: set[BlockId] = set()
        frontier = list(start)
        while frontier:
            current = frontier.pop()
            for nxt in (*self.dependents.get(current, ()), *self.structural_dependents.get(current, ())):
                if nxt not in seen and nxt not in start:
                    seen.add(nxt)
                    frontier.append(nxt)
        return seen

    def made_by(self, producer: Producer) -> set[BlockId]:
        """Blocks whose derivation names `producer` (kind + id, and version when `producer` gives one)."""
        return {
            block_id
            for block_id, made in self.producer.items()
            if made.kind == producer.kind
            and made.id == producer.id
            and (producer.version is None or made.version == producer.version)
        }
