"""The search index: one SQLite database (FTS5, BM25 built in) describing one snapshot of a brain.

Why SQLite: it ships with Python, FTS5 ranks with BM25, a transaction makes every update all-or-nothing
(the snapshot the index describes is recorded in the same transaction as the rows), WAL lets a server read
while a command updates, and the file is a plain sidecar that can be deleted at any time.

Kept current incrementally: the index records the composition (and tombstones) of every module at its
snapshot; moving to a new head diffs the member lists and touches only blocks that joined or left a
module, provenance records that joined or left (origins, evidence, locators, supersessions, demotions),
and the blocks those records name. Nothing else is decoded. A missing, torn, foreign or corrupt file is
rebuilt from scratch, which runs the same code from an empty state, so it gives the same rows.

Three rooms, one job each, and this module that puts them together (`SearchIndex`, `follow_head`):
- `retrieval.index_file`: the file — schema, format, connections, and recovery from a file that is not a
  usable index (deleted and recreated);
- `retrieval.index_diff`: what changed between the indexed snapshot and the head (members joined and left);
- `retrieval.index_rows`: the row writes for such a change (blocks, documents, records, accessibility), and
  the integer keys that name blocks inside the file.

The full-text table is contentless (no copy of the text is stored): a document's text is regenerated from
the block's immutable bytes to delete it exactly. When those bytes are gone (a redaction), the document's
row is dropped and its postings stay as unreachable orphans, counted; past a share of orphans the index is
rebuilt. Accessibility (§7.2) is computed at update time and stored per block, so a query never reads the
ledger.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from brain.brain import Brain
from brain.concurrency import default_jobs
from brain.errors import BrainError
from brain.identity import OciDigest
from brain.identity.jcs import canonicalize
from retrieval import index_file
from retrieval.index_diff import MODULES, OldSideUnreadableError, changes, indexed_modules, modules_of
from retrieval.index_file import FORMAT, IndexUnusableError, identity
from retrieval.index_rows import RECORD_TYPES, Keys, RowWriter, UpdateStats

ORPHAN_SHARE = 0.2  # rebuild when this share of the full-text rows are unreachable orphans


def _head_key(brain: Brain) -> str | None:
    """What the index is keyed on: the head's snapshot and partial-pull origin, as canonical JSON.

    Not the rest of the head pointer: `retained` changes whenever a branch other than the current one moves (every
    proposal an agent commits onto `proposals/<agent>` rewrites it), and the rows describe the snapshot only. Keyed
    on the whole pointer, each such commit sent every serving thread's next search into a write transaction to
    record an unchanged snapshot, and the index's generation moved under warm readers (reads p95 110-150 ms with
    twenty proposing agents, against a p50 of 7 ms)."""
    head = brain.head()
    if head is None:
        return None
    return canonicalize(head.model_dump(mode="json", include={"snapshot", "origin"}, exclude_none=True)).decode()


class SearchIndex:
    """An open index of one brain. Not thread-safe: one per thread (the HTTP server keeps one per worker)."""

    def __init__(self, brain: Brain, connection: sqlite3.Connection, path: Path | None) -> None:
        self.brain = brain
        self.path = path
        self.keys = Keys(connection)
        self.db = connection
        self._generation: str | None = None
        self._file = None if path is None else identity(path)

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (replaced when the file is recreated)."""
        return self.keys.db

    @db.setter
    def db(self, connection: sqlite3.Connection) -> None:
        self.keys.db = connection

    # --- opening -------------------------------------------------------------------------------

    @classmethod
    def open(cls, brain: Brain, *, in_memory: bool = False) -> SearchIndex:
        """Open (creating if needed) the index file; in memory when asked or when the brain is read-only.

        A file that is not a usable index of this format (corrupt, torn, foreign) is deleted and recreated.
        """
        connection, path = index_file.open_index(brain.path, in_memory=in_memory)
        return cls(brain, connection, path)

    def close(self) -> None:
        """Close the database connection."""
        self.db.close()

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

    def ensure_current(self, *, rebuild: bool = False, jobs: int = 1) -> UpdateStats:
        """Bring the index to the brain's head: incrementally, or from scratch when asked or when needed.
        `jobs`: processes that may build the documents of a large change (forked only where that is safe)."""
        if self.replaced():
            # The file was deleted or replaced under this connection (a redaction deletes the index;
            # another process rebuilt a corrupt one): continue on the file that is there now.
            self._adopt()
        try:
            if not rebuild and self.is_current():
                return UpdateStats()
            return self._update(rebuild=rebuild, jobs=jobs)
        except sqlite3.DatabaseError as e:
            if self.path is None or (isinstance(e, sqlite3.OperationalError) and "locked" in str(e)):
                raise
            if isinstance(e, sqlite3.OperationalError) and index_file.is_readonly(e):
                # A read-only copy of a brain (and of its index): answer from memory, touch no file.
                self._reconnect(None)
                stats = self._update(rebuild=True, jobs=jobs)
                stats.reason = "the index file is read-only: built in memory"
                return stats
            return self.start_over(f"the index was unreadable ({e}) and was rebuilt", jobs=jobs)

    def start_over(self, reason: str, *, jobs: int = 1) -> UpdateStats:
        """Delete the (damaged) file and rebuild it from the brain; used by `retrieval.recovery` too.

        One rebuild at a time (`index_file.rebuilding`): a connection that waited while another rebuilt the
        file takes the new file (brought to the head) instead of deleting it in turn."""
        assert self.path is not None, "an in-memory index is never damaged on disk"
        with index_file.rebuilding(self.path):
            if self.replaced() and identity(self.path) is not None:
                with contextlib.suppress(sqlite3.DatabaseError, IndexUnusableError):
                    self._adopt()
                    stats = UpdateStats() if self.is_current() else self._update(rebuild=False, jobs=jobs)
                    stats.reason = "another connection had rebuilt it"
                    return stats
            self._reconnect(self.path)
            stats = self._update(rebuild=True, jobs=jobs)
        stats.reason = reason
        return stats

    def replaced(self) -> bool:
        """Whether the file this connection opened is no longer the one at the index's path."""
        return self.path is not None and identity(self.path) != self._file

    def _adopt(self) -> None:
        """Close this connection and open the index file that is at the path now."""
        with contextlib.suppress(sqlite3.Error):
            self.db.close()
        fresh = self.open(self.brain)
        self.db, self.path, self._file = fresh.db, fresh.path, fresh._file
        self.keys.forget()

    def _reconnect(self, path: Path | None) -> None:
        """Replace the connection: a fresh file at `path` (the damaged one deleted), or memory."""
        with contextlib.suppress(sqlite3.Error):
            self.db.close()
        self.keys.forget()
        self.db = index_file.recreate(path)
        self.path = path
        self._file = None if path is None else identity(path)

    def _update(self, *, rebuild: bool, jobs: int = 1) -> UpdateStats:
        self.db.execute("BEGIN IMMEDIATE")
        self.keys.end_update()
        try:
            key = _head_key(self.brain)
            if not rebuild and self.meta("head") == key:  # another process got there first
                self.db.execute("COMMIT")
                return UpdateStats()
            stats = self._apply(key, rebuild, jobs)
            self.db.execute("COMMIT")
            if stats.rebuilt:
                # Return the pages the rebuild freed (its own transaction; sqlite3_exec steps it to the end).
                self.db.executescript("PRAGMA incremental_vacuum;")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            self.keys.forget()  # may name keys of the rolled-back transaction
            raise
        finally:
            self.keys.end_update()
        return stats

    def _apply(self, key: str | None, rebuild: bool, jobs: int = 1) -> UpdateStats:
        """Diff the indexed snapshot against the head and write the rows of the change (from nothing when the
        old side cannot be diffed, or when too many orphans piled up)."""
        snapshot = self.brain.snapshot()
        stats = UpdateStats()
        writer = RowWriter(self.db, self.brain, self.keys, stats, jobs=jobs)
        old_modules = None if rebuild else indexed_modules(self.meta, self.brain.blobs)
        if old_modules is None:
            stats.rebuilt = True
            fresh = self.meta("built") is None
            stats.reason = "asked" if rebuild else "new index" if fresh else "the indexed snapshot cannot be read"
            writer.clear()
            old_modules = {}
        new_modules = modules_of(snapshot)
        try:
            change = changes(self.brain.blobs, old_modules, new_modules)
        except OldSideUnreadableError:
            # The indexed snapshot's compositions are damaged or gone: what the index holds cannot be
            # diffed, so start from nothing (the head's side raised, not this, if the brain is broken).
            return self._apply(key, rebuild=True, jobs=jobs)
        writer.apply(change)
        writer.finish(key, snapshot, new_modules)
        if writer.orphan_share() > ORPHAN_SHARE and not stats.rebuilt:
            return self._apply(key, rebuild=True, jobs=jobs)
        return stats

    # --- keys (used by `retrieval.query` and `retrieval.sources`) ----------------------------------

    def key(self, hex_id: str) -> int | None:
        """The integer key of a block id the index names, or None."""
        return self.keys.key(hex_id)

    def digest(self, key: int) -> str:
        """The hex block id of a key."""
        return self.keys.digest(key)

    def kind_names(self) -> dict[int, str]:
        """Edge kind names by id (kinds are only ever added; cached until one is missing)."""
        return self.keys.kind_names()

    # --- reading (used by `retrieval.query`) -----------------------------------------------------

    @contextlib.contextmanager
    def read_transaction(self) -> Iterator[None]:
        """A read transaction: every query inside sees one committed state of the index."""
        self.db.execute("BEGIN")
        try:
            generation = self.meta("generation")
            if generation != self._generation:
                self.keys.forget()
                self._generation = generation
            yield
        finally:
            self.db.execute("COMMIT")


def follow_head(root: Path, *, jobs: int | None = None) -> None:
    """Bring a brain's search index (file) to its head, incrementally: run for every head a command moved
    (`cli.index_upkeep`, `retrieval.follow`), so `ingest`, `pull` and every lifecycle command leave an index the
    first query needs not wait for. A brain whose index cannot be written (read-only), or an index busy or damaged,
    is left to the next search, which updates or rebuilds it; the command that moved the head never fails
    for it. `jobs`: processes for a large update (default: every core, the command being done with them)."""
    try:
        brain = Brain.open(root)
        index = SearchIndex.open(brain)
    except (BrainError, OSError, sqlite3.Error):
        return
    try:
        if index.path is not None:
            index.ensure_current(jobs=default_jobs() if jobs is None else jobs)
    except (BrainError, OSError, sqlite3.Error):
        pass  # a cache: the next search brings it current (or rebuilds it)
    finally:
        index.close()


__all__ = [
    "FORMAT", "MODULES", "ORPHAN_SHARE", "RECORD_TYPES", "IndexUnusableError", "SearchIndex", "UpdateStats",
    "follow_head",
]
