"""`brain.concurrency`: when forking is allowed, and workers that never keep a sibling's pipe open."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from brain import concurrency
from brain.concurrency import can_fork, parallel_map, start_worker
from brain.identity import OciDigest
from brain.store.background import START_AFTER, BackgroundPuts
from brain.store.blobs import BlobStore


def _echo(connection: Connection) -> None:
    while True:
        try:
            connection.send(connection.recv())
        except EOFError:
            return


def _alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other tests of the session may leave idle threads behind; the thread guard is tested on its own."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)


def test_no_fork_while_another_thread_runs() -> None:
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert not can_fork()
    finally:
        release.set()
        thread.join()


def test_a_worker_exits_when_its_pipe_closes_even_while_a_later_sibling_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    _alone(monkeypatch)
    first = start_worker(_echo)
    second = start_worker(_echo)  # forked after `first`: it inherited our end of first's pipe, and closed it
    try:
        first.connection.send("ping")
        assert first.connection.recv() == "ping"
        first.connection.close()
        first.process.join(timeout=20)
        assert first.process.exitcode == 0
        second.connection.send("still here")
        assert second.connection.recv() == "still here"
    finally:
        first.close()
        second.close()
    assert second.process.exitcode == 0


def _squares(root: Path, items: list[int]) -> list[int]:
    return [i * i for i in items]


def test_parallel_map_keeps_item_order_forked_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    items = list(range(1000))
    assert list(parallel_map(_squares, Path("."), items, jobs=2, threshold=1)) == [i * i for i in items]
    _alone(monkeypatch)
    assert list(parallel_map(_squares, Path("."), items, jobs=2, threshold=1)) == [i * i for i in items]


def test_background_puts_store_inline_while_another_thread_runs(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    puts = BackgroundPuts(store)
    data = [f"blob {i}".encode() for i in range(START_AFTER + 300)]
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        for item in data:
            puts.put(item)
        assert puts._process is None  # no helper was forked next to a running thread
        puts.drain()
    finally:
        release.set()
        thread.join()
        puts.close()
    assert all(store.get(OciDigest.of(item)) == item for item in data)


def _touch_each(root: Path, items: list[int]) -> list[int]:
    for item in items:
        (root / f"computed-{item}").touch()
    return items


@pytest.mark.parametrize("forked", [True, False])
def test_parallel_map_in_chunks_keeps_order_and_computes_only_a_bounded_way_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    _alone(monkeypatch)
    if not forked:
        monkeypatch.setattr(concurrency, "can_fork", lambda: False)
    items = list(range(100))
    results = parallel_map(_touch_each, tmp_path, items, jobs=2, threshold=1, chunk=1, ahead=1)
    assert next(results) == 0
    time.sleep(0.3)  # workers left alone would compute every chunk meanwhile (a pool's imap does)
    computed = len(list(tmp_path.glob("computed-*")))
    assert computed <= (2 if forked else 1)
    assert [0, *results] == items
    assert len(list(tmp_path.glob("computed-*"))) == 100


_STOP_EARLY = """
import sys
from pathlib import Path
from brain.concurrency import parallel_map

def large(root, chunk):
    return [b"x" * 200_000 for _ in chunk]  # a result long enough that workers are often mid-write

for attempt in range(20):
    try:
        for seen, _ in enumerate(parallel_map(large, Path("."), list(range(400)), jobs=2, threshold=1, chunk=4)):
            if seen == 3:
                raise LookupError("the caller gives up")
    except LookupError:
        pass
print("done")
"""


def test_a_caller_that_stops_reading_early_never_hangs_the_workers_shutdown() -> None:
    # multiprocessing.Pool hung here in 20 of 20 attempts: its exit SIGTERMs a worker that holds the result
    # queue's lock, then waits on that lock (a merge that refused mid-judgement hung the test suite).
    done = subprocess.run([sys.executable, "-c", _STOP_EARLY], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "done"), done.stderr[-2000:]


def _die_on_seven(root: Path, items: list[int]) -> list[int]:
    if 7 in items:
        os._exit(1)  # a worker the kernel killed (the OOM killer), not an exception it could report
    return items


def test_a_worker_that_dies_is_an_error_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    _alone(monkeypatch)
    with pytest.raises(BrokenProcessPool):
        list(parallel_map(_die_on_seven, Path("."), list(range(100)), jobs=2, threshold=1, chunk=5))
