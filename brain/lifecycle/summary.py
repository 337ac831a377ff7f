"""The one-line change summary `brain log` prints per snapshot (`+12 semantic, -3 procedural (drop: ...)`).

Compares the snapshot with its first parent from the compositions of the modules that changed; the
provenance records added in between are decoded only when members left a module or when they are few
(an ingest adds thousands, and its summary is its counts), so the summary of a large ingest stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MemoryType
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.blocks.provenance import Record
from brain.ledger import record_of
from brain.lifecycle.diff import apply_records, module_changes, summary_line
from brain.snapshot import Snapshot

if TYPE_CHECKING:
    from brain.brain import Brain

RECORDS_READ_ALWAYS = 256


def readable_records(brain: Brain, blocks: Iterable[BlockId]) -> list[Record]:
    """The provenance records among `blocks` that this brain can read (redacted or missing ones skipped)."""
    records = []
    for block in blocks:
        try:
            record = record_of(brain.resolve(block))
        except BrainError:
            continue
        if record is not None:
            records.append(record)
    return records


def snapshot_summary(brain: Brain, snapshot: Snapshot, parent: Snapshot | None) -> str:
    """What `snapshot` changed over `parent` (None: a first snapshot), in one line."""
    before = {} if parent is None else {MemoryType(k): v for k, v in parent.modules.items()}
    after = {MemoryType(k): v for k, v in snapshot.modules.items()}
    changes = module_changes(before, after, lambda ref: brain.composition(ref).block_ids)
    provenance = changes.get(MemoryType.PROVENANCE)
    added = () if provenance is None else provenance.added
    lost = any(c.removed for t, c in changes.items() if t is not MemoryType.PROVENANCE)
    if added and (lost or len(added) <= RECORDS_READ_ALWAYS):
        records = readable_records(brain, added)
        sets: dict[MemoryType, frozenset[BlockId]] = {}

        def module_of(block: BlockId) -> MemoryType | None:
            for memory_type, ref in after.items():
                if memory_type is not MemoryType.PROVENANCE:
                    if memory_type not in sets:
                        sets[memory_type] = frozenset(brain.composition(ref).block_ids)
                    if block in sets[memory_type]:
                        return memory_type
            return None

        apply_records(changes, records, module_of)
    return summary_line(changes)


def history_graph(brain: Brain, start: OciDigest) -> list[tuple[OciDigest, Snapshot, str]]:
    """Every stored snapshot reachable from `start` through all parents, children before parents (newest
    first among those ready), each with a `git log --graph`-style prefix: `*` in its column, `|` for the
    other lines of history; a merge opens one column per further parent."""
    from brain.lifecycle.reachability import snapshot_chain

    chain = snapshot_chain(brain, [start])
    children: dict[OciDigest, int] = {d: 0 for d in chain}
    for snapshot in chain.values():
        for parent in snapshot.parent_digests:
            if parent in children:
                children[parent] += 1
    ready = [d for d, n in children.items() if n == 0]
    ordered: list[OciDigest] = []
    while ready:
        ready.sort(key=lambda d: (chain[d].created_at, d.hex))
        digest = ready.pop()
        ordered.append(digest)
        for parent in chain[digest].parent_digests:
            if parent in children:
                children[parent] -= 1
                if children[parent] == 0:
                    ready.append(parent)
    columns: list[OciDigest] = []
    rows: list[tuple[OciDigest, Snapshot, str]] = []
    for digest in ordered:
        if digest not in columns:
            columns.append(digest)
        at = columns.index(digest)
        prefix = " ".join("*" if i == at else "|" for i in range(len(columns)))
        rows.append((digest, chain[digest], prefix))
        parents = [p for p in chain[digest].parent_digests if p in chain]
        rest = [p for p in parents[1:] if p not in columns]
        if parents and parents[0] not in columns:
            columns[at] = parents[0]
        else:
            columns.pop(at)
            at -= 1
        for offset, parent in enumerate(rest, 1):
            columns.insert(at + offset, parent)
    return rows
