"""The search index's file: its schema and format, opening a connection, and recovering from a file that is not
a usable index of this format (corrupt, torn, foreign, from another format: deleted and recreated).

`retrieval.index` opens and replaces connections only through here; what a query does when it meets a damaged
page after the file opened is `retrieval.recovery`'s.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

from brain.errors import BrainError, BrainUnreadableError
from retrieval.paths import index_path, rebuild_lock_path, search_dir
from retrieval.tokenize import FTS_TOKENIZER

# The format of the rows: a file of another format is rebuilt (bump it whenever the schema or what a row holds
# changes, so no index written by older code is ever read as current).
FORMAT = "brain-search/5"  # 4: the `tags` table (`search --tag`); 5: the trigger's own token always expanded
BUSY_TIMEOUT_MS = 30_000

SCHEMA = f"""
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
CREATE TABLE tags(tag TEXT NOT NULL, block INTEGER NOT NULL, PRIMARY KEY(tag, block)) WITHOUT ROWID;
CREATE INDEX tags_block ON tags(block);
CREATE TABLE kinds(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE edges(src INTEGER NOT NULL, kind INTEGER NOT NULL, dst INTEGER NOT NULL, PRIMARY KEY(src, kind, dst))
  WITHOUT ROWID;
CREATE INDEX edges_dst ON edges(dst);
CREATE TABLE records(
  block INTEGER NOT NULL, record BLOB NOT NULL, type INTEGER NOT NULL, other INTEGER, origin TEXT, locator TEXT,
  at TEXT, evidence BLOB, PRIMARY KEY(block, record)) WITHOUT ROWID;
CREATE TABLE pending(block INTEGER PRIMARY KEY, memory_type TEXT NOT NULL);
"""
TABLES = (
    "meta", "keys", "blocks", "docs", "fts", "whole", "names", "tags", "kinds", "edges", "records", "pending",
)
FTS_TABLES = ("fts", "whole")


class IndexUnusableError(BrainError):
    """The index file cannot be used as it is (corrupt, foreign or from another format); it is rebuilt."""


def open_index(brain_root: Path, *, in_memory: bool = False) -> tuple[sqlite3.Connection, Path | None]:
    """A checked connection to the index of the brain at `brain_root` and its file (created if needed); in memory
    (path None) when asked or when the brain is read-only. A sidecar directory name taken by something else, or
    a file that is not a usable index of this format, is deleted and recreated."""
    if not in_memory:
        path = index_path(brain_root)
        try:
            directory = search_dir(brain_root)
            if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
                directory.unlink()  # our sidecar's name, taken by something else: it is not ours to keep
            directory.mkdir(parents=True, exist_ok=True)
            return open_file(path), path
        except (OSError, sqlite3.OperationalError) as e:
            if not is_readonly(e):
                raise BrainUnreadableError(f"the search index {path} cannot be opened: {e}",
                                           hint=f"delete {search_dir(brain_root)}; it is rebuilt") from None
    return open_memory(), None


def open_file(path: Path) -> sqlite3.Connection:
    """A checked connection to the index file at `path` (created if missing); a file that is not a usable
    index of this format is deleted and created again. Raises `sqlite3.OperationalError`/`OSError` when the
    file cannot be opened at all (a read-only copy: see `is_readonly`)."""
    try:
        with _rebuild_lock(path, fcntl.LOCK_SH):  # not while another connection deletes or rebuilds it
            return _open_checked(path)
    except IndexUnusableError:
        with rebuilding(path):
            try:
                return _open_checked(path)  # another connection may have recreated it while this one waited
            except IndexUnusableError:
                remove_index_files(path)
                return _open_checked(path)


def open_memory() -> sqlite3.Connection:
    """A checked, empty index in memory (a read-only brain, or `--at`)."""
    connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    check(connection)
    return connection


def recreate(path: Path | None) -> sqlite3.Connection:
    """A fresh, checked index at `path` (whatever was there deleted), or in memory when `path` is None. The caller
    holds `rebuilding(path)` until the new file is built."""
    if path is None:
        return open_memory()
    remove_index_files(path)
    connection = connect(str(path))
    check(connection)
    return connection


def _open_checked(path: Path) -> sqlite3.Connection:
    connection = None
    try:
        connection = connect(str(path))
        check(connection)
        return connection
    except IndexUnusableError:
        if connection is not None:
            connection.close()
        raise
    except sqlite3.DatabaseError as e:
        if connection is not None:
            connection.close()
        if isinstance(e, sqlite3.OperationalError) and is_readonly(e):
            raise
        raise IndexUnusableError(f"the index file is not a usable database: {e}") from None


def check(db: sqlite3.Connection) -> None:
    """Create the schema in a new file; refuse a foreign or corrupt one (`IndexUnusableError`)."""
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            _create(db)
            return
        if not set(TABLES) <= tables:
            raise IndexUnusableError("the index file lacks tables")
        row = db.execute("SELECT value FROM meta WHERE key='format'").fetchone()
        if row is None or row[0] != FORMAT:
            raise IndexUnusableError(f"the index file is of format {row and row[0]!r}, not {FORMAT!r}")
    except sqlite3.DatabaseError as e:
        if isinstance(e, sqlite3.OperationalError) and is_readonly(e):
            raise
        raise IndexUnusableError(f"the index file is not a usable database: {e}") from None


def _create(db: sqlite3.Connection) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
            for statement in SCHEMA.strip().split(";\n"):
                db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def connect(path: str) -> sqlite3.Connection:
    """A connection to the file at `path` with the index's settings (WAL, busy timeout, incremental vacuum)."""
    connection = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # Takes effect only in a new file, before its first table: lets a rebuild return the pages it freed.
    connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    return connection


def identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the index file, or None when it does not exist."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


# SQLITE_READONLY_DBMOVED: the file this connection opened was deleted or renamed (another connection rebuilt
# the index); SQLite refuses to write to it. Not a read-only brain: the file to use is the one there now.
_SQLITE_READONLY_DBMOVED = 1032


def is_moved(error: Exception) -> bool:
    """Whether `error` says the connection's file was replaced under it (use the file there now)."""
    return getattr(error, "sqlite_errorcode", None) == _SQLITE_READONLY_DBMOVED


def is_readonly(error: Exception) -> bool:
    """Whether `error` says the file cannot be written (a read-only copy of a brain), not that it is damaged."""
    if is_moved(error):
        return False
    text = str(error).lower()
    return isinstance(error, PermissionError) or "readonly" in text or "read-only" in text or "unable to open" in text


# The rebuild lock, a `flock` on a file beside the index (`retrieval.paths.REBUILD_LOCK`): exclusive while the file is
# deleted and built again, shared while a connection opens and checks it. Without it two connections that met the
# same damage each deleted the file the other had just built, and one connection set up (WAL, vacuum mode) a file
# another was deleting: "attempt to write a readonly database" or "database is locked" (a 500 from a server whose
# threads each hold a connection). `flock` locks belong to a descriptor, so two threads of one process exclude
# each other too; a thread that holds the lock (a rebuild opening its new file) does not take it again.
_HOLDING = threading.local()


@contextlib.contextmanager
def rebuilding(path: Path) -> Iterator[None]:
    """Hold the rebuild lock of the index file `path` exclusively: one connection at a time deletes and rebuilds
    it, in this process or any other."""
    with _rebuild_lock(path, fcntl.LOCK_EX):
        yield


@contextlib.contextmanager
def _rebuild_lock(path: Path, mode: int) -> Iterator[None]:
    if getattr(_HOLDING, "held", False):
        yield
        return
    try:
        fd = os.open(rebuild_lock_path(path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:  # a read-only brain: its index is never deleted or rebuilt on disk, nothing to exclude
        yield
        return
    try:
        fcntl.flock(fd, mode)
        _HOLDING.held = True
        yield
    finally:
        _HOLDING.held = False
        os.close(fd)  # releases the lock


def remove_index_files(path: Path) -> None:
    """Delete the index file and its companions (`-wal`, `-shm`, `-journal`)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
