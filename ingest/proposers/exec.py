"""`exec:COMMAND`: any program as a proposer, speaking JSON over stdin/stdout.

The command is split with `shlex` and run without a shell, in its own process group, with stdin =
`{"task": <task>, "schema": <answer JSON schema>, "text": <normalized text>}` (plus `"pages"`, the page
start offsets, for paged text). Its stdout (capped) must be one `boltzmann.candidates/v1` answer.
A run past the timeout has its whole process group killed (`proposer-timeout`); a nonzero exit is
`proposer-crashed` with the tail of stderr; unparsable or oversized output is `proposer-garbage`.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from blake3 import blake3

from brain.errors import UsageError
from ingest.proposers.base import ProposalResult, Proposer, SourceText
from ingest.proposers.candidates import MAX_ANSWER_BYTES, Task, candidates_json_schema, parse_candidate_set
from ingest.proposers.errors import ProposerError

DEFAULT_TIMEOUT = 120.0
STDERR_TAIL_BYTES = 2048
_CHUNK = 65536


class ExecProposer(Proposer):
    """Runs one external command per source (`brain/exec`)."""

    id = "brain/exec"
    version = "1"
    model: str | None = None

    def __init__(
        self, command: str, *, timeout: float = DEFAULT_TIMEOUT, max_output_bytes: int = MAX_ANSWER_BYTES
    ) -> None:
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise UsageError(f"exec proposer command {command!r} cannot be split: {e}") from None
        if not argv:
            raise UsageError("exec proposer needs a command: exec:COMMAND")
        if shutil.which(argv[0]) is None:
            raise UsageError(f"exec proposer command {argv[0]!r} is not an executable file or on PATH")
        self.argv = tuple(argv)
        self.timeout = timeout
        self.max_output_bytes = max_output_bytes
        # The command line, plus the content hash of every argument that names a file (the script itself),
        # so editing the script invalidates cached answers.
        self.parameters: dict[str, Any] = {"argv": list(argv), "files": _file_hashes(argv)}

    def propose(self, task: Task, source: SourceText) -> ProposalResult:
        """Run the command on one source; raises `ProposerError`."""
        request: dict[str, Any] = {
            "task": task.to_json(),
            "schema": candidates_json_schema(tuple(m.value for m in task.allowed_memory_types)),
            "text": source.text,
        }
        if source.page_starts is not None:
            request["pages"] = list(source.page_starts)
        stdout = self._run(json.dumps(request, ensure_ascii=False).encode("utf-8"))
        return ProposalResult(parse_candidate_set(stdout, task, limit=self.max_output_bytes))

    def _run(self, stdin: bytes) -> bytes:
        try:
            process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as e:
            raise ProposerError("proposer-crashed", f"cannot run {self.argv[0]}: {e.strerror or e}") from e
        out = _Capped(process.stdout, self.max_output_bytes + 1)
        err = _Tail(process.stderr)
        threads = [
            threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True),
            threading.Thread(target=out.drain, daemon=True),
            threading.Thread(target=err.drain, daemon=True),
        ]
        for thread in threads:
            thread.start()
        try:
            # A flood of output is garbage already: stop it now rather than at the timeout.
            finished = _wait_unreaped(process, self.timeout, give_up=lambda: out.overflow)
        finally:
            # The leader is a zombie (or still running) here, so its group id cannot have been reused: killing
            # the group takes exactly the command and any children it left holding our pipes.
            _kill_group(process)
            code = process.wait()
            for thread in threads:
                thread.join(timeout=5.0)
        if out.overflow:
            raise ProposerError("proposer-garbage", f"{self.argv[0]} wrote more than {self.max_output_bytes} bytes")
        if not finished:
            raise ProposerError("proposer-timeout", f"{self.argv[0]} ran longer than {self.timeout:g} s")
        if code != 0:
            how = f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
            raise ProposerError("proposer-crashed", f"{self.argv[0]} {how}: {err.text() or '(no stderr)'}")
        return bytes(out.data)


def _file_hashes(argv: list[str]) -> dict[str, str]:
    hashes = {}
    for arg in argv:
        path = Path(arg) if os.sep in arg or Path(arg).is_file() else None
        if path is None:
            found = shutil.which(arg)
            path = Path(found) if found else None
        with contextlib.suppress(OSError):
            if path is not None and path.is_file() and path.stat().st_size <= 64 * 1024 * 1024:
                hashes[arg] = blake3(path.read_bytes()).hexdigest()
    return hashes


def _feed(pipe: IO[bytes] | None, data: bytes) -> None:
    if pipe is None:
        return
    # A command that ignores its input closes the pipe early; that is its business, not a failure.
    with contextlib.suppress(BrokenPipeError, OSError):
        pipe.write(data)
    with contextlib.suppress(BrokenPipeError, OSError):
        pipe.close()


class _Capped:
    """Reads a pipe to the end, keeping at most `limit` bytes (the rest is drained and dropped)."""

    def __init__(self, pipe: IO[bytes] | None, limit: int) -> None:
        self.pipe, self.limit = pipe, limit
        self.data = bytearray()
        self.overflow = False

    def drain(self) -> None:
        if self.pipe is None:
            return
        with contextlib.suppress(OSError, ValueError):
            while chunk := self.pipe.read1(_CHUNK):  # type: ignore[attr-defined]
                room = self.limit - len(self.data)
                if len(chunk) > room:
                    self.overflow = True
                self.data += chunk[: max(room, 0)]


class _Tail:
    """Reads a pipe to the end, keeping its last few KB."""

    def __init__(self, pipe: IO[bytes] | None) -> None:
        self.pipe = pipe
        self.chunks: collections.deque[bytes] = collections.deque()
        self.size = 0

    def drain(self) -> None:
        if self.pipe is None:
            return
        with contextlib.suppress(OSError, ValueError):
            while chunk := self.pipe.read1(_CHUNK):  # type: ignore[attr-defined]
                self.chunks.append(chunk)
                self.size += len(chunk)
                while self.size - len(self.chunks[0]) >= STDERR_TAIL_BYTES:
                    self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        tail = b"".join(self.chunks)[-STDERR_TAIL_BYTES:]
        return " ".join(tail.decode("utf-8", "replace").split())


def _wait_unreaped(
    process: subprocess.Popen[bytes], timeout: float, give_up: Callable[[], bool] = lambda: False
) -> bool:
    """Wait until the command exits without reaping it; False on timeout or as soon as `give_up()` is true."""
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        try:
            if os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0 or give_up():
            return False
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, 0.05)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
