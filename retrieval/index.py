"""The search index: one SQLite database (FTS5, BM25 built in) describing one snapshot of a brain.

Why SQLite: it ships with Python, FTS5 ranks with BM25, a transaction makes every update all-or-nothing
(the snapshot the index describes is recorded in the same transaction as the rows), WAL lets a server read
while a command updates, and the file is a plain sidecar that can be deleted at any time.

Kept current incrementally: the index records the composition (and tombstones) of every module at its
snapshot; moving to a new head diffs the member lists and touches only blocks that joined or left a
module, provenance records that joined or left (origins, evidence, locators, supersessions, demotions),
and the blocks those records name. Nothing else is decoded. A missing, torn, foreign or corrupt file is
rebuilt from scratch, which runs the same code from an empty state, so it gives the same rows.

The full-text table is contentless (no copy of the text is stored): a document's text is regenerated from
the block's immutable bytes to delete it exactly. When those bytes are gone (a redaction), the document's
row is dropped and its postings stay as unreachable orphans, counted; past a share of orphans the index is
rebuilt. Accessibility (§7.2) is computed here, at update time, with `brain.ledger.Ledger` over the stored
supersession and demotion records, and stored per block, so a query never reads the ledger.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import blake3
import orjson

from brain.blocks.base import Block
from brain.brain import Brain
from brain.errors import BrainError, BrainUnreadableError
from brain.identity import BlockId, OciDigest
from brain.ledger import Ledger, record_of
from brain.snapshot import Snapshot
from retrieval import documents
from retrieval.documents import SEARCHABLE, Indexed
from retrieval.paths import index_path, search_dir
from retrieval.tokenize import FTS_TOKENIZER

FORMAT = "brain-search/3"
ORPHAN_SHARE = 0.2  # rebuild when this share of the full-text rows are unreachable orphans
BUSY_TIMEOUT_MS = 30_000
MODULES = (*SEARCHABLE, "provenance")

_SCHEMA = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE keys(id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE);
CREATE TABLE blocks(
  id INTEGER PRIMARY KEY, memory_type TEXT NOT NULL, subject TEXT, at TEXT, accessible INTEGER NOT NULL,
  source INTEGER, origin TEXT, media_type TEXT, view BLOB, locator TEXT, fingerprint BLOB);
CREATE INDEX blocks_origin ON blocks(origin) WHERE origin IS NOT NULL;
CREATE TABLE docs(rowid INTEGER PRIMARY KEY, block INTEGER NOT NULL, locator TEXT);
CREATE INDEX docs_block ON docs(block);
CREATE VIRTUAL TABLE fts USING fts5(title, body, extra, content='', tokenize="{FTS_TOKENIZER}");
CREATE VIRTUAL TABLE whole USING fts5(name, headings, body, content='', tokenize="{FTS_TOKENIZER}");
CREATE TABLE names(name TEXT NOT NULL, block INTEGER NOT NULL, PRIMARY KEY(name, block)) WITHOUT ROWID;
CREATE TABLE kinds(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE edges(src INTEGER NOT NULL, kind INTEGER NOT NULL, dst INTEGER NOT NULL, PRIMARY KEY(src, kind, dst))
  WITHOUT ROWID;
CREATE INDEX edges_dst ON edges(dst);
CREATE TABLE records(
  block INTEGER NOT NULL, record BLOB NOT NULL, type INTEGER NOT NULL, other INTEGER, origin TEXT, locator TEXT,
  at TEXT, evidence BLOB, PRIMARY KEY(block, record)) WITHOUT ROWID;
CREATE TABLE pending(block INTEGER PRIMARY KEY, memory_type TEXT NOT NULL);
"""
_TABLES = ("meta", "keys", "blocks", "docs", "fts", "whole", "names", "kinds", "edges", "records", "pending")
_FTS_TABLES = ("fts", "whole")
# Record types the index keeps, as small integers.
RECORD_TYPES = {"registration": 1, "derivation": 2, "supersession": 3, "demotion": 4}
_ACCESS_TYPES = (3, 4)
_READ_KEY_CACHE = 100_000
_ADD_CHUNK = 512  # blocks added per round: their records read in one query, their rows written in one batch
_Facts = tuple[str | None, str | None, str | None, list[str]]
_NO_FACTS: _Facts = (None, None, None, [])


class IndexUnusableError(BrainError):
    """The index file cannot be used as it is (corrupt, foreign or from another format); it is rebuilt."""


class _OldSideUnreadableError(Exception):
    """A composition of the snapshot the index describes cannot be read (the index is rebuilt)."""


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


@dataclass
class _Change:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass
class _Rows:
    """Rows of added blocks waiting to be written, one `executemany` a table (instead of a statement a row)."""

    blocks: list[tuple[Any, ...]] = field(default_factory=list)
    docs: list[tuple[Any, ...]] = field(default_factory=list)
    fts: list[tuple[Any, ...]] = field(default_factory=list)
    edges: list[tuple[Any, ...]] = field(default_factory=list)
    whole: list[tuple[Any, ...]] = field(default_factory=list)
    names: list[tuple[Any, ...]] = field(default_factory=list)
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
        if self.pending:
            db.executemany("INSERT OR REPLACE INTO pending VALUES (?,?)", self.pending)
        if self.stored:
            db.executemany("DELETE FROM pending WHERE block=?", self.stored)
        for rows in (self.blocks, self.docs, self.fts, self.edges, self.whole, self.names, self.pending, self.stored):
            rows.clear()


def _raw(hex_digest: str) -> bytes:
    return bytes.fromhex(hex_digest)


def _head_key(brain: Brain) -> str | None:
    """What the index is keyed on: the head pointer's bytes (snapshot and partial-pull origin)."""
    head = brain.head()
    return None if head is None else head.to_bytes().decode()


class SearchIndex:
    """An open index of one brain. Not thread-safe: one per thread (the HTTP server keeps one per worker)."""

    def __init__(self, brain: Brain, connection: sqlite3.Connection, path: Path | None) -> None:
        self.brain = brain
        self.db = connection
        self.path = path
        # Keys and edge kinds assigned in the current update (dropped when it ends, committed or not).
        self._keys: dict[str, int] = {}
        self._kinds: dict[str, int] = {}
        # Keys read by queries: valid for one generation of the file (a rebuild reassigns them).
        self._read_keys: dict[str, int] = {}
        self._generation: str | None = None
        self._next_doc = 1
        self._rows = _Rows()
        self._file = None if path is None else _identity(path)

    # --- opening -------------------------------------------------------------------------------

    @classmethod
    def open(cls, brain: Brain, *, in_memory: bool = False) -> SearchIndex:
        """Open (creating if needed) the index file; in memory when asked or when the brain is read-only.

        A file that is not a usable index of this format (corrupt, torn, foreign) is deleted and recreated.
        """
        if not in_memory:
            path = index_path(brain.path)
            try:
                directory = search_dir(brain.path)
                if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
                    directory.unlink()  # our sidecar's name, taken by something else: it is not ours to keep
                directory.mkdir(parents=True, exist_ok=True)
                try:
                    return cls._open_file(brain, path)
                except IndexUnusableError:
                    _remove_index_files(path)
                    return cls._open_file(brain, path)
            except (OSError, sqlite3.OperationalError) as e:
                if not _is_readonly(e):
                    raise BrainUnreadableError(f"the search index {path} cannot be opened: {e}",
                                               hint=f"delete {search_dir(brain.path)}; it is rebuilt") from None
        connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        index = cls(brain, connection, None)
        index._check()
        return index

    @classmethod
    def _open_file(cls, brain: Brain, path: Path) -> SearchIndex:
        connection = None
        try:
            connection = _connect(str(path))
            index = cls(brain, connection, path)
            index._check()
            return index
        except IndexUnusableError:
            if connection is not None:
                connection.close()
            raise
        except sqlite3.DatabaseError as e:
            if connection is not None:
                connection.close()
            if isinstance(e, sqlite3.OperationalError) and _is_readonly(e):
                raise
            raise IndexUnusableError(f"the index file is not a usable database: {e}") from None

    def close(self) -> None:
        """Close the database connection."""
        self.db.close()

    def _check(self) -> None:
        """Create the schema in a new file; refuse a foreign or corrupt one (`IndexUnusableError`)."""
        try:
            tables = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not tables:
                self._create()
                return
            if not set(_TABLES) <= tables:
                raise IndexUnusableError("the index file lacks tables")
            row = self.db.execute("SELECT value FROM meta WHERE key='format'").fetchone()
            if row is None or row[0] != FORMAT:
                raise IndexUnusableError(f"the index file is of format {row and row[0]!r}, not {FORMAT!r}")
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError) and _is_readonly(e):
                raise
            raise IndexUnusableError(f"the index file is not a usable database: {e}") from None

    def _create(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if not self.db.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
                for statement in _SCHEMA.strip().split(";\n"):
                    self.db.execute(statement)
                self.db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    # --- state ---------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        """One value of the `meta` table."""
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def snapshot_digest(self) -> OciDigest | None:
        """The snapshot this index describes (None before the first build)."""
        value = self.meta("snapshot")
        return None if value is None else OciDigest.parse(value)

    def is_current(self) -> bool:
        """Whether the index describes the brain's head as it is now."""
        return self.meta("head") == _head_key(self.brain)

    # --- updating ------------------------------------------------------------------------------

    def ensure_current(self, *, rebuild: bool = False) -> UpdateStats:
        """Bring the index to the brain's head: incrementally, or from scratch when asked or when needed."""
        if self.path is not None and _identity(self.path) != self._file:
            # The file was deleted or replaced under this connection (a redaction deletes the index;
            # another process rebuilt a corrupt one): continue on the file that is there now.
            with contextlib.suppress(sqlite3.Error):
                self.db.close()
            fresh = self.open(self.brain)
            self.db, self.path, self._file = fresh.db, fresh.path, fresh._file
            self._read_keys.clear()
        try:
            if not rebuild and self.is_current():
                return UpdateStats()
            return self._update(rebuild=rebuild)
        except sqlite3.DatabaseError as e:
            if self.path is None or (isinstance(e, sqlite3.OperationalError) and "locked" in str(e)):
                raise
            if isinstance(e, sqlite3.OperationalError) and _is_readonly(e):
                # A read-only copy of a brain (and of its index): answer from memory, touch no file.
                self._reconnect(None)
                stats = self._update(rebuild=True)
                stats.reason = "the index file is read-only: built in memory"
                return stats
            return self.start_over(f"the index was unreadable ({e}) and was rebuilt")

    def start_over(self, reason: str) -> UpdateStats:
        """Delete the (damaged) file and rebuild it from the brain; used by `retrieval.recovery` too."""
        assert self.path is not None, "an in-memory index is never damaged on disk"
        self._reconnect(self.path)
        stats = self._update(rebuild=True)
        stats.reason = reason
        return stats

    def _reconnect(self, path: Path | None) -> None:
        """Replace the connection: a fresh file at `path` (the damaged one deleted), or memory."""
        with contextlib.suppress(sqlite3.Error):
            self.db.close()
        if path is None:
            self.db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        else:
            _remove_index_files(path)
            self.db = _connect(str(path))
        self.path = path
        self._file = None if path is None else _identity(path)
        self._read_keys.clear()
        self._check()

    def _update(self, *, rebuild: bool) -> UpdateStats:
        self.db.execute("BEGIN IMMEDIATE")
        self._keys.clear()
        self._kinds.clear()
        try:
            key = _head_key(self.brain)
            if not rebuild and self.meta("head") == key:  # another process got there first
                self.db.execute("COMMIT")
                return UpdateStats()
            stats = self._apply(key, rebuild)
            self.db.execute("COMMIT")
            if stats.rebuilt:
                # Return the pages the rebuild freed (its own transaction; sqlite3_exec steps it to the end).
                self.db.executescript("PRAGMA incremental_vacuum;")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            self._read_keys.clear()  # may name keys of the rolled-back transaction
            raise
        finally:
            self._keys.clear()
            self._kinds.clear()
            self._rows = _Rows()  # rows of a failed update are never written by the next one
        return stats

    def _apply(self, key: str | None, rebuild: bool) -> UpdateStats:
        snapshot = self.brain.snapshot()
        stats = UpdateStats()
        # Full-text row ids are never reused: an orphaned posting must not come back under a new document.
        self._next_doc = int(self.meta("next_doc") or 1)
        old_modules = None if rebuild else self._old_modules()
        if old_modules is None:
            stats.rebuilt = True
            fresh = self.meta("built") is None
            stats.reason = "asked" if rebuild else "new index" if fresh else "the indexed snapshot cannot be read"
            self._clear()
            old_modules = {}
        new_modules = _modules_of(snapshot)
        try:
            changes = {t: self._diff(t, old_modules.get(t), new_modules.get(t)) for t in MODULES}
        except _OldSideUnreadableError:
            # The indexed snapshot's compositions are damaged or gone: what the index holds cannot be
            # diffed, so start from nothing (the head's side raised, not this, if the brain is broken).
            return self._apply(key, rebuild=True)
        affected_access, affected_facts = self._apply_records(changes["provenance"], stats)
        added_now: set[str] = set()
        for memory_type in SEARCHABLE:
            change = changes[memory_type]
            # A supersession is in effect only while its winner is a member (§7.2, `Ledger.is_accessible`):
            # the losers of blocks that joined or left must be looked at again.
            affected_access.update(self._losers_of([*change.removed, *change.added]))
            for hex_id in change.removed:
                self._remove_block(hex_id)
                stats.removed += 1
            for start in range(0, len(change.added), _ADD_CHUNK):
                chunk = change.added[start : start + _ADD_CHUNK]
                known = self._facts_of(chunk)
                for hex_id in chunk:
                    if self._add_block(hex_id, memory_type, stats, known.get(hex_id, _NO_FACTS)):
                        added_now.add(hex_id)
                        stats.added += 1
                self._rows.flush(self.db)
        self._retry_pending(added_now, stats)
        (stats.not_stored,) = self.db.execute("SELECT count(*) FROM pending").fetchone()
        for hex_id in sorted(affected_facts - added_now):
            if self._refresh_block(hex_id):
                stats.refreshed += 1
        self._set_accessibility(added_now, affected_access)
        self._set_meta(key, snapshot, new_modules)
        if stats.rebuilt:
            for table in _FTS_TABLES:  # one b-tree: smaller and faster
                self.db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        if self._orphan_share() > ORPHAN_SHARE and not stats.rebuilt:
            return self._apply(key, rebuild=True)
        return stats

    def _old_modules(self) -> dict[str, tuple[str, list[str]]] | None:
        """The indexed snapshot's modules (composition hex, tombstone hexes), or None if it cannot be diffed."""
        if self.meta("snapshot") is None:
            return None if self.meta("built") is None else {}
        value = self.meta("modules")
        if value is None:
            return None
        decoded = orjson.loads(value)
        modules = {t: (str(c), [str(x) for x in tomb]) for t, (c, tomb) in decoded.items()}
        for composition, _ in modules.values():
            if not self.brain.blobs.has(OciDigest(composition)):
                return None
        return modules

    def _clear(self) -> None:
        self._keys.clear()
        self._kinds.clear()
        self._read_keys.clear()
        for table in _TABLES:
            if table == "meta":
                self.db.execute("DELETE FROM meta WHERE key != 'format'")
                # Keys are reassigned from here on: readers holding cached keys must drop them.
                self.db.execute("INSERT INTO meta VALUES ('generation', ?)", (secrets.token_hex(8),))
            elif table in _FTS_TABLES:
                self.db.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
            else:
                self.db.execute(f"DELETE FROM {table}")

    def _diff(
        self, memory_type: str, old: tuple[str, list[str]] | None, new: tuple[str, list[str]] | None
    ) -> _Change:
        if old == new:
            return _Change()
        try:
            before = self._readable_members(old)
        except (BrainError, orjson.JSONDecodeError, KeyError, TypeError) as e:
            raise _OldSideUnreadableError(str(e)) from None
        after = self._readable_members(new)
        return _Change(added=sorted(i[7:] for i in after - before), removed=sorted(i[7:] for i in before - after))

    def _readable_members(self, module: tuple[str, list[str]] | None) -> set[str]:
        """The member ids (`sha256:` strings, as stored) whose bytes were not destroyed."""
        if module is None:
            return set()
        composition, tombstones = module
        members = set(orjson.loads(self.brain.blobs.get(OciDigest(composition)))["block_ids"])
        members.difference_update(f"sha256:{t}" for t in tombstones)
        return members

    def _read_payload(self, hex_id: str) -> tuple[str, dict[str, Any]] | None:
        """(memory type, payload) of a stored block, re-hashed; None when its bytes are not stored."""
        try:
            data = self.brain.blobs.get(BlockId(hex_id))
        except BrainError:
            return None
        try:
            envelope = orjson.loads(data)
            return str(envelope["memory_type"]), dict(envelope["payload"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None

    # --- keys ------------------------------------------------------------------------------------

    def key(self, hex_id: str) -> int | None:
        """The integer key of a block id the index names, or None."""
        cached = self._keys.get(hex_id) or self._read_keys.get(hex_id)
        if cached is not None:
            return cached
        row = self.db.execute("SELECT id FROM keys WHERE digest=?", (_raw(hex_id),)).fetchone()
        if row is None:
            return None
        if len(self._read_keys) > _READ_KEY_CACHE:
            self._read_keys.clear()
        self._read_keys[hex_id] = found = int(row[0])
        return found

    def digest(self, key: int) -> str:
        """The hex block id of a key."""
        (raw,) = self.db.execute("SELECT digest FROM keys WHERE id=?", (key,)).fetchone()
        return bytes(raw).hex()

    def _key(self, hex_id: str) -> int:
        """The key of a block id, created if new (inside an update's transaction)."""
        found = self.key(hex_id)
        if found is None:
            found = int(self.db.execute("INSERT INTO keys(digest) VALUES (?)", (_raw(hex_id),)).lastrowid or 0)
        self._keys[hex_id] = found
        return found

    def _kind(self, name: str) -> int:
        found = self._kinds.get(name)
        if found is None:
            row = self.db.execute("SELECT id FROM kinds WHERE name=?", (name,)).fetchone()
            if row is None:
                row = (self.db.execute("INSERT INTO kinds(name) VALUES (?)", (name,)).lastrowid,)
            found = self._kinds[name] = int(row[0])
        return found

    def kind_names(self) -> dict[int, str]:
        """Edge kind names by id (kinds are only ever added; cached until one is missing)."""
        return {int(i): str(n) for i, n in self.db.execute("SELECT id, name FROM kinds")}

    # --- provenance ------------------------------------------------------------------------------

    def _apply_records(self, change: _Change, stats: UpdateStats) -> tuple[set[str], set[str]]:
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
                    _note(kind, self.digest(block), self.digest(other) if other else None, access, facts)
                    stats.records += 1
        rows = []
        for hex_id in change.added:
            read = self._read_payload(hex_id)
            record = read[1].get("record") if read is not None else None
            if not isinstance(record, dict) or record.get("record_type") not in RECORD_TYPES:
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
        stats.records += len(rows)
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
            self._key(block[7:]), _raw(hex_id), kind, self._key(str(other)[7:]) if _is_id(other) else None,
            _text_or_none(record.get("origin")), _text_or_none(record.get("locator")), _text_or_none(record.get("at")),
            evidence or None,
        )

    def _facts(self, hex_id: str) -> _Facts:
        """(origin, locator, at, evidence hexes) the stored records say about a block."""
        return self._facts_of([hex_id]).get(hex_id, _NO_FACTS)

    def _facts_of(self, hex_ids: list[str]) -> dict[str, _Facts]:
        """`_facts` of several blocks, in one query (blocks the records do not name are left out)."""
        keys = {k: h for h in hex_ids if (k := self.key(h)) is not None}
        found: dict[str, _Facts] = {}
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

    def _losers_of(self, winners: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for hex_id in winners:
            key = self.key(hex_id)
            if key is None:
                continue
            for (other,) in self.db.execute("SELECT other FROM records WHERE block=? AND type=3", (key,)):
                if other is not None:
                    found.add(self.digest(other))
        return found

    def _is_member(self, block_id: BlockId) -> bool:
        """Whether a block is a member of a searchable module at the indexed head (stored or not)."""
        key = self.key(block_id.hex)
        if key is None:
            return False
        return bool(self.db.execute(
            "SELECT 1 FROM blocks WHERE id=? UNION ALL SELECT 1 FROM pending WHERE block=?", (key, key)
        ).fetchone())

    def _set_accessibility(self, added: set[str], affected: set[str]) -> None:
        """Store whether each block added or affected by this update is accessible (§7.2). An added block's row
        was written accessible, so only one that is not needs a write."""
        keys = [(h, k) for h in added | affected if (k := self.key(h)) is not None]
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

    def _build(
        self, hex_id: str, memory_type: str, origin: str | None, evidence: list[str]
    ) -> tuple[Indexed, dict[str, Any]] | None:
        """The index entry of a stored block and its payload; None when its bytes are not stored or not of
        this module."""
        read = self._read_payload(hex_id)
        if read is None or read[0] != memory_type:
            return None
        payload = read[1]
        if memory_type != "canonical":
            return documents.derived(memory_type, payload, evidence), payload
        view, view_media = self._view_text(payload)
        return documents.canonical(payload, origin, view, view_media), payload

    def _view_text(self, payload: dict[str, Any]) -> tuple[str | None, str]:
        media_type = str(payload.get("media_type", ""))
        digest = documents.readable_text(payload)
        if digest is None:
            return None, media_type
        try:
            data = self.brain.blobs.get(OciDigest.parse(digest))
        except BrainError:
            return None, media_type
        return data.decode("utf-8", errors="replace"), media_type

    def _add_block(
        self, hex_id: str, memory_type: str, stats: UpdateStats | None = None, facts: _Facts | None = None
    ) -> bool:
        """Index a stored block (its rows queued in `self._rows`: the caller flushes them); False, and the block
        noted as pending, when its bytes are not stored."""
        origin, locator, at, evidence = self._facts(hex_id) if facts is None else facts
        built = self._build(hex_id, memory_type, origin, evidence)
        key = self._key(hex_id)
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
            source = self._key(targets[0]) if targets else key
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
        if stats is not None:
            stats.text_bytes += sum(len(d.title.encode()) + len(d.body.encode()) for d in entry.documents)
            if entry.whole is not None:
                stats.text_bytes += len(entry.whole.body.encode()) + len(entry.whole.headings.encode())
        rows.edges.extend((key, self._kind(e.kind), self._key(e.target)) for e in entry.edges)
        if entry.whole is not None:
            whole = entry.whole
            rows.whole.append((key, whole.name, whole.headings, whole.body))
        rows.names.extend((n, key) for n in entry.names)
        rows.stored.append((key,))
        return True

    def _remove_block(self, hex_id: str) -> None:
        key = self.key(hex_id)
        if key is None:
            return
        self.db.execute("DELETE FROM pending WHERE block=?", (key,))
        row = self.db.execute("SELECT memory_type, origin FROM blocks WHERE id=?", (key,)).fetchone()
        if row is None:
            return
        memory_type, origin = row
        docs = self.db.execute("SELECT rowid FROM docs WHERE block=? ORDER BY rowid", (key,)).fetchall()
        # Regenerate the exact text to delete the postings; evidence does not shape documents.
        built = self._build(hex_id, memory_type, origin, [])
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
        self.db.execute("DELETE FROM docs WHERE block=?", (key,))
        self.db.execute("DELETE FROM edges WHERE src=?", (key,))
        self.db.execute("DELETE FROM blocks WHERE id=?", (key,))

    def _refresh_block(self, hex_id: str) -> bool:
        """Re-index a block whose records changed (a late registration or derivation)."""
        key = self.key(hex_id)
        row = None if key is None else self.db.execute("SELECT memory_type FROM blocks WHERE id=?", (key,)).fetchone()
        if row is None:
            return False
        self._remove_block(hex_id)
        added = self._add_block(hex_id, str(row[0]))
        self._rows.flush(self.db)
        return added

    def _retry_pending(self, added_now: set[str], stats: UpdateStats) -> None:
        """Blocks skipped earlier because their bytes were not stored (a selective pull), tried again."""
        for key, memory_type in self.db.execute("SELECT block, memory_type FROM pending").fetchall():
            hex_id = self.digest(key)
            if hex_id in added_now or not self.brain.blobs.has(BlockId(hex_id)):
                continue
            if self._add_block(hex_id, memory_type, stats):
                added_now.add(hex_id)
                stats.added += 1
        self._rows.flush(self.db)

    def _add_orphans(self, count: int) -> None:
        current = int(self.meta("orphans") or 0)
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('orphans', ?)", (str(current + count),))

    def _orphan_share(self) -> float:
        orphans = int(self.meta("orphans") or 0)
        if not orphans:
            return 0.0
        (docs,) = self.db.execute("SELECT count(*) FROM docs").fetchone()
        return orphans / max(docs + orphans, 1)

    def _set_meta(self, key: str | None, snapshot: Snapshot | None, modules: dict[str, tuple[str, list[str]]]) -> None:
        values = {
            "next_doc": str(self._next_doc),
            "head": key or "",
            "snapshot": None if snapshot is None else str(snapshot.digest),
            "modules": orjson.dumps(modules).decode(),
            "built": "1",
        }
        for name, value in values.items():
            if value is None:
                self.db.execute("DELETE FROM meta WHERE key=?", (name,))
            else:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", (name, value))

    # --- reading (used by `retrieval.query`) -----------------------------------------------------

    @contextlib.contextmanager
    def read_transaction(self) -> Iterator[None]:
        """A read transaction: every query inside sees one committed state of the index."""
        self.db.execute("BEGIN")
        try:
            generation = self.meta("generation")
            if generation != self._generation:
                self._read_keys.clear()
                self._generation = generation
            yield
        finally:
            self.db.execute("COMMIT")


def _fingerprint(entry: Indexed) -> bytes:
    """What a derived block says (its documents' text), hashed: blocks drawn alike from identical copies of a
    text in several sources are shown as one result (a local fingerprint: BLAKE3)."""
    hasher = blake3.blake3()
    for document in entry.documents:
        hasher.update(document.title.encode() + b"\0" + document.body.encode() + b"\0")
    return hasher.digest()[:16]


def follow_head(root: Path) -> None:
    """Bring a brain's search index (file) to its head, incrementally: registered with
    `brain.store.head.on_head_moved`, so `ingest`, `pull` and every lifecycle command leave an index the first
    query needs not wait for. A brain whose index cannot be written (read-only), or an index busy or damaged,
    is left to the next search, which updates or rebuilds it; the command that moved the head never fails
    for it."""
    try:
        brain = Brain.open(root)
        index = SearchIndex.open(brain)
    except (BrainError, OSError, sqlite3.Error):
        return
    try:
        if index.path is not None:
            index.ensure_current()
    except (BrainError, OSError, sqlite3.Error):
        pass  # a cache: the next search brings it current (or rebuilds it)
    finally:
        index.close()


def _fold_facts(rows: list[tuple[Any, ...]]) -> _Facts:
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


def _modules_of(snapshot: Snapshot | None) -> dict[str, tuple[str, list[str]]]:
    if snapshot is None:
        return {}
    return {
        name: (ref.composition.hex, sorted(t.hex for t in ref.tombstones or ()))
        for name, ref in snapshot.modules.items()
        if name in MODULES
    }


def _connect(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # Takes effect only in a new file, before its first table: lets a rebuild return the pages it freed.
    connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    return connection


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the index file, or None when it does not exist."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _is_readonly(error: Exception) -> bool:
    text = str(error).lower()
    return isinstance(error, PermissionError) or "readonly" in text or "read-only" in text or "unable to open" in text


def _remove_index_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
