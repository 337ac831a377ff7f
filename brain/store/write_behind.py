"""Writing a large stream on a second thread, so the kernel's copy of one chunk overlaps hashing the next.

Streaming a big source costs, per byte, a read, two hashes and a write; on one thread they add up. The
hashes and `os.write` release the GIL, so a writer thread fed through a small bounded queue (constant
memory: `DEPTH` chunks) runs them side by side on two cores. It also starts the disk writeback every
`WRITEBACK_STEP` bytes, and once a step has reached the disk drops it from the page cache, so the
commit's one sync finds little left to flush and a large source does not evict everything else.
"""

from __future__ import annotations

import os
import queue
import threading

from brain.store.atomic import settle_and_drop, start_writeback

DEPTH = 4
WRITEBACK_STEP = 32 << 20


class WriteBehind:
    """`write(chunk)` queues; `close()` waits until everything is written and raises the first error."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=DEPTH)
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._drain, name="blob-write-behind", daemon=True)
        self._thread.start()

    def write(self, chunk: bytes) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(chunk)

    def close(self) -> None:
        """Finish (also after a failure of the caller's: the thread must never outlive the file)."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _drain(self) -> None:
        written = started = 0
        previous: tuple[int, int] | None = None  # the range whose writeback was started one step ago
        while (chunk := self._queue.get()) is not None:
            if self._error is not None:
                continue  # keep taking chunks so the producer never blocks on a full queue
            try:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(self._fd, view) :]
                written += len(chunk)
                if written - started >= WRITEBACK_STEP:
                    start_writeback(self._fd, started, written - started)
                    if previous is not None:
                        settle_and_drop(self._fd, *previous)
                    previous, started = (started, written - started), written
            except OSError as e:
                self._error = e
