"""The writer lock, exercised with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from brain.errors import ConflictError, LockTimeoutError
from brain.store import WriterLock

HOLD = textwrap.dedent(
    """
    import sys, time
    from brain.store import WriterLock
    with WriterLock(sys.argv[1]):
        print("locked", flush=True)
        time.sleep(float(sys.argv[2]))
    """
)

CRITICAL = textwrap.dedent(
    """
    import os, sys, time
    from brain.store import WriterLock
    log = sys.argv[2]
    for _ in range(5):
        with WriterLock(sys.argv[1], timeout=30):
            with open(log, "a") as f:
                f.write(f"start {os.getpid()}\\n")
            time.sleep(0.01)
            with open(log, "a") as f:
                f.write(f"end {os.getpid()}\\n")
    """
)


def _spawn(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, cwd=os.getcwd()
    )


def _hold(brain, seconds: float) -> subprocess.Popen[str]:
    holder = _spawn(HOLD, str(brain), str(seconds))
    assert holder.stdout.readline().strip() == "locked"
    return holder


def test_two_writers_never_interleave(tmp_path):
    log = tmp_path / "log"
    procs = [_spawn(CRITICAL, str(tmp_path), str(log)) for _ in range(3)]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    lines = log.read_text().splitlines()
    assert len(lines) == 30
    for start, end in zip(lines[::2], lines[1::2], strict=True):
        assert start.startswith("start ") and end == "end " + start.split()[1]


def test_timeout_names_the_holder_and_the_option(tmp_path):
    holder = _hold(tmp_path, 30)
    waits: list[str] = []
    try:
        started = time.monotonic()
        with pytest.raises(LockTimeoutError) as info, WriterLock(tmp_path, timeout=0.3, on_wait=waits.append):
            pass
        assert 0.25 <= time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait()
    message = str(info.value)
    assert f"writer pid {holder.pid} on host" in message and "--lock-timeout" in message and "\n" not in message
    assert waits and waits[0].startswith(f"waiting for writer pid {holder.pid} on host ")


def test_sigkilled_holder_does_not_block_the_next_writer(tmp_path):
    holder = _hold(tmp_path, 300)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with WriterLock(tmp_path, timeout=2) as lock:
        assert lock.held
    assert not lock.held


HOLD_WITH_WORKERS = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from brain.concurrency import parallel_map
    from brain.store import WriterLock

    def work(root, items):
        (root / f"worker-{os.getpid()}").touch()
        time.sleep(300)
        return items

    with WriterLock(sys.argv[1]):
        print("locked", flush=True)
        list(parallel_map(work, Path(sys.argv[2]), list(range(8)), jobs=2, threshold=1, chunk=1))
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_sigkilled_holder_s_pool_workers_neither_keep_the_lock_nor_outlive_it(tmp_path):
    # A pool worker waits on a queue whose write end it holds itself, and an `flock` lasts while any copy of its
    # descriptor is open: before, a killed merge's workers kept the brain locked, and lived on, indefinitely.
    marks = tmp_path / "marks"
    marks.mkdir()
    holder = _spawn(HOLD_WITH_WORKERS, str(tmp_path), str(marks))
    assert holder.stdout.readline().strip() == "locked"
    deadline = time.monotonic() + 30
    while len(list(marks.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = [int(p.name.removeprefix("worker-")) for p in marks.iterdir()]
    assert len(workers) == 2
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with WriterLock(tmp_path, timeout=5) as lock:
        assert lock.held
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers)


def test_waiter_gets_the_lock_when_holder_finishes(tmp_path):
    holder = _hold(tmp_path, 0.3)
    with WriterLock(tmp_path, timeout=10):
        assert holder.poll() is not None or holder.wait(timeout=5) == 0


def test_same_process_second_lock_waits(tmp_path):
    with WriterLock(tmp_path), pytest.raises(LockTimeoutError), WriterLock(tmp_path, timeout=0):
        pass
    with WriterLock(tmp_path, timeout=0):
        pass


def test_unwritable_brain_is_a_clear_conflict(tmp_path):
    (tmp_path / "boltzmann").write_text("a file where the directory should be")
    with pytest.raises(ConflictError, match="cannot open the writer lock"):
        WriterLock(tmp_path).acquire()


KILLED_MID_WRITE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from brain.brain import Brain
    from brain.store import WriterLock
    from brain.store.atomic import temp_file

    brain = Brain.open(sys.argv[1])

    def chunks():
        yield b"half a blob"
        print("writing", flush=True)
        time.sleep(60)

    with WriterLock(brain.path), temp_file(brain.path / "boltzmann") as (_, handle):
        handle.write(b"half a sidecar")
        handle.flush()
        brain.blobs.put_stream(chunks())
    """
)

LIVE_DOWNLOAD = textwrap.dedent(
    """
    import sys
    from brain.brain import Brain

    brain = Brain.open(sys.argv[1])

    def chunks():
        yield b"downloading "
        print("writing", flush=True)
        sys.stdin.readline()
        yield b"without the lock"

    digest, _ = brain.blobs.put_stream(chunks())
    print(digest.hex, flush=True)
    """
)


def _temps(brain_path) -> list[str]:
    return sorted(
        p.name for d in (brain_path / "blobs" / "sha256", brain_path / "boltzmann") for p in d.glob(".tmp-*")
    )


def test_the_next_writer_sweeps_what_a_killed_writer_left_but_not_a_live_download(tmp_path):
    from brain.brain import Brain

    brain = Brain.init(tmp_path / "b")
    killed = subprocess.Popen(
        [sys.executable, "-c", KILLED_MID_WRITE, str(brain.path)], stdout=subprocess.PIPE, text=True
    )
    assert killed.stdout.readline().strip() == "writing"
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=10)
    left = _temps(brain.path)
    assert len(left) == 2
    live = subprocess.Popen(
        [sys.executable, "-c", LIVE_DOWNLOAD, str(brain.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert live.stdout.readline().strip() == "writing"
    downloading = set(_temps(brain.path)) - set(left)
    assert len(downloading) == 1
    time.sleep(0.02)  # the live temp file is older than the lock acquisition too: only its flock protects it
    with WriterLock(brain.path):
        assert set(_temps(brain.path)) == downloading
    live.stdin.write("go on\n")
    live.stdin.flush()
    digest = live.stdout.readline().strip()
    assert live.wait(timeout=10) == 0
    assert (brain.path / "blobs" / "sha256" / digest).read_bytes() == b"downloading without the lock"
    assert _temps(brain.path) == []


def test_sweep_removes_only_unlocked_temp_files(tmp_path):
    from brain.store.atomic import open_temp, sweep_temps

    (tmp_path / ".tmp-abandoned").write_bytes(b"x")
    (tmp_path / "not-a-temp").write_bytes(b"x")
    claimed, fd = open_temp(tmp_path)
    try:
        assert sweep_temps(tmp_path, time.time() + 60) == 1
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([os.path.basename(claimed), "not-a-temp"])
        assert sweep_temps(tmp_path, 0) == 0  # nothing older than the epoch
    finally:
        os.close(fd)
    assert sweep_temps(tmp_path, time.time() + 60) == 1  # closed: abandoned now


def test_a_writer_that_skips_the_blob_sweep_still_sweeps_after_a_holder_died(tmp_path):
    from brain.brain import Brain

    brain = Brain.init(tmp_path / "b")
    (brain.path / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
    stale = brain.path / "blobs" / "sha256" / ".tmp-left-by-a-pull"
    stale.write_bytes(b"x")
    with WriterLock(brain.path, sweep_blobs=False) as lock:  # the last holder released: nothing is swept
        assert not lock.swept_blobs
    assert stale.exists()
    killed = subprocess.Popen(
        [sys.executable, "-c", KILLED_MID_WRITE, str(brain.path)], stdout=subprocess.PIPE, text=True
    )
    assert killed.stdout.readline().strip() == "writing"
    stale.write_bytes(b"x")  # (the killed writer swept the first one when it took the lock)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=10)
    assert len(_temps(brain.path)) == 3
    with WriterLock(brain.path, sweep_blobs=False) as lock:  # its holder record is still in the lock file
        assert lock.swept_blobs
    assert _temps(brain.path) == []


def test_a_blob_writer_lists_the_blob_directory_only_when_it_changed_since_the_last_release(tmp_path):
    from brain.brain import Brain

    brain = Brain.init(tmp_path / "b")
    blobs = brain.path / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)
    with WriterLock(brain.path) as lock:  # no mark yet (a new brain): swept
        assert lock.swept_blobs
    with WriterLock(brain.path) as lock:  # nothing made or removed in blobs/sha256 since: not listed
        assert not lock.swept_blobs
    stale = blobs / ".tmp-left-by-a-pull"
    stale.write_bytes(b"x")
    os.utime(stale, (0, 0))  # old enough to be a dead writer's
    with WriterLock(brain.path) as lock:  # the directory changed: listed, the dead writer's temp swept
        assert lock.swept_blobs
    assert not stale.exists()
    (brain.path / "boltzmann" / "lock").write_bytes(b"released 1 2")  # a mark that does not match
    with WriterLock(brain.path) as lock:
        assert lock.swept_blobs
