"""The one owner of forked processes: when forking is safe, how a worker starts, and the fork-pool map.

Every process this package (and `ingest`) forks goes through here, so the rules are kept in one place:
- `can_fork()`: only with the `fork` start method and while no other thread runs (a fork copies locks
  other threads hold, and the child can deadlock on them). Callers that cannot fork do the work in-process.
- `start_worker(serve, ...)`: a forked child that ignores Ctrl-C (the caller handles it and closes the
  pipe) and first closes the caller's ends of every other live worker's pipe, which it inherited; else a
  sibling's pipe never reaches end-of-file when the caller dies, and that sibling never exits.
- `parallel_map`: per-item work over a fork pool in chunks, results in item order; its workers die with the
  caller (Linux's parent-death signal: a pool worker would otherwise wait on its task queue forever).
- Descriptors kept from children (`keep_from_children`: the writer lock's) are closed first in every child: an
  `flock` lasts while any copy of its descriptor is open, so a child outliving a killed writer would keep the
  brain locked.

Workers are forked, so they inherit the imported code and the caller's data, and need no pickled state
beyond what they are sent.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
import os
import signal
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many items a pool costs more (fork + pickling) than it saves.
PARALLEL_THRESHOLD = 4000

# The caller's end of every live worker's pipe: each new child closes the ones it inherited.
_CALLER_ENDS: weakref.WeakSet[Connection] = weakref.WeakSet()
# Descriptors no child may keep: the writer lock's (an `flock` lasts while any copy of its descriptor is open, so
# a child outliving a killed caller would hold the brain locked).
_NOT_FOR_CHILDREN: set[int] = set()
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def can_fork() -> bool:
    """Whether this process may fork a worker now: `fork` is available and no other thread runs."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def default_jobs() -> int:
    """All cores: the default for `--jobs`."""
    return os.cpu_count() or 1


def keep_from_children(fd: int) -> None:
    """Have every child forked from now on close `fd` first (until `give_to_children`)."""
    _NOT_FOR_CHILDREN.add(fd)


def give_to_children(fd: int) -> None:
    """Undo `keep_from_children` (before `fd` is closed: its number may be reused)."""
    _NOT_FOR_CHILDREN.discard(fd)


def close_inherited() -> None:
    """In a freshly forked child: close the caller's ends of other workers' pipes and the descriptors kept from
    children, ignore Ctrl-C."""
    for end in list(_CALLER_ENDS):
        end.close()
    for fd in list(_NOT_FOR_CHILDREN):
        with contextlib.suppress(OSError):
            os.close(fd)
    _NOT_FOR_CHILDREN.clear()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's; it closes the pipe


def _start_pool_worker(caller: int) -> None:
    """A pool worker's start: `close_inherited`, and die with the caller. A pool worker waits on a task queue whose
    write end it holds itself, so a SIGKILLed caller would leave it waiting forever; Linux's parent-death signal
    ends it (elsewhere it still exits when its work is done and the queue closes with the pool)."""
    close_inherited()
    die_with_parent(caller)


def lower_priority(by: int) -> int | None:
    """Run this process `by` nice levels lower (which an unprivileged process may always do) and as a batch task
    (Linux's `SCHED_BATCH`: its wake-ups never preempt a running process); the nice value it had, for
    `restore_priority` (None where there are no nice values). Elsewhere than Linux, the nice value alone."""
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    try:
        initial = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, min(19, initial + by))
    except (OSError, AttributeError):
        return None
    return initial


def restore_priority(initial: int | None) -> None:
    """Undo `lower_priority` as far as allowed (raising a nice value back needs privilege)."""
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    if initial is not None:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, initial)


def die_with_parent(parent: int) -> None:
    """Have Linux SIGKILL this process when its parent (`parent`, the pid it was started by) dies; exit at once
    if it already has. Elsewhere nothing: such a process must also end on its own (its input closing)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the signal was set
        os._exit(1)


@dataclass
class Worker:
    """A forked worker process and the caller's end of its pipe."""

    connection: Connection
    process: BaseProcess

    def close(self, *, terminate: bool = False) -> None:
        """Close the pipe (the worker exits at end-of-file) and reap it; `terminate` does not wait for it."""
        self.connection.close()
        _CALLER_ENDS.discard(self.connection)
        if terminate:
            # An idle worker holds nothing; a process forked later may keep its pipe open, so do not wait.
            self.process.terminate()
        self.process.join()


def _run_worker(serve: Callable[..., None], connection: Connection, args: tuple[Any, ...]) -> None:
    close_inherited()
    serve(connection, *args)


def start_worker(serve: Callable[..., None], *args: Any) -> Worker:
    """Fork a daemon child running `serve(connection, *args)`; raises `OSError` when it cannot start.

    Callers check `can_fork()` first. The child's end of the pipe is closed here, so the caller sees
    end-of-file (`EOFError`) when the child dies.
    """
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    _CALLER_ENDS.add(ours)  # before the fork: the child closes its copy of our end too
    try:
        process = context.Process(target=_run_worker, args=(serve, theirs, args), daemon=True)
        process.start()
    except BaseException:
        _CALLER_ENDS.discard(ours)
        ours.close()
        raise
    finally:
        theirs.close()
    return Worker(ours, process)


def _identity(value: Any) -> Any:
    return value


def _run_chunk(task: tuple[Callable[[Path, Sequence[T]], list[R]], Path, Sequence[T], Callable[[R], Any]]) -> list[Any]:
    function, root, chunk, wire = task
    return [wire(result) for result in function(root, chunk)]


def parallel_map(
    function: Callable[[Path, Sequence[T]], list[R]],
    root: Path,
    items: Sequence[T],
    jobs: int | None = None,
    threshold: int = PARALLEL_THRESHOLD,
    wire: Callable[[R], Any] = _identity,
    unwire: Callable[[Any], R] = _identity,
    chunk: int | None = None,
    ahead: int = 2,
) -> Iterator[R]:
    """`function(root, chunk)` over chunks of `items`, results in item order; `jobs` workers (default: all cores).

    Small jobs, one job, and callers that cannot fork run in-process. Results cross the process boundary
    as `wire(result)` and are rebuilt with `unwire`: plain tuples pickle far faster than objects.

    `chunk`: items per call, for results too large to hold at once (documents, texts). In-process, the chunks
    are computed as they are consumed; forked, at most `ahead` chunks per worker are in flight or waiting, so a
    caller slower than the workers holds a bounded amount (a pool's `imap` queues every result it computes).
    Chunks of very uneven cost want a larger `ahead`: the workers keep going while the caller waits for a slow one.
    """
    jobs = default_jobs() if jobs is None else max(1, jobs)
    if jobs == 1 or len(items) < threshold or not can_fork():
        if chunk is None:
            yield from function(root, items)
        else:
            for start in range(0, len(items), chunk):
                yield from function(root, items[start : start + chunk])
        return
    # A few chunks per worker keeps them all busy to the end without paying per-item IPC.
    size = chunk or max(1, -(-len(items) // (jobs * 4)))
    tasks = ((function, root, items[i : i + size], wire) for i in range(0, len(items), size))
    # Not `multiprocessing.Pool`: leaving its block early (the caller stopped reading, or raised) terminates its
    # workers with SIGTERM, and one killed while writing a result holds the result queue's lock forever, so the
    # pool's own shutdown then hangs on that lock. An executor's shutdown lets in-flight chunks finish (at most
    # `ahead` per worker) and cancels the rest; a worker that dies is `BrokenProcessPool`, not a hang.
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_pool_worker, initargs=(os.getpid(),)) as pool:
        waiting: deque[Future[list[Any]]] = deque()
        try:
            for task in tasks:
                waiting.append(pool.submit(_run_chunk, task))
                if len(waiting) >= ahead * jobs:
                    yield from map(unwire, waiting.popleft().result())
            while waiting:
                yield from map(unwire, waiting.popleft().result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

__all__ = [
    "PARALLEL_THRESHOLD",
    "Worker",
    "can_fork",
    "close_inherited",
    "default_jobs",
    "die_with_parent",
    "give_to_children",
    "keep_from_children",
    "lower_priority",
    "parallel_map",
    "restore_priority",
    "start_worker",
]
