"""The exclusive writer lock: `flock` on `boltzmann/lock`, holder info written inside.

The kernel releases an `flock` when its holder dies, so a crashed writer can never leave a stale lock;
the host/pid/time stored in the file only serve to tell a waiting writer who it is waiting for. Having
taken the lock, a writer removes the temp files that killed writers left in `blobs/sha256` and
`boltzmann/` (only unlocked ones: see `brain.store.atomic.sweep_temps`) and repairs a checkout a crash
interrupted (`brain.branches.pointers.repair_switching`), so no write of any kind lands under the wrong branch.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from brain.concurrency import give_to_children, keep_from_children
from brain.errors import ConflictError, LockTimeoutError, RefusedError
from brain.identity import utc_timestamp
from brain.store.atomic import sweep_temps
from brain.store.blobs import BLOB_DIR
from brain.store.sidecars import HEAD, HISTORY, LOCK, RECONCILE

LOCK_FILE = LOCK.parts
POLL_SECONDS = 0.05


def describe_holder(info: bytes) -> str:
    """`writer pid 123 on host x since T` from the lock file's contents, or a neutral phrase."""
    try:
        holder = json.loads(info)
        return f"writer pid {int(holder['pid'])} on host {holder['host']} since {holder['started_at']}"
    except (ValueError, TypeError, KeyError):
        return "another writer"


class WriterLock:
    """Context manager holding a brain's exclusive writer lock across processes."""

    def __init__(
        self,
        brain_path: Path,
        timeout: float | None = None,
        on_wait: Callable[[str], None] | None = None,
        *,
        reconciling: bool = False,
        sweep_blobs: bool = True,
    ) -> None:
        self.path = Path(brain_path).joinpath(*LOCK_FILE)
        self.blob_dir = Path(brain_path).joinpath(*BLOB_DIR)
        self.timeout = timeout
        self.on_wait = on_wait
        # A holder that writes only pointers (a checkout), or a server that swept a moment ago, leaves
        # blobs/sha256 to the next blob writer: listing a 100,000-blob directory would be most of its cost.
        # The directory is swept all the same when the previous holder died holding the lock (its holder
        # record is still in the file: `release` replaces it with `_clean_mark`), the one case a writer's
        # temp files are left. A blob writer sweeps only when the directory changed since the last release.
        self.sweep_blobs = sweep_blobs
        self.swept_blobs = False
        self.reconciling = reconciling
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object currently holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Block until the lock is ours; raise `LockTimeoutError` after `timeout` seconds."""
        if self._fd is not None:
            raise ConflictError(f"{self.path} is already held by this writer")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            # The first write of every writer: an unwritable brain is reported here, once, clearly.
            raise ConflictError(
                f"cannot open the writer lock {self.path}: {e.strerror}",
                hint="check that the brain directory is writable by you",
            ) from e
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        announced: str | None = None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    holder = describe_holder(_read_all(fd))
                    if deadline is not None and time.monotonic() >= deadline:
                        raise LockTimeoutError(
                            f"brain {self.path.parent.parent} is locked by {holder}; gave up after {self.timeout:g}s",
                            hint="wait for it to finish or raise --lock-timeout",
                        ) from None
                    if self.on_wait is not None and holder != announced:
                        self.on_wait(f"waiting for {holder}")
                        announced = holder
                    time.sleep(POLL_SECONDS)
            left = _read_all(fd)
            abandoned = bool(left) and not left.startswith(_CLEAN)
            _write_holder(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        keep_from_children(fd)  # a worker forked under the lock must not hold it past a killed holder
        acquired = time.time()
        try:
            self.swept_blobs = abandoned or (self.sweep_blobs and left != _clean_mark(self.blob_dir))
            blobs = [self.blob_dir] if self.swept_blobs else []
            for directory in (*blobs, self.path.parent):
                sweep_temps(directory, acquired)
            _repair_checkout(self.path.parent.parent)
            if not self.reconciling:
                refuse_while_reconciling(self.path.parent.parent)
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        """Give the lock up (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        give_to_children(fd)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, _clean_mark(self.blob_dir), 0)
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()


_CLEAN = b"released "


def _clean_mark(blob_dir: Path) -> bytes:
    """What a holder that let go leaves in the lock file: the blob directory's inode and mtime as it left it.

    Any entry made in or removed from the directory since (a temp file a killed `pull` left) changes its
    mtime, so the next writer that finds the same mark knows there is nothing to sweep without listing
    100,000 names; one that finds another mark, or none (a crash lost the write: never synced), sweeps.
    """
    try:
        found = os.stat(blob_dir)
    except OSError:
        return _CLEAN + b"none"
    return _CLEAN + b"%d %d" % (found.st_ino, found.st_mtime_ns)


def _repair_checkout(root: Path) -> None:
    """Finish or undo a checkout a crash interrupted, before the new holder writes anything (§10.2).

    A `refs.json` that cannot be read is left for the commands that need it to report (a commit refuses it).
    """
    from brain.branches.pointers import repair_switching
    from brain.errors import BrainError

    with contextlib.suppress(BrainError):
        repair_switching(root)


def refuse_while_reconciling(root: Path, doing: str = "write") -> None:
    """Refuse while a halted reconciliation (§10.6) holds `boltzmann/reconcile.json`: every write, checkout,
    pull and push acquires the writer lock (or calls this), so this is the one guard.

    An empty file reads as absent. A state whose commit landed before the file could be deleted (the head is
    a snapshot the history log says reconciled exactly this state's head and theirs) is deleted here, under
    the lock, and the write goes on; anything else, a hostile file included, refuses.
    """
    where = RECONCILE.path(root)
    try:
        data = where.read_bytes()
    except FileNotFoundError:
        return
    except OSError as e:
        raise RefusedError(f"{where} cannot be read ({e.strerror}): refusing to {doing}",
                           hint="see `brain reconcile status`") from e
    if not data:
        return
    started, theirs = _state_heads(data)
    if started is not None and theirs is not None and _committed(root, started, theirs):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(where)
        return
    merging = f" (merging {theirs[:19]}…)" if theirs else ""
    raise RefusedError(
        f"a reconciliation is open in {root}{merging}: refusing to {doing} until it is continued or aborted",
        hint="see `brain reconcile status`",
    )


def _state_heads(data: bytes) -> tuple[str | None, str | None]:
    """The `head` and `theirs` of a reconcile.json, if it parses as an object naming them as strings."""
    try:
        document = json.loads(data)
    except ValueError:
        return None, None
    if not isinstance(document, dict):
        return None, None
    head, theirs = document.get("head"), document.get("theirs")
    return (head if isinstance(head, str) else None), (theirs if isinstance(theirs, str) else None)


def _committed(root: Path, started: str, theirs: str) -> bool:
    """Whether the head is the snapshot a history-log line records reconciling `theirs` onto `started`."""
    try:
        current = json.loads(HEAD.path(root).read_bytes()).get("snapshot")
        lines = HISTORY.path(root).read_bytes().splitlines()[-16:]
    except (OSError, ValueError, AttributeError):
        return False
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if (isinstance(entry, dict) and entry.get("snapshot") == current and entry.get("ours") == started
                and isinstance(entry.get("theirs"), list) and entry["theirs"][:1] == [theirs]):
            return True
    return False


def _read_all(fd: int) -> bytes:
    with contextlib.suppress(OSError):
        return os.pread(fd, 4096, 0)
    return b""


def _write_holder(fd: int) -> None:
    info = {"host": socket.gethostname(), "pid": os.getpid(), "started_at": utc_timestamp(int(time.time()))}
    data = json.dumps(info, sort_keys=True).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
