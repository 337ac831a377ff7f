"""The search index's row writes: given what changed (`retrieval.index_diff`), the rows of blocks that joined are
written, those of blocks that left are deleted, blocks whose provenance changed are re-indexed, provenance
records are stored, and accessibility (§7.2) is recomputed for the blocks a change touched.

Blocks and records are named by small integer keys (`Keys`: the `keys` table) inside the file. Rows of added
blocks are batched (`Rows`, one `executemany` a table). The full-text tables are contentless: a document's text
is regenerated from the block's immutable bytes to delete its postings exactly; when those bytes are gone (a
redaction), its postings stay as orphans, counted in `meta.orphans`. Accessibility is computed with
`brain.ledger.Ledger` over the stored supersession and demotion records and stored per block, so a query never
reads the ledger. Everything here runs inside the caller's transaction.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import blake3
import orjson

from brain.blocks.base import Block
from brain.brain import Brain
from brain.concurrency import parallel_map
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.ledger import Ledger, record_of
from brain.snapshot import Snapshot
from brain.store.blobs import BlobStore
from retrieval import documents
from retrieval.documents import SEARCHABLE, Indexed
from retrieval.index_diff import Change, Module
from retrieval.index_file import FTS_TABLES, TABLES

# Record types the index keeps, as small integers.
RECORD_TYPES = {"registration": 1, "derivation": 2, "supersession": 3, "demotion": 4}
_ACCESS_TYPES = (3, 4)
_READ_KEY_CACHE = 100_000
_ADD_CHUNK = 512  # blocks added per round: their records read in one query, their rows written in one batch
_LOOKUPS_BEFORE_SCAN = 256  # winners whose losers are looked up one by one; more: the supersessions are scanned
# Blocks of a module an update adds before their documents are built by forked workers (below, starting the pool
# costs more than it saves), and how many go to a worker at a time. A source's documents are its whole text cut
# into passages (a change log can be megabytes); a derived block's are a few lines.
_PARALLEL = {"canonical": (32, 4, 8)}  # threshold, chunk, chunks ahead per worker
_PARALLEL_DERIVED = (2_000, _ADD_CHUNK, 2)
Facts = tuple[str | None, str | None, str | None, list[str]]  # origin, locator, at, evidence hexes
_NO_FACTS: Facts = (None, None, None, [])


@dataclass
class UpdateStats:
    """What one update did (for `--reindex` output and the benchmark)."""

    rebuilt: bool = False
    added: int = 0
    removed: int = 0
    refreshed: int = 0
    records: int = 0
    not_stored: int = 0
    text_bytes: int = 0  # UTF-8 bytes of the text indexed by this update (titles and bodies)
    reason: str | None = None


def _raw(hex_digest: str) -> bytes:
    return bytes.fromhex(hex_digest)


class Keys:
    """Block ids and edge kinds as the integer keys of one index file, cached.

    Keys assigned in the current update are dropped when it ends, committed or not (`end_update`); keys read
    by queries are valid for one generation of the file (a rebuild reassigns them: `forget`)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._assigned: dict[str, int] = {}
        self._kinds: dict[str, int] = {}
        self._read: dict[str, int] = {}

    def key(self, hex_id: str) -> int | None:
        """The integer key of a block id the index names, or None."""
        cached = self._assigned.get(hex_id) or self._read.get(hex_id)
        if cached is not None:
            return cached
        row = self.db.execute("SELECT id FROM keys WHERE digest=?", (_raw(hex_id),)).fetchone()
        if row is None:
            return None
        if len(self._read) > _READ_KEY_CACHE:
            self._read.clear()
        self._read[hex_id] = found = int(row[0])
        return found

    def digest(self, key: int) -> str:
        """The hex block id of a key."""
        (raw,) = self.db.execute("SELECT digest FROM keys WHERE id=?", (key,)).fetchone()
        return bytes(raw).hex()

    def assign(self, hex_id: str) -> int:
        """The key of a block id, created if new (inside an update's transaction)."""
        found = self.key(hex_id)
        if found is None:
            found = int(self.db.execute("INSERT INTO keys(digest) VALUES (?)", (_raw(hex_id),)).lastrowid or 0)
        self._assigned[hex_id] = found
        return found

    def kind(self, name: str) -> int:
        """The key of an edge kind, created if new (inside an update's transaction)."""
        found = self._kinds.get(name)
        if found is None:
            row = self.db.execute("SELECT id FROM kinds WHERE name=?", (name,)).fetchone()
            if row is None:
                row = (self.db.execute("INSERT INTO kinds(name) VALUES (?)", (name,)).lastrowid,)
            found = self._kinds[name] = int(row[0])
        return found

    def kind_names(self) -> dict[int, str]:
        """Edge kind names by id."""
        return {int(i): str(n) for i, n in self.db.execute("SELECT id, name FROM kinds")}

    def end_update(self) -> None:
        """Forget the keys and kinds the update assigned (a rolled-back update's are not in the file)."""
        self._assigned.clear()
        self._kinds.clear()

    def forget(self) -> None:
        """Forget every cached key (the file was replaced or its keys reassigned)."""
        self.end_update()
        self._read.clear()


Built = tuple[Indexed, dict[str, Any]]  # a block's index entry and its payload


def read_payload(blobs: BlobStore, hex_id: str) -> tuple[str, dict[str, Any]] | None:
    """(memory type, payload) of a stored block, re-hashed; None when its bytes are not stored."""
    try:
        data = blobs.get(BlockId(hex_id))
    except BrainError:
        return None
    try:
        envelope = orjson.loads(data)
        return str(envelope["memory_type"]), dict(envelope["payload"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def build(blobs: BlobStore, hex_id: str, memory_type: str, origin: str | None, evidence: list[str]) -> Built | None:
    """The index entry of a stored block and its payload; None when its bytes are not stored or not of this
    module. Reads blobs only (no index file): run in forked workers for a large update."""
    read = read_payload(blobs, hex_id)
    if read is None or read[0] != memory_type:
        return None
    payload = read[1]
    if memory_type != "canonical":
        return documents.derived(memory_type, payload, evidence), payload
    view, view_media = _view_text(blobs, payload)
    return documents.canonical(payload, origin, view, view_media), payload


def _view_text(blobs: BlobStore, payload: dict[str, Any]) -> tuple[str | None, str]:
    media_type = str(payload.get("media_type", ""))
    digest = documents.readable_text(payload)
    if digest is None:
        return None, media_type
    try:
        data = blobs.get(OciDigest.parse(digest))
    except BrainError:
        return None, media_type
    return data.decode("utf-8", errors="replace"), media_type


def read_records(root: Path, hex_ids: Sequence[str]) -> list[dict[str, Any] | None]:
    """Worker (`parallel_map`): the record of each provenance block the index keeps (None for the others, and for
    bytes not stored)."""
    blobs = BlobStore(root)
    out: list[dict[str, Any] | None] = []
    for hex_id in hex_ids:
        read = read_payload(blobs, hex_id)
        record = read[1].get("record") if read is not None else None
        keep = isinstance(record, dict) and record.get("record_type") in RECORD_TYPES
        out.append(record if keep else None)
    return out


# The payload members `RowWriter._add_block` reads (media type, `documents.readable_text`, `tags_of`).
_WRITER_READS = ("media_type", "normalized_view", "size", "blob", "tags")

ToBuild = tuple[str, str, Facts]  # hex id, memory type, what the records say of it


def build_ready(root: Path, items: Sequence[ToBuild]) -> list[Built | None]:
    """Worker (`parallel_map`): `build` each item, with the identifier expansions of its documents computed
    here too (the costliest part of a document, done once: `Document.extra` keeps it)."""
    blobs = BlobStore(root)
    out: list[Built | None] = []
    for hex_id, memory_type, (origin, _, _, evidence) in items:
        built = build(blobs, hex_id, memory_type, origin, evidence)
        if built is not None:
            entry, payload = built
            entry.expand()
            # Only the members the writer reads cross back (a derived block's payload is as large as its documents).
            built = entry, {k: payload[k] for k in _WRITER_READS if k in payload}
        out.append(built)
    return out


@dataclass
class Rows:
    """Rows of added blocks waiting to be written, one `executemany` a table (instead of a statement a row)."""

    blocks: list[tuple[Any, ...]] = field(default_factory=list)
    docs: list[tuple[Any, ...]] = field(default_factory=list)
    fts: list[tuple[Any, ...]] = field(default_factory=list)
    edges: list[tuple[Any, ...]] = field(default_factory=list)
    whole: list[tuple[Any, ...]] = field(default_factory=list)
    names: list[tuple[Any, ...]] = field(default_factory=list)
    tags: list[tuple[Any, ...]] = field(default_factory=list)
    pending: list[tuple[Any, ...]] = field(default_factory=list)
    stored: list[tuple[Any, ...]] = field(default_factory=list)  # keys to drop from `pending`

    def flush(self, db: sqlite3.Connection) -> None:
        """Write the rows (inside the caller's transaction) and forget them."""
        if self.blocks:
            db.executemany(
                "INSERT INTO blocks(id, memory_type, subject, at, accessible, source, origin, media_type, view, "
                "locator, fingerprint) VALUES (?,?,?,?,1,?,?,?,?,?,?)", self.blocks)
        if self.docs:
            db.executemany("INSERT INTO docs(rowid, block, locator) VALUES (?,?,?)", self.docs)
            db.executemany("INSERT INTO fts(rowid, title, body, extra) VALUES (?,?,?,?)", self.fts)
        if self.edges:
            db.executemany("INSERT OR IGNORE INTO edges VALUES (?,?,?)", self.edges)
        if self.whole:
            db.executemany("INSERT INTO whole(rowid, name, headings, body) VALUES (?,?,?,?)", self.whole)
        if self.names:
            db.executemany("INSERT OR IGNORE INTO names VALUES (?,?)", self.names)
        if self.tags:
            db.executemany("INSERT OR IGNORE INTO tags VALUES (?,?)", self.tags)
        if self.pending:
            db.executemany("INSERT OR REPLACE INTO pending VALUES (?,?)", self.pending)
        if self.stored:
            db.executemany("DELETE FROM pending WHERE block=?", self.stored)
        for rows in (self.blocks, self.docs, self.fts, self.edges, self.whole, self.names, self.tags, self.pending,
                     self.stored):
            rows.clear()


class RowWriter:
    """The row writes of one update of one index file (inside its transaction)."""

    def __init__(
        self, db: sqlite3.Connection, brain: Brain, keys: Keys, stats: UpdateStats, *, jobs: int = 1
    ) -> None:
        self.db = db
        self.jobs = jobs  # processes that build documents (1: this one only)
        self.brain = brain
        self.keys = keys
        self.stats = stats
        self._rows = Rows()
        # Full-text row ids are never reused: an orphaned posting must not come back under a new document.
        self._next_doc = int(self.meta("next_doc") or 1)

    def meta(self, key: str) -> str | None:
        """One value of the `meta` table."""
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def clear(self) -> None:
        """Delete every row (a rebuild), and start a new generation of keys."""
        self.keys.forget()
        for table in TABLES:
            if table == "meta":
                self.db.execute("DELETE FROM meta WHERE key != 'format'")
                # Keys are reassigned from here on: readers holding cached keys must drop them.
                self.db.execute("INSERT INTO meta VALUES ('generation', ?)", (secrets.token_hex(8),))
            elif table in FTS_TABLES:
                self.db.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
            else:
                self.db.execute(f"DELETE FROM {table}")

    def apply(self, changes: dict[str, Change]) -> None:
        """Write what changed: records, then each searchable module's blocks, then the blocks affected."""
        stats = self.stats
        affected_access, affected_facts = self._apply_records(changes["provenance"])
        added_now: set[str] = set()
        for memory_type in SEARCHABLE:
            change = changes[memory_type]
            # A supersession is in effect only while its winner is a member (§7.2, `Ledger.is_accessible`):
            # the losers of blocks that joined or left must be looked at again.
            affected_access.update(self._losers_of([*change.removed, *change.added]))
            for hex_id in change.removed:
                self._remove_block(hex_id)
                stats.removed += 1
            items: list[ToBuild] = []
            for start in range(0, len(change.added), _ADD_CHUNK):
                chunk = change.added[start : start + _ADD_CHUNK]
                known = self._facts_of(chunk)
                items.extend((hex_id, memory_type, known.get(hex_id, _NO_FACTS)) for hex_id in chunk)
            for number, ((hex_id, _, facts), built) in enumerate(zip(items, self._built(items), strict=True), 1):
                if self._add_block(hex_id, memory_type, facts, built=built):
                    added_now.add(hex_id)
                    stats.added += 1
                if number % _ADD_CHUNK == 0:
                    self._rows.flush(self.db)
            self._rows.flush(self.db)
        self._retry_pending(added_now)
        (stats.not_stored,) = self.db.execute("SELECT count(*) FROM pending").fetchone()
        for hex_id in sorted(affected_facts - added_now):
            if self._refresh_block(hex_id):
                stats.refreshed += 1
        self._set_accessibility(added_now, affected_access)

    def _built(self, items: list[ToBuild]) -> Iterator[Built | None]:
        """The entries of blocks to add, in order: built by forked workers (`jobs`) while this process writes
        the rows of those built before, for a change large enough to pay for the pool; else here, a chunk at a time."""
        if not items:
            return iter(())
        threshold, chunk, ahead = _PARALLEL.get(items[0][1], _PARALLEL_DERIVED)
        return parallel_map(build_ready, self.brain.path, items, self.jobs, threshold, chunk=chunk, ahead=ahead)

    def finish(self, head: str | None, snapshot: Snapshot | None, modules: dict[str, Module]) -> None:
        """Record the head, snapshot and modules the rows now describe (and the next document id)."""
        values = {
            "next_doc": str(self._next_doc),
            "head": head or "",
            "snapshot": None if snapshot is None else str(snapshot.digest),
            "modules": orjson.dumps(modules).decode(),
            "built": "1",
        }
        for name, value in values.items():
            if value is None:
                self.db.execute("DELETE FROM meta WHERE key=?", (name,))
            else:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", (name, value))
        if self.stats.rebuilt:
            for table in FTS_TABLES:  # one b-tree: smaller and faster
                self.db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")

    def orphan_share(self) -> float:
        """The share of full-text rows that are unreachable orphans."""
        orphans = int(self.meta("orphans") or 0)
        if not orphans:
            return 0.0
        (docs,) = self.db.execute("SELECT count(*) FROM docs").fetchone()
        return orphans / max(docs + orphans, 1)

    # --- provenance ------------------------------------------------------------------------------

    def _apply_records(self, change: Change) -> tuple[set[str], set[str]]:
        """Store the records that joined, forget those that left; return the blocks they name."""
        access: set[str] = set()
        facts: set[str] = set()
        if change.removed:
            gone = {_raw(h) for h in change.removed}
            for block, record, kind, other in self.db.execute(
                "SELECT block, record, type, other FROM records WHERE type IN (1,2,3,4)"
            ).fetchall():
                if bytes(record) in gone:
                    self.db.execute("DELETE FROM records WHERE block=? AND record=?", (block, record))
                    digest = self.keys.digest
                    _note(kind, digest(block), digest(other) if other else None, access, facts)
                    self.stats.records += 1
        rows = []
        records = parallel_map(read_records, self.brain.path, change.added, self.jobs, _PARALLEL_DERIVED[0],
                               chunk=_ADD_CHUNK)
        for hex_id, record in zip(change.added, records, strict=True):
            if record is None:
                continue
            row = self._record_row(hex_id, record)
            if row is None:
                continue
            rows.append(row)
            # The hexes the keys stand for, as `digest` would read them back (without a query per record).
            other = record.get("supersedes") if row[3] is not None else None
            _note(row[2], _raw(record["block"][7:]).hex(), _raw(str(other)[7:]).hex() if other else None, access,
                  facts)
        self.db.executemany("INSERT OR REPLACE INTO records VALUES (?,?,?,?,?,?,?,?)", rows)
        self.stats.records += len(rows)
        return access, facts

    def _record_row(self, hex_id: str, record: dict[str, Any]) -> tuple[Any, ...] | None:
        kind = RECORD_TYPES[record["record_type"]]
        block = record.get("block")
        if not isinstance(block, str) or not _is_id(block):
            return None
        other = record.get("supersedes") if record["record_type"] == "supersession" else None
        evidence = b""
        if record["record_type"] == "derivation":
            evidence = b"".join(_raw(e[7:]) for e in record.get("derived_from") or () if _is_id(e))
        return (
            self.keys.assign(block[7:]), _raw(hex_id), kind,
            self.keys.assign(str(other)[7:]) if _is_id(other) else None,
            _text_or_none(record.get("origin")), _text_or_none(record.get("locator")), _text_or_none(record.get("at")),
            evidence or None,
        )

    def _facts(self, hex_id: str) -> Facts:
        """(origin, locator, at, evidence hexes) the stored records say about a block."""
        return self._facts_of([hex_id]).get(hex_id, _NO_FACTS)

    def _facts_of(self, hex_ids: list[str]) -> dict[str, Facts]:
        """`_facts` of several blocks, in one query (blocks the records do not name are left out)."""
        keys = {k: h for h in hex_ids if (k := self.keys.key(h)) is not None}
        found: dict[str, Facts] = {}
        if not keys:
            return found
        rows: dict[int, list[tuple[Any, ...]]] = {}
        for row in self.db.execute(
            "SELECT block, type, origin, locator, at, evidence FROM records "
            f"WHERE block IN ({','.join('?' * len(keys))}) AND type IN (1,2) ORDER BY block, at, record",
            list(keys),
        ):
            rows.setdefault(row[0], []).append(row[1:])
        for key, block_rows in rows.items():
            found[keys[key]] = _fold_facts(block_rows)
        return found

    def _losers_of(self, winners: list[str]) -> set[str]:
        """The blocks superseded by any of `winners` (by the stored supersession records)."""
        found: set[str] = set()
        if len(winners) > _LOOKUPS_BEFORE_SCAN:
            # Many winners (a module's worth joining): one pass over the supersessions, usually few or none,
            # instead of a lookup per winner.
            by_winner: dict[int, list[int]] = {}
            for block, other in self.db.execute("SELECT block, other FROM records WHERE type=3 AND other IS NOT NULL"):
                by_winner.setdefault(block, []).append(other)
            if by_winner:
                for hex_id in winners:
                    key = self.keys.key(hex_id)
                    found.update(self.keys.digest(o) for o in (by_winner.get(key, ()) if key is not None else ()))
            return found
        for hex_id in winners:
            key = self.keys.key(hex_id)
            if key is None:
                continue
            for (other,) in self.db.execute("SELECT other FROM records WHERE block=? AND type=3", (key,)):
                if other is not None:
                    found.add(self.keys.digest(other))
        return found

    def _is_member(self, block_id: BlockId) -> bool:
        """Whether a block is a member of a searchable module at the indexed head (stored or not)."""
        key = self.keys.key(block_id.hex)
        if key is None:
            return False
        return bool(self.db.execute(
            "SELECT 1 FROM blocks WHERE id=? UNION ALL SELECT 1 FROM pending WHERE block=?", (key, key)
        ).fetchone())

    def _set_accessibility(self, added: set[str], affected: set[str]) -> None:
        """Store whether each block added or affected by this update is accessible (§7.2). An added block's row
        was written accessible, so only one that is not needs a write."""
        keys = [(h, k) for h in added | affected if (k := self.keys.key(h)) is not None]
        if not keys:
            return
        rows = self.db.execute("SELECT record FROM records WHERE type IN (3,4)").fetchall()
        records = []
        for (record_raw,) in rows:
            record_id = BlockId(bytes(record_raw).hex())
            try:
                record = record_of(Block.decode(self.brain.blobs.get(record_id), record_id))
            except BrainError:
                continue
            if record is not None:
                records.append((record_id, record))
        ledger = Ledger.from_records(records)
        ledger.is_member = self._is_member
        changed = []
        for hex_id, key in keys:
            accessible = ledger.is_accessible(BlockId(hex_id))
            if not accessible or hex_id in affected:
                changed.append((int(accessible), key))
        self.db.executemany("UPDATE blocks SET accessible=? WHERE id=?", changed)

    # --- blocks ----------------------------------------------------------------------------------

    def _add_block(
        self, hex_id: str, memory_type: str, facts: Facts | None = None, *, count: bool = True,
        built: Built | None | Literal[False] = False,
    ) -> bool:
        """Index a stored block (its rows queued in `self._rows`: the caller flushes them); False, and the block
        noted as pending, when its bytes are not stored. `count`: add its text to the update's `text_bytes`.
        `built`: its entry, built already by `build_ready` (False: build it here)."""
        origin, locator, at, evidence = self._facts(hex_id) if facts is None else facts
        if built is False:
            built = build(self.brain.blobs, hex_id, memory_type, origin, evidence)
        key = self.keys.assign(hex_id)
        rows = self._rows
        if built is None:
            rows.pending.append((key, memory_type))
            return False
        entry, payload = built
        view_blob = media = None
        source = key
        if memory_type == "canonical":
            media = str(payload.get("media_type", ""))
            digest = documents.readable_text(payload)
            view_blob = _raw(digest[7:]) if digest is not None else None
        else:
            targets = [e.target for e in entry.edges if e.kind == "evidence"]
            source = self.keys.assign(targets[0]) if targets else key
        rows.blocks.append(
            (key, memory_type, (entry.subject or "").casefold() or None, entry.at or at, source, origin, media,
             view_blob, locator, None if memory_type == "canonical" else _fingerprint(entry)),
        )
        number = self._next_doc
        self._next_doc += len(entry.documents)
        for document in entry.documents:
            rows.docs.append((number, key, document.locator))
            rows.fts.append((number, document.title, document.body, document.extra))
            number += 1
        if count:
            self.stats.text_bytes += sum(len(d.title.encode()) + len(d.body.encode()) for d in entry.documents)
            if entry.whole is not None:
                self.stats.text_bytes += len(entry.whole.body.encode()) + len(entry.whole.headings.encode())
        rows.edges.extend((key, self.keys.kind(e.kind), self.keys.assign(e.target)) for e in entry.edges)
        if entry.whole is not None:
            whole = entry.whole
            rows.whole.append((key, whole.name, whole.headings, whole.body))
        rows.names.extend((n, key) for n in entry.names)
        rows.tags.extend((t, key) for t in tags_of(payload))
        rows.stored.append((key,))
        return True

    def _remove_block(self, hex_id: str) -> None:
        key = self.keys.key(hex_id)
        if key is None:
            return
        self.db.execute("DELETE FROM pending WHERE block=?", (key,))
        row = self.db.execute("SELECT memory_type, origin FROM blocks WHERE id=?", (key,)).fetchone()
        if row is None:
            return
        memory_type, origin = row
        docs = self.db.execute("SELECT rowid FROM docs WHERE block=? ORDER BY rowid", (key,)).fetchall()
        # Regenerate the exact text to delete the postings; evidence does not shape documents.
        built = build(self.brain.blobs, hex_id, memory_type, origin, [])
        entry = None if built is None else built[0]
        if entry is not None and len(entry.documents) == len(docs):
            self.db.executemany(
                "INSERT INTO fts(fts, rowid, title, body, extra) VALUES ('delete',?,?,?,?)",
                [(rowid, d.title, d.body, d.extra) for (rowid,), d in zip(docs, entry.documents, strict=True)],
            )
        else:
            self._add_orphans(len(docs))
        if entry is not None and entry.whole is not None:
            whole = entry.whole
            self.db.execute("INSERT INTO whole(whole, rowid, name, headings, body) VALUES ('delete',?,?,?,?)",
                            (key, whole.name, whole.headings, whole.body))
        self.db.execute("DELETE FROM names WHERE block=?", (key,))
        self.db.execute("DELETE FROM tags WHERE block=?", (key,))
        self.db.execute("DELETE FROM docs WHERE block=?", (key,))
        self.db.execute("DELETE FROM edges WHERE src=?", (key,))
        self.db.execute("DELETE FROM blocks WHERE id=?", (key,))

    def _refresh_block(self, hex_id: str) -> bool:
        """Re-index a block whose records changed (a late registration or derivation)."""
        key = self.keys.key(hex_id)
        row = None if key is None else self.db.execute("SELECT memory_type FROM blocks WHERE id=?", (key,)).fetchone()
        if row is None:
            return False
        self._remove_block(hex_id)
        added = self._add_block(hex_id, str(row[0]), count=False)
        self._rows.flush(self.db)
        return added

    def _retry_pending(self, added_now: set[str]) -> None:
        """Blocks skipped earlier because their bytes were not stored (a selective pull), tried again."""
        for key, memory_type in self.db.execute("SELECT block, memory_type FROM pending").fetchall():
            hex_id = self.keys.digest(key)
            if hex_id in added_now or not self.brain.blobs.has(BlockId(hex_id)):
                continue
            if self._add_block(hex_id, memory_type):
                added_now.add(hex_id)
                self.stats.added += 1
        self._rows.flush(self.db)

    def _add_orphans(self, count: int) -> None:
        current = int(self.meta("orphans") or 0)
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('orphans', ?)", (str(current + count),))


def tags_of(payload: dict[str, Any]) -> list[str]:
    """A block's tags as the index keeps them: case-folded, stripped, distinct (only episodes carry `tags`, §3.2)."""
    tags = payload.get("tags")
    if not isinstance(tags, list):
        return []
    return list(dict.fromkeys(t for t in (tag_key(v) for v in tags if isinstance(v, str)) if t))


def tag_key(tag: str) -> str:
    """How a tag is matched: case-folded, surrounding white space ignored (`--tag Release` finds `release`)."""
    return tag.strip().casefold()


def _fingerprint(entry: Indexed) -> bytes:
    """What a derived block says (its documents' text), hashed: blocks drawn alike from identical copies of a
    text in several sources are shown as one result (a local fingerprint: BLAKE3)."""
    hasher = blake3.blake3()
    for document in entry.documents:
        hasher.update(document.title.encode() + b"\0" + document.body.encode() + b"\0")
    return hasher.digest()[:16]


def _fold_facts(rows: list[tuple[Any, ...]]) -> Facts:
    """(origin, locator, at, evidence hexes) from a block's registration and derivation rows, in (at, record)
    order: the first registration's origin and time, the last derivation's locator, evidence in first-seen
    order."""
    origin = locator = at = None
    evidence: list[str] = []
    for kind, r_origin, r_locator, r_at, r_evidence in rows:
        if kind == RECORD_TYPES["registration"]:
            origin = origin or r_origin
            at = at or r_at
        else:
            locator = r_locator if r_locator is not None else locator
            at = r_at if at is None else at
            raw = bytes(r_evidence or b"")
            evidence.extend(raw[i : i + 32].hex() for i in range(0, len(raw), 32))
    return origin, locator, at, list(dict.fromkeys(evidence))


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 71 and value.startswith("sha256:")


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _note(kind: int, block: str, other: str | None, access: set[str], facts: set[str]) -> None:
    if kind in _ACCESS_TYPES:
        access.add(block)
        if other:
            access.add(other)
    else:
        facts.add(block)
