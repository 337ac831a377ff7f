"""Blob puts handed to a forked helper process, so creating thousands of small files overlaps the caller's work.

An ingest creates one file per block; each create is several syscalls and tens of microseconds of kernel
time. A thread cannot absorb that while the caller is busy in Python (every syscall gives the GIL away and
waits to get it back), a second process can. Small writers never pay for one: puts are stored inline until
`START_AFTER` of them arrive, then the helper is forked and takes batches over a pipe (whose buffer bounds
the memory in flight).

Crash safety is the store's: the helper writes exactly what `BlobStore.put(sync=False)` would. `drain()`
returns only once every put so far is stored (re-raising the first error), and the `Writer` drains
before its one filesystem sync, so the order blobs → sync → snapshot → head is unchanged. The helper exits
when the pipe closes, including when the caller dies. The helper is forked only when `brain.concurrency`
says forking is safe (no other thread runs); otherwise every put is stored inline.
"""

from __future__ import annotations

import errno
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from brain.concurrency import Worker, can_fork, start_worker
from brain.store.blobs import BlobStore

START_AFTER = 512
BATCH = 256


def _serve(connection: Connection, root: str) -> None:
    """The helper: store every batch it receives; answer each drain request with None or the first error."""
    blobs = BlobStore(root)  # type: ignore[arg-type]
    error: BaseException | None = None
    while True:
        try:
            batch = connection.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            connection.send(_portable(error))
            error = None
            continue
        if error is not None:
            continue  # after a failure nothing more is stored; the next drain reports it
        try:
            for data in batch:
                blobs.put(data, sync=False)
        except BaseException as e:  # noqa: BLE001 - reported to the caller at its next drain
            error = e


def _portable(error: BaseException | None) -> Any:
    if error is None:
        return None
    if isinstance(error, OSError):
        return OSError(error.errno, error.strerror, error.filename)
    return RuntimeError(f"storing a blob failed: {type(error).__name__}: {error}")  # a bug: exit 70


class BackgroundPuts:
    """`put(data)` now or later; `drain()` before anything may refer to what was put."""

    def __init__(self, blobs: BlobStore) -> None:
        self._blobs = blobs
        self._seen = 0
        self._batch: list[bytes] = []
        self._worker: Worker | None = None

    @property
    def _process(self) -> BaseProcess | None:
        return None if self._worker is None else self._worker.process

    def put(self, data: bytes) -> None:
        """Store `data` (durable by the writer's next sync, like `BlobStore.put(sync=False)`)."""
        self._seen += 1
        if self._worker is None and self._seen <= START_AFTER:
            self._blobs.put(data, sync=False)
            return
        self._batch.append(data)
        if len(self._batch) >= BATCH:
            self._send()

    def _send(self) -> None:
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        if self._worker is None:
            try:
                self._worker = start_worker(_serve, str(self._blobs.root)) if can_fork() else None
            except OSError:
                self._worker = None  # no helper to be had: store inline, as small writers do
            if self._worker is None:
                for data in batch:
                    self._blobs.put(data, sync=False)
                return
        self._worker.connection.send(batch)

    def drain(self) -> None:
        """Wait until everything put so far is stored; raises the first error the helper met."""
        self._send()
        if self._worker is None:
            return
        self._worker.connection.send(None)
        try:
            error = self._worker.connection.recv()
        except (EOFError, OSError):
            raise OSError(errno.EIO,
                          "the blob-writing helper process died; nothing since the last commit is kept") from None
        if error is not None:
            raise error

    def close(self) -> None:
        """Stop the helper once it has stored what it was sent (it exits when the pipe closes)."""
        self._batch.clear()
        if self._worker is not None:
            self._worker.close()
            self._worker = None
