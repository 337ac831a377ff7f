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
