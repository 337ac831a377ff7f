"""The search index of every brain whose head a command moved is at that head when the command ends.

`cli.main` registers `head_moved` with `brain.store.head.on_head_moved` for every command and calls `finish`
when the command ends. A brain whose head only made final moves, or small interim ones, gets one incremental
update in this process then (an update at every move would redo, under the writer lock, what one pass at the end
does whole). Once interim moves (`brain.store.head.interim_moves`: an ingest's checkpoints before its last) have
committed `FOLLOW_FROM` sources, a follower starts instead (`retrieval.follow`, a process of its own): it indexes
each checkpoint while the command works on the next, on the cores the command leaves idle, is told of every later
move, and does the last pass at the end, which `finish` waits for. Below that, a follower's start (0.35-0.45 s of
CPU for the interpreter and the index's imports, measured) costs about what the update it would overlap does
(~0.5 ms a small note): an ingest of a few files in small checkpoints gains nothing from it. If a follower cannot
start, or fails, this process does the update at the end as before; one killed by a signal (Ctrl-C reaches the
whole process group) is left to the next search.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

# Sources committed by interim moves before a brain's index is followed from a process of its own: a default
# ingest checkpoints every 500 sources at first (`ingest.run.DEFAULT_CHECKPOINT`), so one of 1,500 or more is.
FOLLOW_FROM = 1_000

_MOVED: dict[Path, None] = {}  # brains to update here when the command ends, in order
_FOLLOWERS: dict[Path, subprocess.Popen[bytes]] = {}
_INTERIM_WORK: dict[Path, int] = {}  # what interim moves committed so far, per brain not yet followed


def head_moved(root: Path, interim: int) -> None:
    """A command moved the head of the brain at `root` (the listener `cli.main` registers); `interim`: 0 for a
    final move, else what the interim move committed."""
    root = Path(root)
    follower = _FOLLOWERS.get(root)
    if follower is None and interim:
        _INTERIM_WORK[root] = _INTERIM_WORK.get(root, 0) + interim
        if _INTERIM_WORK[root] >= FOLLOW_FROM:
            follower = _start_follower(root)
    if follower is None or not _tell(follower):
        _MOVED[root] = None


def finish() -> None:
    """Bring every moved brain's index to its head: wait for the followers' last passes, update the rest."""
    from retrieval.index import follow_head  # the engine only when a head moved

    followers = dict(_FOLLOWERS)
    _FOLLOWERS.clear()
    _INTERIM_WORK.clear()
    try:
        for root, follower in followers.items():
            if follower.stdin is not None:
                with contextlib.suppress(OSError):
                    follower.stdin.close()  # the command is done: the follower's last pass
            if follower.wait() > 0:  # it failed: the update falls to this process
                _MOVED[root] = None
            else:
                _MOVED.pop(root, None)
        roots = list(_MOVED)
        _MOVED.clear()
        for root in roots:
            follow_head(root)
    except KeyboardInterrupt:
        pass  # a cache: the next search brings it current


def _start_follower(root: Path) -> subprocess.Popen[bytes] | None:
    # `-P`: the follower imports this installation, never a `brain/` or `retrieval/` in the working directory;
    # no descriptor but the pipe is inherited (the writer lock's stays with this process).
    command = [sys.executable, "-P", "-m", "retrieval.follow", str(root.resolve()), str(os.getpid())]
    try:
        quiet = subprocess.DEVNULL  # stdout is the command's (`--json`); the follower has nothing to say
        follower = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=quiet, stderr=quiet)
    except OSError:
        return None
    _FOLLOWERS[root] = follower
    return follower


def _tell(follower: subprocess.Popen[bytes]) -> bool:
    """Tell the follower the head moved; False when it is gone."""
    assert follower.stdin is not None
    try:
        follower.stdin.write(b"\n")
        follower.stdin.flush()
    except OSError:  # a broken pipe: it ended (its exit code says how, at `finish`)
        return False
    return True
