"""What an ingest needs from the brain beyond membership, kept in a local append-only log so that replacing
one file in a large brain, or judging one source's proposals, reads one file instead of decoding every
provenance and semantic block.

Seven kinds of fact, each only ever added (readers intersect them with the snapshot's members, so a drop
adds none and a dropped block's facts simply stop mattering):

    registered   origin → canonical block      (registration records that name an origin)
    superseded   loser → winner                (supersession records)
    demoted      block                         (demotion records)
    cited        derived block → evidence ids, task id, producer  (derivation records)
    stated       semantic block → (label, subject, kind) and statement   (the gate's contradiction check)
    linked       target → semantic/procedural block naming it in `relations[].target` / `steps[].uses`
                 (the structural edges of the drop cascade, §7.4)
    recorded     provenance record → the blocks it is about and the blocks it cites (so `brain show`
                 decodes the few records about one block, not the whole ledger)

`boltzmann/cache/lineage.log` holds JSON lines: a format line, then for each commit the facts it added
and a marker naming the snapshot it made and how many facts precede it since the previous marker. The
log describes a snapshot only if its last marker names it and every count matches; anything else
(another tool moved the head, a kill between commit and append, a damaged line, another format) makes
it stale. The next run that needs it (`ingest.lineage_graph.lineage_of`) catches a whole log up when the
snapshot it describes has a ledger the new one contains (another tool moved the head, a kill between
commit and append: only the blocks added since are read and their facts appended), and otherwise rebuilds
it from the ledger and the semantic module once.
Local, never published, never trusted beyond that check: readers still intersect what it says with the
snapshot's members.
"""

from __future__ import annotations

import bisect
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

import orjson

from brain.blocks import Block, MemoryType, ProceduralBlock, SemanticBlock
from brain.blocks.provenance import (
    DemotionRecord,
    DerivationRecord,
    Record,
    RegistrationRecord,
    RemovalRecord,
    SupersessionRecord,
)
from brain.concurrency import PARALLEL_THRESHOLD, parallel_map
from brain.errors import BrainError, IntegrityError
from brain.identity import BlockId, OciDigest
from brain.ledger import record_of, structural_targets
from brain.module import read_block
from brain.store.atomic import atomic_write
from brain.store.blobs import BlobStore
from brain.store.sidecars import LINEAGE
from ingest.validate import ContradictionKey, statement_key

LOG = Path(*LINEAGE.parts)
FORMAT = "brain.lineage/4"  # the first line; a log of another format (or none) is stale
_MARKER = "snapshot"
_TAIL = 1 << 16  # a marker line is short; the tail read to find the last one
# How a marker line and a `registered` line start, after the newline that ends the line before (`origins`).
_MARKER_LINE = b'\n["snapshot",'
_REGISTERED_LINE = b'\n["registered",'



class Registered(NamedTuple):
    """A `registration` record naming an origin: the origin now names this canonical block."""

    kind: Literal["registered"]
    origin: str
    block: str


class Superseded(NamedTuple):
    """A `supersession` record: `loser` is superseded by `winner`."""

    kind: Literal["superseded"]
    loser: str
    winner: str


class Demoted(NamedTuple):
    """A `demotion` record."""

    kind: Literal["demoted"]
    block: str


class Cited(NamedTuple):
    """A `derivation` record: `block` cites `evidence`, asked under `task`, made by `producer`."""

    kind: Literal["cited"]
    block: str
    evidence: tuple[str, ...]
    task: str | None
    producer: tuple[str, str, str | None]
    """The producer's kind, id and version."""


class Stated(NamedTuple):
    """A semantic member's contradiction key and statement, for the gate."""

    kind: Literal["stated"]
    block: str
    label: str
    subject: str | None
    semantic_kind: str
    statement: str


class Linked(NamedTuple):
    """A semantic relation or procedural step names `target`: `block` depends on it structurally."""

    kind: Literal["linked"]
    target: str
    block: str


class Recorded(NamedTuple):
    """A provenance record (`record`) is about `about` (its block, a supersession's loser, a removal's
    blocks) and cites `cited` (a derivation's evidence): every view `Ledger` files it under."""

    kind: Literal["recorded"]
    record: str
    about: tuple[str, ...]
    cited: tuple[str, ...]


# One line of the log each (a JSON array: the kind, then the fields), block ids as hex.
Fact = Registered | Superseded | Demoted | Cited | Stated | Linked | Recorded


Few = tuple[str, ...] | set[str]
"""The values a lineage index maps a key to: up to `_FEW` of them as a sorted tuple (most keys have one to three:
a source's task, its records, its derived blocks), more as a set. A set costs ~216 bytes however few it holds,
a tuple 40 + 8 a member: ~1.2 KB a source over the indexes. Read them as a collection (`in`, iteration,
`len`, `sorted`); only `apply` adds to them."""

_FEW = 8


def _add(index: dict[str, Few], key: str, value: str) -> None:
    """Add `value` to the values of `key` (see `Few`: the sorted tuple stays one form for the same members)."""
    found = index.get(key)
    if found is None:
        index[key] = (value,)
    elif type(found) is tuple:
        if value not in found:
            if len(found) < _FEW:
                at = bisect.bisect(found, value)
                index[key] = (*found[:at], value, *found[at:])
            else:
                index[key] = {*found, value}
    else:
        found.add(value)  # type: ignore[union-attr]


@dataclass
class Lineage:
    """The facts, indexed the ways a run asks for them, keyed by block-id hex (never `sha256:…` strings)."""

    origins: dict[str, Few] = field(default_factory=dict)
    superseded_by: dict[str, Few] = field(default_factory=dict)
    demoted: set[str] = field(default_factory=set)
    evidence: dict[str, tuple[str, ...]] = field(default_factory=dict)
    dependents: dict[str, Few] = field(default_factory=dict)
    answered: dict[str, Few] = field(default_factory=dict)  # source → task ids that derived from it
    statements: dict[ContradictionKey, dict[str, str]] = field(default_factory=dict)  # key → {hex: statement}
    producers: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)  # derived → (kind, id, version)
    linked: dict[str, Few] = field(default_factory=dict)  # target → blocks naming it structurally
    records_about: dict[str, Few] = field(default_factory=dict)  # block → records naming it as a subject
    records_citing: dict[str, Few] = field(default_factory=dict)  # block → derivation records citing it

    def apply(self, fact: Sequence[Any]) -> None:
        """Index one fact: a `Fact`, or the JSON array the log holds for it (same fields, same order)."""
        kind = fact[0]
        # Tested in order of frequency: every provenance block adds a `recorded`, a derived block a `cited`.
        if kind == "recorded":
            for block in fact[2]:
                _add(self.records_about, block, fact[1])
            for block in fact[3]:
                _add(self.records_citing, block, fact[1])
        elif kind == "cited":
            derived, cited, task = fact[1], tuple(fact[2]), fact[3]
            if len(fact) > 4 and fact[4] is not None:
                kind_, id_, version = fact[4]
                self.producers[derived] = (kind_, id_, version)
            self.evidence[derived] = tuple(dict.fromkeys((*self.evidence.get(derived, ()), *cited)))
            for source in cited:
                _add(self.dependents, source, derived)
                if task is not None:
                    _add(self.answered, source, task)
        elif kind == "registered":
            _add(self.origins, fact[1], fact[2])
        elif kind == "stated":
            _, block, label, subject, semantic_kind, statement = fact
            self.statements.setdefault((label, subject, semantic_kind), {})[block] = statement
        elif kind == "superseded":
            _add(self.superseded_by, fact[1], fact[2])
        elif kind == "demoted":
            self.demoted.add(fact[1])
        elif kind == "linked":
            _add(self.linked, fact[1], fact[2])  # type: ignore[arg-type]
        else:
            raise ValueError(f"unknown lineage fact {kind!r}")

    def is_accessible(self, block: str) -> bool:
        """No supersession names it as the loser and no demotion names it (§7.2)."""
        return block not in self.superseded_by and block not in self.demoted

    @classmethod
    def of_facts(cls, facts: Iterable[Fact]) -> Lineage:
        lineage = cls()
        for fact in facts:
            lineage.apply(fact)
        return lineage


def read_lineage(
    root: Path,
    provenance: Sequence[BlockId],
    semantic: Sequence[BlockId],
    *,
    threshold: int = PARALLEL_THRESHOLD,
) -> tuple[Lineage, list[Fact]]:
    """The lineage of a snapshot's provenance members and its semantic and procedural members (`semantic`
    names both; read and decoded in forked workers when there are many), and the facts that rebuild it.

    Records apply in the ledger's order (time, then record id), then the statements; a member that is
    missing, corrupt or invalid raises `IntegrityError` naming it, as reading the ledger would.
    """
    hexes = [b.hex for b in (*provenance, *semantic)]
    found = [_checked(f) for f in parallel_map(_read_facts, root, hexes, threshold=threshold)]
    records = sorted(found[: len(provenance)], key=lambda item: (item[0], item[1]))
    facts = [fact for _, _, of_block in (*records, *found[len(provenance) :]) for fact in of_block]
    return Lineage.of_facts(facts), facts


def _read_facts(root: Path, hexes: Sequence[str]) -> list[tuple[str, str, tuple[Fact, ...]] | str]:
    """Worker: per block, `(record time or "", hex, facts)`, or the error message if it cannot be read."""
    blobs = BlobStore(root)
    results: list[tuple[str, str, tuple[Fact, ...]] | str] = []
    for hex_digest in hexes:
        try:
            block = read_block(blobs, BlockId(hex_digest))
        except BrainError as e:
            results.append(e.message)
            continue
        record = record_of(block) if block.memory_type is MemoryType.PROVENANCE else None
        results.append((record.at if record is not None else "", hex_digest, tuple(facts_of_block(block))))
    return results


def _checked(found: tuple[str, str, tuple[Fact, ...]] | str) -> tuple[str, str, tuple[Fact, ...]]:
    if isinstance(found, str):
        raise IntegrityError(found, hint="run `brain verify` to see every damaged block, then restore them")
    return found


def facts_of_block(block: Block) -> list[Fact]:
    """The facts a block adds as it becomes a member (provenance records, semantic statements, structural links)."""
    memory_type = block.memory_type
    if memory_type is MemoryType.PROVENANCE:
        record = record_of(block)
        return [] if record is None else facts_of(record, block.block_id)
    if memory_type is not MemoryType.SEMANTIC and memory_type is not MemoryType.PROCEDURAL:
        return []
    facts: list[Fact] = []
    stated = statement_of(block)
    if stated is not None:
        facts.append(Stated("stated", block.block_id.hex, *stated[0], stated[1]))
    targets = _structural_targets(block)
    if targets:
        block_hex = block.block_id.hex
        facts += [Linked("linked", target, block_hex) for target in sorted(t.hex for t in targets)]
    return facts


def statement_of(block: Block) -> tuple[ContradictionKey, str] | None:
    """A semantic block's contradiction key and statement (`ingest.validate.statement_key`), None if it has none."""
    if isinstance(block, SemanticBlock):  # v1: the fields themselves, not a dump of the whole payload
        return (block.label, block.subject, block.kind.value), block.statement
    if block.memory_type is not MemoryType.SEMANTIC:
        return None
    key, statement = statement_key(block.payload())
    return None if key is None else (key, statement)


def _structural_targets(block: Block) -> set[BlockId]:
    """`brain.ledger.structural_targets`, from a v1 block's fields when it is one."""
    if isinstance(block, SemanticBlock):
        return {relation.target for relation in block.relations or ()}
    if isinstance(block, ProceduralBlock):
        return {used for step in block.steps for used in step.uses or ()}
    return structural_targets(block)


def facts_of(record: Record, record_id: BlockId) -> list[Fact]:
    """The lineage facts the provenance record `record_id` adds: what it is about and cites, then those
    replacing consults."""
    # Each record type's own fields, never `getattr(record, name, None)`: a field a pydantic model lacks goes
    # through its `__getattr__` and an AttributeError, microseconds per record on every staged block.
    block = record.blocks if isinstance(record, RemovalRecord) else (record.block,)
    if isinstance(record, SupersessionRecord):
        about = tuple(sorted({record.block.hex, record.supersedes.hex}))
    elif len(block) == 1:
        about = (block[0].hex,)
    else:
        about = tuple(sorted({b.hex for b in block}))
    if isinstance(record, DerivationRecord):
        cited = tuple(b.hex for b in record.derived_from)
        producer = record.producer
        made = (producer.kind.value, producer.id, producer.version)
        return [
            Recorded("recorded", record_id.hex, about, cited),
            Cited("cited", record.block.hex, cited, record.task, made),
        ]
    facts: list[Fact] = [Recorded("recorded", record_id.hex, about, ())]
    if isinstance(record, RegistrationRecord):
        if record.origin is not None:
            facts.append(Registered("registered", record.origin, record.block.hex))
    elif isinstance(record, SupersessionRecord):
        facts.append(Superseded("superseded", record.supersedes.hex, record.block.hex))
    elif isinstance(record, DemotionRecord):
        facts.append(Demoted("demoted", record.block.hex))
    return facts


def _line(fact: Fact | tuple[str, ...]) -> str:
    try:
        # orjson writes exactly what `json.dumps(ensure_ascii=False, separators=(",", ":"))` does, ~10x faster
        # (a fact is a NamedTuple, which it takes as a tuple through `default`).
        return orjson.dumps(fact, default=tuple).decode() + "\n"
    except orjson.JSONEncodeError:  # a lone surrogate (an undecodable file name): the standard encoder's way
        return json.dumps(fact, ensure_ascii=False, separators=(",", ":")) + "\n"


def _marker(snapshot: OciDigest, count: int) -> str:
    return _line((_MARKER, str(snapshot), str(count)))


class LineageLog:
    """The log file of one brain directory."""

    def __init__(self, brain_path: Path) -> None:
        self.path = Path(brain_path) / LOG

    def load(self, snapshot: OciDigest, kinds: frozenset[str] | None = None) -> Lineage | None:
        """The lineage as of `snapshot`, or None if the log does not describe exactly that snapshot; with
        `kinds`, only facts of those kinds are indexed (every line is still checked)."""
        found = self.read(kinds)
        return found[0] if found is not None and found[1] == str(snapshot) else None

    def read(self, kinds: frozenset[str] | None = None) -> tuple[Lineage, str] | None:
        """The lineage the log holds and the snapshot it describes (its last marker), or None if it is not a
        whole log of this format (missing, damaged, a count that does not match, facts after the last marker)."""
        try:
            handle = open(self.path, encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError:
            return None
        lineage, pending, last = Lineage(), 0, None
        with handle:
            try:
                lines = handle.read().splitlines()
                if not lines or json.loads(lines[0]) != ["format", FORMAT]:
                    return None
                # One parse of the whole log as an array: a damaged line fails it as it failed alone.
                facts = json.loads("[" + ",".join(lines[1:]) + "]")
                for fact in facts:
                    if fact[0] == _MARKER:
                        if int(fact[2]) != pending:
                            return None
                        last, pending = fact[1], 0
                    else:
                        if kinds is None or fact[0] in kinds:
                            lineage.apply(fact)
                        pending += 1
            except (ValueError, TypeError, IndexError, UnicodeError):
                return None
        return (lineage, last) if isinstance(last, str) and pending == 0 else None

    def origins(self, snapshot: OciDigest) -> list[str] | None:
        """The origin of every `registered` fact, or None if the log does not describe exactly `snapshot`.

        A byte scan for the few lines that matter (one in a dozen), so asking "which origins does the brain
        name?" costs a read of the log, not a decode of every fact. The check is `load`'s, but for the JSON
        of the other lines: each marker counts the lines since the previous one, and the last names
        `snapshot` and ends the log.
        """
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        head = _line(("format", FORMAT)).encode()
        if not data.startswith(head):
            return None
        start, last = len(head), None  # the first line of the current segment; the last marker's snapshot
        at = data.find(_MARKER_LINE, start - 1)  # each needle starts with the newline ending the line before
        while at >= 0:
            end = data.find(b"\n", at + 1)
            try:
                _, last, count = json.loads(data[at + 1 : end if end >= 0 else len(data)])
                if end < 0 or data.count(b"\n", start, at + 1) != int(count):
                    return None
            except (ValueError, TypeError):
                return None
            start = end + 1
            at = data.find(_MARKER_LINE, end)
        if last != str(snapshot) or start != len(data):
            return None
        found: list[bytes] = []
        at = data.find(_REGISTERED_LINE, len(head) - 1)
        while at >= 0:
            end = data.index(b"\n", at + 1)  # before the last marker, which ends with one
            # `["registered",<origin>,"<64 hex>"]`: keep the origin's JSON string.
            if data[end - 68 : end - 66] != b',"' or data[end - 2 : end] != b'"]':
                return None
            found.append(data[at + len(_REGISTERED_LINE) : end - 68])
            at = data.find(_REGISTERED_LINE, end)
        try:
            origins = json.loads(b"[" + b",".join(found) + b"]")
        except ValueError:
            return None
        return origins if all(isinstance(o, str) for o in origins) else None

    def last_snapshot(self) -> str | None:
        """The snapshot the log's last marker names (None if there is none, or the tail is not a marker)."""
        try:
            with open(self.path, "rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(0, size - _TAIL))
                tail = handle.read().splitlines()
        except OSError:
            return None
        try:
            fact = json.loads(tail[-1]) if tail else None
        except ValueError:
            return None
        return fact[1] if isinstance(fact, list) and len(fact) == 3 and fact[0] == _MARKER else None

    def rewrite(self, facts: Iterable[Fact], snapshot: OciDigest) -> None:
        """Replace the log with `facts` describing `snapshot`."""
        lines = [_line(f) for f in facts]
        lines.append(_marker(snapshot, len(lines)))
        lines.insert(0, _line(("format", FORMAT)))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, "".join(lines).encode(), sync=False)

    def append(self, facts: list[Fact], snapshot: OciDigest) -> None:
        """Add one commit's facts (the log must describe the commit's parent snapshot)."""
        text = "".join(_line(f) for f in facts) + _marker(snapshot, len(facts))
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(text)

