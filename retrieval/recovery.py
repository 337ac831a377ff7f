"""Answering a query through a damaged search index: detect the damage, rebuild once, answer.

The index is a cache of the brain, so damage to it is never the user's problem. A file whose header and
`meta` table are intact opens and looks current, but a query that reads a damaged page fails with
SQLITE_CORRUPT ("database disk image is malformed"). Here such a failure is recognised (by its error
code, or by `PRAGMA quick_check` when a query fails for a reason SQLite does not call corruption), the
file is deleted and rebuilt from the brain (`SearchIndex.start_over`), and the query runs again, once. If
it fails again the brain itself is the problem: `BrainUnreadableError` (exit 2), never a traceback.

Every path that answers from the index goes through `answered` (the CLI's `search` and `cat`, and the
server face's search and cat); a new answer joins by calling it too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

from brain.errors import BrainUnreadableError
from retrieval.index import SearchIndex
from retrieval.paths import search_dir

T = TypeVar("T")

_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26
_NOT_DAMAGE = ("locked", "busy", "readonly", "read-only", "interrupted")


def answered(index: Callable[[], SearchIndex], work: Callable[[], T], note: Callable[[str], None] | None = None) -> T:
    """`work()`, rebuilding the index once (`index()` gives the one `work` reads) if it fails on damage."""
    try:
        return work()
    except sqlite3.DatabaseError as e:
        damaged = index()
        if damaged.path is None or not (damaged.replaced() or is_damaged(damaged, e)):
            raise
        reason = _first_line(e)
    # A file replaced under the connection (another connection rebuilt it): start_over takes the new one.
    stats = damaged.start_over(f"the index was damaged ({reason}) and was rebuilt")
    if note is not None and stats.rebuilt:
        note(f"search index rebuilt: {stats.added} blocks (it was damaged: {reason})")
    try:
        return work()
    except sqlite3.DatabaseError as e:
        raise BrainUnreadableError(
            f"the search index is still unreadable after a rebuild: {_first_line(e)}",
            hint=f"check the disk, delete {search_dir(damaged.brain.path).name}/ in the brain's boltzmann/ and retry",
        ) from None


def is_damaged(index: SearchIndex, error: sqlite3.DatabaseError) -> bool:
    """Whether `error` from a query means the file is damaged: SQLITE_CORRUPT/NOTADB, or a failed quick_check."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return True
    text = str(error).lower()
    if "malformed" in text or "not a database" in text:
        return True
    if isinstance(error, sqlite3.OperationalError) and any(word in text for word in _NOT_DAMAGE):
        return False  # another process holds the file, or it cannot be written: not damage
    return quick_check(index) != "ok"


def quick_check(index: SearchIndex) -> str:
    """`PRAGMA quick_check(1)` of the open index: "ok", the first problem it reports, or the error it raised."""
    try:
        row = index.db.execute("PRAGMA quick_check(1)").fetchone()
    except sqlite3.DatabaseError as e:
        return _first_line(e)
    return "ok" if row is None else str(row[0])


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0][:200]
