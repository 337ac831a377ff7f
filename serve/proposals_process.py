"""Proposals judged and committed in a process of their own, so a commit never holds a reader's GIL.

A proposal at 10^5 blocks is tens of milliseconds of Python (the gate, the blocks, two module compositions,
their Merkle trees). In the process that serves reads, that time is spent holding the one GIL every request
thread needs; a read waits for it not once but at every system call it makes (each SQLite step gives the
GIL away and must win it back, up to a 5 ms switch interval each time), so under a stream of proposals
reads took seconds. Here the `ProposalDesk` lives in one forked child: the HTTP processes hand it each
request over a Unix socket and wait on the socket (GIL released), and the operating system's scheduler,
not the GIL, shares the cores between proposals and reads.

The child is forked before the server binds, starts a thread or forks its HTTP workers; it owns the desk,
so its caches (compositions, member sets, Merkle levels, statements) stay warm across every agent's
proposals whichever HTTP process took them. Each HTTP process opens its own connection on first use (the
connection is per process id) and sends one request at a time over it: concurrent proposals in a process
queue on a lock, and one that cannot start within `BUSY_WAIT` is refused as busy (429), as the in-process
desk does. The socket lives in a private (0700) directory; requests are JSON, answers are JSON or an
error's class family, message and hint. The child dies with the server (`PR_SET_PDEATHSIG`, and it checks
its parent between requests), mid-commit included: the branch pointer moves last, so that is a crash the
writer is built for.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from brain.concurrency import lower_priority
from brain.store.oserrors import translate_os_error
from brain.errors import (
    BrainError,
    ConflictError,
    InvalidInputError,
    LocalStorageError,
    LockTimeoutError,
    NotFoundError,
    RefusedError,
    UsageError,
)
from serve.proposals import BUSY_WAIT, ProposalDesk, ProposalsBusy
from serve.tokens import Principal

_PR_SET_PDEATHSIG = 1
PROPOSAL_NICE = 10
"""How much lower than the server's the proposal process's priority is (`_yield_to_readers`)."""
GC_YOUNG = 20_000
"""The proposal process's young-generation collection threshold (`_collect_less`; CPython's default: 700)."""
# The error families an answer keeps (the HTTP status is chosen from them), most specific first.
_FAMILIES: tuple[type[BrainError], ...] = (
    ProposalsBusy, LockTimeoutError, InvalidInputError, UsageError, NotFoundError, ConflictError, RefusedError,
    LocalStorageError,
)
_BY_NAME = {cls.__name__: cls for cls in _FAMILIES}


class ProposalProcessGone(BrainError):
    """The proposal process exited (a crash, or the server is stopping): nothing more is committed."""


class DeskProcess:
    """The parent's handle on the proposal child: `propose`/`record_episode` like a `ProposalDesk`."""

    def __init__(self, pid: int, directory: Path) -> None:
        self.pid = pid
        self.directory = directory
        self.address = str(directory / "desk")
        self._lock = threading.Lock()
        self._connection: Connection | None = None
        self._owner: int | None = None  # the process id the connection was opened in

    @classmethod
    @contextlib.contextmanager
    def running(cls, desk: ProposalDesk) -> Iterator[DeskProcess]:
        """Fork the child serving `desk` (no thread may run yet), and stop it when the block ends."""
        directory = Path(tempfile.mkdtemp(prefix="brain-proposals-"))  # 0700: only this user connects
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(directory / "desk"))
            listener.listen(64)
            parent = os.getpid()
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # the child: serve until the parent goes away
                code = 0
                try:
                    _serve(listener, desk, parent)
                except BaseException:  # noqa: BLE001 - the child must never return into the parent's code
                    traceback.print_exc()
                    code = 70
                finally:
                    os._exit(code)
        except BaseException:
            listener.close()
            shutil.rmtree(directory, ignore_errors=True)
            raise
        listener.close()  # the child's copy accepts; the socket file stays until the directory goes
        handle = cls(pid, directory)
        try:
            yield handle
        finally:
            handle.stop()

    def stop(self) -> None:
        """Stop the child (a proposal under way is cut short like a crash: the branch keeps its head)."""
        if self._connection is not None and self._owner == os.getpid():
            self._connection.close()
        self._connection = None
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        shutil.rmtree(self.directory, ignore_errors=True)

    # --- serve.proposals_http.ProposalFace --------------------------------------------------------------

    def propose(self, principal: Principal, body: Any) -> dict[str, Any]:
        """`POST /v1/proposals`, judged and committed by the child."""
        return self._call("propose", principal, body)

    def record_episode(self, principal: Principal, body: Any) -> dict[str, Any]:
        """`POST /v1/episodes`, judged and committed by the child."""
        return self._call("episode", principal, body)

    def _call(self, kind: str, principal: Principal, body: Any) -> dict[str, Any]:
        if not self._lock.acquire(timeout=BUSY_WAIT):
            raise ProposalsBusy("the brain is busy with other proposals", hint="retry in a few seconds")
        try:
            request = json.dumps({"kind": kind, "name": principal.name, "actor": principal.actor, "body": body},
                                 ensure_ascii=False).encode()
            try:
                connection = self._connect()
                connection.send_bytes(request)
                answer = json.loads(connection.recv_bytes())
            except (EOFError, OSError):
                self._drop()
                raise ProposalProcessGone("the proposal process is not running; nothing was committed",
                                          hint="restart `brain serve`; its log says why it stopped") from None
        finally:
            self._lock.release()
        if "result" in answer:
            result: dict[str, Any] = answer["result"]
            return result
        if answer.get("bug"):
            raise RuntimeError(answer["message"])
        family = _BY_NAME.get(answer.get("family", ""), BrainError)
        raise family(answer["message"], hint=answer.get("hint"))

    def _connect(self) -> Connection:
        if self._connection is None or self._owner != os.getpid():
            # A forked HTTP worker never uses its parent's connection (the answers would cross).
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                client.connect(self.address)
            except OSError:
                client.close()
                raise
            self._connection, self._owner = Connection(client.detach()), os.getpid()
        return self._connection

    def _drop(self) -> None:
        if self._connection is not None and self._owner == os.getpid():
            with contextlib.suppress(OSError):
                self._connection.close()
        self._connection = None


def _serve(listener: socket.socket, desk: ProposalDesk, parent: int) -> None:
    """The child's loop: accept connections, answer one request at a time, exit when the parent is gone."""
    _die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's; it stops this child
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _yield_to_readers()
    try:
        desk.warm()  # requests wait in the socket's backlog meanwhile
    except BrainError as e:
        print(f"brain serve: warming the proposal process failed: {e.message}", file=sys.stderr)
    _collect_less()
    connections: list[Connection] = []
    while os.getppid() == parent:
        for ready in wait([listener, *connections], timeout=1.0):
            if ready is listener:
                accepted, _ = listener.accept()
                connections.append(Connection(accepted.detach()))
                continue
            assert isinstance(ready, Connection)
            try:
                request = json.loads(ready.recv_bytes())
                ready.send_bytes(json.dumps(_answer(desk, request), ensure_ascii=False).encode())
            except (EOFError, OSError, ValueError):
                connections.remove(ready)
                ready.close()


def _refusal(error: BrainError) -> dict[str, Any]:
    family = next((cls.__name__ for cls in _FAMILIES if isinstance(error, cls)), "BrainError")
    return {"family": family, "message": error.message, "hint": error.hint}


def _answer(desk: ProposalDesk, request: dict[str, Any]) -> dict[str, Any]:
    principal = Principal(name=request["name"], actor=request["actor"], scopes=frozenset())
    try:
        if request["kind"] == "propose":
            return {"result": desk.propose(principal, request["body"])}
        return {"result": desk.record_episode(principal, request["body"])}
    except BrainError as e:
        return _refusal(e)
    except Exception as e:  # noqa: BLE001 - a bug: the parent answers 500; the traceback goes to the log
        # A full disk or a read-only filesystem is the user's to fix, not a bug (nothing was committed).
        known = translate_os_error(e) if isinstance(e, OSError) else None
        if known is not None:
            return _refusal(known)
        traceback.print_exc()
        return {"bug": True, "message": f"{type(e).__name__}: {e}"}


def _yield_to_readers() -> None:
    """Let the processes that answer reads win the cores from this one.

    On a machine with fewer cores than busy processes, a proposal (tens of milliseconds of CPU) and a read
    (a few) queue for the same cores; at the same priority, a read arriving while proposals run waits its
    turn behind them, and reads' p95 grew tenfold under twenty proposing clients. Proposals may wait (their
    clients are told 429 when they cannot start in time); reads should not. So this process runs at a
    lower priority (`PROPOSAL_NICE`, which an unprivileged process may always take) and as a batch task
    (`SCHED_BATCH`: the scheduler does not let its wake-ups preempt a running reader). Measured at 10^5
    blocks on 2 shared cores (load average 6 to 9), 20 proposing clients for 30 s, interleaved: reads' p95
    365 and 449 ms at the server's priority, 244 and 293 ms at this one. The price is paid only when the
    cores are contended: a lone proposal's p50 went from 107-146 to 146-151 ms there, its CPU unchanged."""
    lower_priority(PROPOSAL_NICE)


def _collect_less() -> None:
    """Keep the cyclic garbage collector off what the warm-up read, and run its young pass less often.

    A proposal builds no reference cycles (checked with `gc.DEBUG_SAVEALL`: nothing to collect), but at
    the default threshold (700 allocations) a young pass ran every few proposals and cost tens of
    milliseconds, traversing the new 10^5-member sets and tuples a proposal makes: at 10^5 blocks, with
    twenty agents, 8.7 ms of a proposal's 66 ms mean CPU, and its p95 113 ms instead of 65 ms. The warm-up's
    objects (the served modules, their trees and sets) are moved out of the collector's sight for good
    (`gc.freeze`: they are still freed when unreferenced), and the young pass waits for `GC_YOUNG`
    allocations; a cycle (an exception's traceback) is still collected, a little later."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG, middle, old)


def _die_with(parent: int) -> None:
    """Ask the kernel to SIGKILL this child when the parent exits (Linux), and exit now if it already did."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(0)
