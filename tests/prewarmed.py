"""A pre-warmed `brain` for the SIGKILL loops: each run is a real, separate process running the console script.

A server process imports `cli.main` once; for every run it forks a child that sets the run's argv, working
directory, environment and stdio, then calls `cli.main:console` exactly as the installed `brain` script
does (`sys.exit(console())`, atexit handlers included). The child is what the test SIGKILLs; the server
only forks and reaps. What it saves is the interpreter start and the imports (~0.4 s of CPU a run), which
in the crash tests were most of each run — so without it most random kill delays landed before the
command had even opened the brain.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

BRAIN_EXE = Path(sys.executable).with_name("brain")

_SERVER = r"""
import atexit, importlib, json, os, sys
import cli.main
for name in sys.argv[1:]:  # what the runs would import lazily: their command modules, the store, the index
    importlib.import_module(name)

requests, replies = os.fdopen(0, "rb", buffering=0), os.fdopen(1, "wb", buffering=0)
for line in iter(requests.readline, b""):
    request = json.loads(line)
    if request["op"] == "start":
        pid = os.fork()
        if pid == 0:  # the run: stdio, cwd, env and argv as a fresh `brain` process would have them
            code = 70
            try:
                for fd, name, flags in ((0, request["stdin"], os.O_RDONLY),
                                        (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                        (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
                    opened = os.open(name, flags, 0o600)
                    os.dup2(opened, fd)
                    os.close(opened)
                os.chdir(request["cwd"])
                os.environ.clear()
                os.environ.update(request["env"])
                sys.argv = [request["argv0"], *request["args"]]
                try:
                    sys.exit(cli.main.console())
                except SystemExit as exit:
                    code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
                    if not isinstance(exit.code, (int, type(None))):
                        print(exit.code, file=sys.stderr)
                atexit._run_exitfuncs()
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        replies.write(json.dumps({"pid": pid}).encode() + b"\n")
    else:
        flags = os.WNOHANG if request["op"] == "poll" else 0
        done, status = os.waitpid(request["pid"], flags)
        code = os.waitstatus_to_exitcode(status) if done else None
        replies.write(json.dumps({"code": code}).encode() + b"\n")
"""


# Imported lazily by most commands: `cli.main` on the first head move, and the search index it then updates.
_PRELOAD = ("brain.store.head", "retrieval.index")


@dataclass(frozen=True)
class Child:
    """One forked `brain` run: its pid and where its stdout and stderr go."""

    pid: int
    stdout: Path
    stderr: Path
    stdin: Path | None


class PrewarmedBrain:
    """Start `brain ARGS` as forked children of a server that imported the CLI once (see the module docstring)."""

    def __init__(self, env: dict[str, str], scratch: Path, commands: tuple[str, ...]) -> None:
        self._env = env
        self._scratch = scratch
        self._runs = 0
        preload = [*_PRELOAD, *(f"cli.commands.{c}" for c in commands)]
        self._server = subprocess.Popen([sys.executable, "-c", _SERVER, *preload], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env, cwd=scratch)  # fmt: skip

    def _ask(self, request: dict[str, object], timeout: float) -> dict[str, int | None]:
        assert self._server.stdin is not None and self._server.stdout is not None
        self._server.stdin.write(json.dumps(request).encode() + b"\n")
        self._server.stdin.flush()
        ready, _, _ = select.select([self._server.stdout], [], [], timeout)
        assert ready, f"no answer to {request} within {timeout} s"
        line = self._server.stdout.readline()
        assert line, f"the pre-warmed brain server died (exit {self._server.poll()})"
        reply: dict[str, int | None] = json.loads(line)
        return reply

    def start(
        self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, stdin: str | None = None
    ) -> Child:
        """Fork `brain ARGS` (environment `env`, default the server's; `stdin` its input) and return at once."""
        self._runs += 1
        out, err = self._scratch / f"run{self._runs}.out", self._scratch / f"run{self._runs}.err"
        given = None
        if stdin is not None:
            given = self._scratch / f"run{self._runs}.in"
            given.write_text(stdin)
        request = {"op": "start", "args": list(args), "argv0": str(BRAIN_EXE), "cwd": str(cwd or self._scratch),
                   "env": env or self._env, "stdin": str(given or os.devnull), "stdout": str(out),
                   "stderr": str(err)}  # fmt: skip
        pid = self._ask(request, 30)["pid"]
        assert pid is not None
        return Child(pid, out, err, given)

    def poll(self, child: Child) -> int | None:
        """The child's exit status (negative: killed by that signal), or None while it runs."""
        return self._ask({"op": "poll", "pid": child.pid}, 30)["code"]

    def kill(self, child: Child) -> None:
        """SIGKILL the child (it stays a zombie, so its pid is not reused, until `wait`)."""
        os.kill(child.pid, signal.SIGKILL)

    def wait(self, child: Child, timeout: float = 120) -> int:
        """Reap the child: its exit status as `subprocess` reports it (-9 for SIGKILL)."""
        code = self._ask({"op": "wait", "pid": child.pid}, timeout)["code"]
        assert code is not None
        return code

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: str | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """`brain ARGS` to its end, like `subprocess.run(..., input=stdin, capture_output=True, text=True)`."""
        child = self.start(*args, cwd=cwd, env=env, stdin=stdin)
        code = self.wait(child, timeout)
        done = subprocess.CompletedProcess([str(BRAIN_EXE), *args], code, child.stdout.read_text(),
                                           child.stderr.read_text())  # fmt: skip
        for path in (child.stdout, child.stderr, child.stdin):
            if path is not None:
                path.unlink()
        return done

    def close(self) -> None:
        """Stop the server (its children have all been reaped by `wait`)."""
        assert self._server.stdin is not None
        self._server.stdin.close()
        self._server.wait(timeout=30)


@contextmanager
def prewarmed_brain(env: dict[str, str], *commands: str) -> Iterator[PrewarmedBrain]:
    """A `PrewarmedBrain` whose children run with `env`, `cli.commands.<c>` of each of `commands` imported."""
    with tempfile.TemporaryDirectory(prefix="prewarmed-brain-") as scratch:
        server = PrewarmedBrain(env, Path(scratch), commands)
        try:
            yield server
        finally:
            server.close()


class ModuleBrain:
    """A test module's pre-warmed brain for helpers that take no fixture (other modules import those helpers).

    In the module: `BRAIN = ModuleBrain(ENV, "push", "pull")`; the helpers call `BRAIN.server.run(...)`. The
    server starts at the first run and stops when the test process exits (each xdist worker has its own)."""

    def __init__(self, env: dict[str, str], *commands: str) -> None:
        self._env, self._commands = env, commands
        self._server: PrewarmedBrain | None = None

    @property
    def server(self) -> PrewarmedBrain:
        """The running server, started on first use."""
        if self._server is None:
            scratch = Path(tempfile.mkdtemp(prefix="prewarmed-brain-"))
            self._server = PrewarmedBrain(self._env, scratch, self._commands)
            atexit.register(self._stop, scratch)
        return self._server

    def _stop(self, scratch: Path) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        shutil.rmtree(scratch, ignore_errors=True)
