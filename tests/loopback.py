"""A threading HTTP server for the tests' loopback fakes (LLM, embeddings, registry proxies) that leaves no
thread behind once closed.

`http.server.ThreadingHTTPServer` serves each connection on a daemon thread that nobody joins: a handler
that sleeps for a scripted delay, or waits on a keep-alive connection its client never closed, outlives its
test. The next test in the same worker then sees a second thread and `brain.concurrency.can_fork` refuses,
so a test that checks a forked helper took part fails, depending on which tests ran before it.

`close()` stops accepting, wakes every scripted wait (`closing`), shuts down the sockets of the open
connections (a handler blocked on a read gets EOF) and joins every handler thread.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JOIN_TIMEOUT = 10.0
_HANDLER = "process_request_thread"  # how socketserver names the thread of one connection


class LoopbackServer(ThreadingHTTPServer):
    """A `ThreadingHTTPServer` on 127.0.0.1 (an ephemeral port), served from a thread, joined on `close()`."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1") -> None:
        super().__init__((host, 0), handler)
        self.closing = threading.Event()
        """Set by `close()`: a handler's scripted delay is `server.closing.wait(seconds)`, never `time.sleep`."""
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._serving = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self.server_address[1])

    def start(self) -> LoopbackServer:
        """Serve from a background thread; returns the server."""
        self._serving.start()
        return self

    def process_request(self, request: Any, client_address: Any) -> None:
        """Remember the connection until its handler is done, so `close()` can end it."""
        with self._lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        """The connection is done: forget it."""
        with self._lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close(self) -> None:
        """Stop serving, end every open connection and join every thread the server started."""
        self.closing.set()
        if self._serving.is_alive():
            self.shutdown()
        with self._lock:
            still_open = list(self._open)
        for connection in still_open:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self.server_close()  # joins the handler threads (block_on_close)
        self._serving.join(timeout=JOIN_TIMEOUT)


def handler_threads_left(grace: float = 2.0) -> list[str]:
    """The names of connection-handler threads still alive after `grace` seconds (a thread about to end may)."""
    deadline = time.monotonic() + grace
    while True:
        left = [thread.name for thread in threading.enumerate() if _HANDLER in thread.name]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.02)
