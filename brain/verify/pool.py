"""Spreading per-item checks (block decode, blob re-hash) over worker processes.

Workers are forked, so they inherit the imported code and need no pickled state beyond their chunk of
work; each one opens the store by path. Small jobs run in-process, where forking would cost more than it
saves, and so does everything when the caller runs other threads (forking them is unsafe).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many items a pool costs more (fork + pickling) than it saves.
PARALLEL_THRESHOLD = 4000


def default_jobs() -> int:
    """All cores: the default for `--jobs`."""
    return os.cpu_count() or 1


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
) -> Iterator[R]:
    """`function(root, chunk)` over chunks of `items`, results in item order; `jobs` workers (default: all cores).

    Results cross the process boundary as `wire(result)` and are rebuilt with `unwire`: plain tuples
    pickle far faster than objects.
    """
    jobs = default_jobs() if jobs is None else max(1, jobs)
    # Forking a multi-threaded process can deadlock a child on a lock another thread held: stay serial.
    can_fork = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    if jobs == 1 or len(items) < threshold or not can_fork:
        yield from function(root, items)
        return
    # A few chunks per worker keeps them all busy to the end without paying per-item IPC.
    size = max(1, -(-len(items) // (jobs * 4)))
    chunks = [(function, root, items[i : i + size], wire) for i in range(0, len(items), size)]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for results in pool.imap(_run_chunk, chunks):
            yield from map(unwire, results)
