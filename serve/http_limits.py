"""The limits of `brain serve --http`, below the routes: time, connections, names, credentials, what leaks.

`serve.http_api` wires these into its request handler and server, so every route (today's GETs, and any
route added later) inherits them without doing anything:

- time: a connection may sit idle `IDLE_TIMEOUT` seconds (between requests, or between two reads of one
  request), and a request's line and headers must all arrive within `HEAD_DEADLINE` of its first byte, so
  a slowloris client holds a connection for seconds, not forever; a response must leave within
  `WRITE_TIMEOUT`;
- connections: at most `MAX_CONNECTIONS` open per worker process; one more is answered 503 and closed;
- names: without a token the server is loopback-only, so it answers only to its own host names
  (`localhost`, `127.0.0.1`, `[::1]`, the bound address; with its port or none): a page on another site
  that rebinds its DNS name to 127.0.0.1 gets 421, not the brain;
- credentials: `Authorization: Bearer <token>`, the scheme in any case (RFC 7235);
- leaks: error bodies never carry the brain's absolute path (`public_text`);
- refused bodies: a response sent before the request's body was read (a 401, 405, 413, 429) closes the
  connection, and the close lingers (`linger`): the server stops writing, then reads and drops up to
  `LINGER_BYTES` for up to `LINGER_SECONDS`, so the client finishes sending and reads the answer instead
  of a reset (closing a socket with unread bytes sends RST, which can destroy the answer in flight).
"""

from __future__ import annotations

import contextlib
import re
import socket
import time
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import parse_qs

IDLE_TIMEOUT = 5.0
HEAD_DEADLINE = 10.0
WRITE_TIMEOUT = 30.0
MAX_CONNECTIONS = 128
MAX_QUERY_FIELDS = 64
LINGER_SECONDS = 2.0
LINGER_BYTES = 8 * 1024 * 1024
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
_HOST = re.compile(r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(?P<port>\d{1,5}))?")


class TimedReader:
    """A connection's read side with the time limits above (wraps the handler's `rfile`)."""

    def __init__(self, raw: BinaryIO, connection: socket.socket) -> None:
        self._raw = raw
        self._connection = connection
        self._deadline: float | None = None
        self._body_read: int | None = None  # None until the request's head is in

    def next_request(self) -> None:
        """Waiting for a new request: idle time only, until its first line arrives."""
        self._deadline = None
        self._body_read = None

    def head_read(self) -> None:
        """The request's head is in: reads of a body wait `IDLE_TIMEOUT` each; the answer gets `WRITE_TIMEOUT`."""
        self._deadline = None
        self._body_read = 0
        self._connection.settimeout(WRITE_TIMEOUT)

    def unread(self, headers: Any) -> int:
        """Bytes of this request's body not read (yet): the declared length less what was read.

        A chunked body (never read here) or a length that is not a number counts as `LINGER_BYTES`.
        """
        if self._body_read is None or headers is None:
            return 0
        if headers.get("Transfer-Encoding") is not None:
            return LINGER_BYTES
        length = headers.get("Content-Length")
        if length is None:
            return 0
        if not length.strip().isdigit():
            return LINGER_BYTES
        return max(0, int(length) - self._body_read)

    def _arm(self) -> None:
        if self._deadline is None:
            self._connection.settimeout(IDLE_TIMEOUT)
            return
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request's headers took too long")
        self._connection.settimeout(min(IDLE_TIMEOUT, left))

    def readline(self, limit: int = -1) -> bytes:
        """One line, within the limits."""
        waiting = self._deadline is None
        self._arm()
        line = self._raw.readline(limit)
        if waiting and line:
            self._deadline = time.monotonic() + HEAD_DEADLINE
        return line

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes, within the limits."""
        self._arm()
        data = self._raw.read(size)
        if self._body_read is not None:
            self._body_read += len(data)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def parse_query(query: str) -> dict[str, list[str]]:
    """The query string's fields; more than `MAX_QUERY_FIELDS` is a `ValueError` (the caller answers 400)."""
    return parse_qs(query, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS)


def host_allowed(value: str | None, port: int, bound: str) -> bool:
    """Whether a `Host` header names this loopback server: one of its own names, with its port or none."""
    if value is None:
        return True  # HTTP/1.0 clients may send none; a browser (the rebinding risk) always sends one
    match = _HOST.fullmatch(value.strip())
    if match is None:
        return False
    if match.group("port") is not None and int(match.group("port")) != port:
        return False
    own = f"[{bound}]" if ":" in bound else bound
    return match.group("name").lower() in LOOPBACK_NAMES | {own.lower()}


def bearer_token(value: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (scheme in any case), else None."""
    scheme, _, token = (value or "").strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def public_text(text: str | None, brain_path: Path) -> str | None:
    """`text` for an HTTP client: the brain's absolute path (as given and resolved) becomes `<brain>`."""
    if text is None:
        return None
    for path in sorted({str(brain_path.absolute()), str(brain_path.resolve())}, key=len, reverse=True):
        text = text.replace(path, "<brain>")
    return text


def turn_away(connection: socket.socket, body: bytes) -> None:
    """Answer a connection over the cap with a 503 and close it, without reading its request."""
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    ).encode()
    with contextlib.suppress(OSError):
        connection.settimeout(1.0)
        connection.sendall(head + body)


def linger(connection: socket.socket, unread: int) -> None:
    """Close a connection whose request body was left unread without resetting it.

    The answer is already written. Stop writing (the client sees the end of the answer), then read and drop
    what the client still sends, up to `unread` bytes (at most `LINGER_BYTES`) and `LINGER_SECONDS`: a client
    sends its whole body before it reads, and a close with unread bytes would reset the connection under it.
    A client that sends more, or more slowly, is cut off when the budget runs out.
    """
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + LINGER_SECONDS
        left = min(unread, LINGER_BYTES)
        while left > 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            connection.settimeout(remaining)
            chunk = connection.recv(min(65536, left))
            if not chunk:
                return
            left -= len(chunk)
