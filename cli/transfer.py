"""What the registry commands share: the `--plain-http` flag and a per-blob progress bar for transfers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Annotated

import typer

from brain.identity import OciDigest
from cli.output import Output, ProgressSink

PlainHttpFlag = Annotated[
    bool,
    typer.Option("--plain-http", help="Talk plain HTTP to the registry (automatic for localhost and 127.0.0.1)."),
]


# Small blobs finish before a bar is worth drawing; they would only add lines to a log.
MIN_BAR_BYTES = 1 << 20


class BlobProgress:
    """Turns the library's `(digest, done, total)` callbacks into one progress bar per large blob, in turn."""

    def __init__(self, output: Output, stack: ExitStack) -> None:
        self._output = output
        self._outer = stack
        self._current: OciDigest | None = None
        self._done = 0
        self._stack: ExitStack | None = None
        self._sink: ProgressSink | None = None

    def __call__(self, digest: OciDigest, done: int, total: int) -> None:
        if total < MIN_BAR_BYTES:
            return
        if digest != self._current:
            self.close()
            self._stack = self._outer.enter_context(ExitStack())
            self._sink = self._stack.enter_context(self._output.progress(f"blob {digest.short}", total=total))
            self._current, self._done = digest, 0
        if self._sink is not None and done > self._done:
            self._sink.advance(done - self._done)
            self._done = done

    def close(self) -> None:
        """Finish the current blob's bar."""
        if self._stack is not None:
            self._stack.close()
        self._stack, self._sink, self._current = None, None, None


@contextmanager
def blob_progress(output: Output) -> Iterator[BlobProgress]:
    """A progress callback for one command; every bar is closed when the block ends."""
    with ExitStack() as stack:
        progress = BlobProgress(output, stack)
        try:
            yield progress
        finally:
            progress.close()
