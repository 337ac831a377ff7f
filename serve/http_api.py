"""`brain serve --http HOST:PORT`: the brain's read-only face over HTTP (standard library server).

Routes (GET only; every other method is 405, so no write route exists):
`/healthz`, `/v1/status`, `/v1/search?q=…&limit=K&type=T&include_superseded=1` (also `subject`, `since`,
`until`, `expand=0`), `/v1/context?q=…&max_tokens=N`, `/v1/blocks/{id}`, `/v1/blocks/{id}/proof`,
`/v1/sources/{id}/view?locator=L`.
Bodies are the JSON of the CLI's `--json`; errors are `{"error": message, "hint": hint}` with 400 (bad
input), 401 (token), 404, 405, 409 or 503 (brain unreadable). With `--token-file`, every route needs
`Authorization: Bearer <token>`; a non-loopback bind is refused without one. Each request brings the index
to the head before it reads, inside one read transaction: a request sees one snapshot, never a mix.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import re
import signal
import socket
import sys
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from brain.errors import (
    BrainError,
    BrainUnreadableError,
    ConflictError,
    NotFoundError,
    UsageError,
)
from brain.store.user_files import read_user_file
from serve.face import BrainFace

MAX_TOKEN_BYTES = 4096
_ID = re.compile(r"^(?:sha256:)?[0-9a-f]{4,64}$")
_TRUE = frozenset({"1", "true", "yes"})
_FALSE = frozenset({"0", "false", "no"})


class HttpError(Exception):
    """An answer other than 200, with its JSON body."""

    def __init__(self, status: HTTPStatus, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint


def parse_bind(text: str) -> tuple[str, int]:
    """`HOST:PORT` (IPv6 as `[::1]:PORT`) → (host, port); raises `UsageError`."""
    match = re.fullmatch(r"\[(?P<v6>[^\]]+)\]:(?P<port>\d{1,5})|(?P<host>[^:\[\]]*):(?P<port4>\d{1,5})", text)
    if match is None:
        raise UsageError(f"invalid --http address {text!r}", hint="use HOST:PORT, e.g. 127.0.0.1:8742")
    host = match.group("v6") or match.group("host") or ""
    port = int(match.group("port") or match.group("port4"))
    if not 0 <= port <= 65535:
        raise UsageError(f"invalid port {port} in {text!r}")
    return host, port


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine (a loopback address, or `localhost`)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(path: Path) -> str:
    """The bearer token in `path` (surrounding whitespace ignored); refuses an empty or huge file."""
    try:
        data = read_user_file(path, "--token-file", MAX_TOKEN_BYTES)
    except FileNotFoundError:
        raise UsageError(f"--token-file {path} does not exist") from None
    token = data.decode("utf-8", errors="replace").strip()
    if not token or any(c.isspace() for c in token):
        raise UsageError(f"--token-file {path} must hold one token (no spaces, at most {MAX_TOKEN_BYTES} bytes)")
    return token


def _flag(values: dict[str, list[str]], name: str, default: bool) -> bool:
    if name not in values:
        return default
    value = values[name][-1].lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise HttpError(HTTPStatus.BAD_REQUEST, f"{name} must be 1 or 0, got {value!r}")


def _one(values: dict[str, list[str]], name: str) -> str | None:
    found = values.get(name)
    return found[-1] if found else None


def _block_id(segment: str) -> str:
    text = unquote(segment)
    if not _ID.match(text):
        raise HttpError(HTTPStatus.BAD_REQUEST, f"{text[:80]!r} is not a block id",
                        "give a block id or a prefix of at least 4 hex digits")
    return text


class Routes:
    """URL → answer; pure dispatch over a `BrainFace` (no sockets)."""

    def __init__(self, face: BrainFace) -> None:
        self.face = face

    def get(self, target: str) -> Any:
        """The JSON answer for a GET of `target` (path and query); raises `HttpError` or `BrainError`."""
        parts = urlsplit(target)
        values = parse_qs(parts.query, keep_blank_values=True, max_num_fields=64)
        segments = parts.path.split("/")[1:]
        if ".." in segments or any("/" in unquote(s) or "\\" in unquote(s) for s in segments):
            raise HttpError(HTTPStatus.BAD_REQUEST, "path traversal is not allowed")
        match segments:
            case ["healthz"]:
                return {"status": "ok"}
            case ["v1", "status"]:
                return self.face.status()
            case ["v1", "search"]:
                return self._search(values)
            case ["v1", "context"]:
                return self._context(values)
            case ["v1", "blocks", block]:
                return self.face.show(_block_id(block))
            case ["v1", "blocks", block, "proof"]:
                return self.face.prove(_block_id(block))
            case ["v1", "sources", source, "view"]:
                return self.face.cat(_block_id(source), _one(values, "locator"))
        raise HttpError(HTTPStatus.NOT_FOUND, f"no route {parts.path[:100]!r}",
                        "see /v1/search, /v1/blocks/{id}, /v1/sources/{id}/view, /v1/status")

    def _search(self, values: dict[str, list[str]]) -> Any:
        limit_text = _one(values, "limit")
        try:
            limit = int(limit_text) if limit_text is not None else 10
        except ValueError:
            raise HttpError(HTTPStatus.BAD_REQUEST, f"limit must be an integer, got {str(limit_text)[:20]!r}") from None
        return self.face.search(
            _one(values, "q") or "",
            limit=limit,
            types=values.get("type", []),
            include_superseded=_flag(values, "include_superseded", False),
            subject=_one(values, "subject"),
            since=_one(values, "since"),
            until=_one(values, "until"),
            expand=_flag(values, "expand", True),
        )


    def _context(self, values: dict[str, list[str]]) -> Any:
        budget_text = _one(values, "max_tokens")
        try:
            budget = int(budget_text) if budget_text is not None else 2000
        except ValueError:
            raise HttpError(HTTPStatus.BAD_REQUEST,
                            f"max_tokens must be an integer, got {str(budget_text)[:20]!r}") from None
        return self.face.context(_one(values, "q") or "", budget, types=values.get("type", []),
                                 include_superseded=_flag(values, "include_superseded", False))


def _status_of(error: BrainError) -> HTTPStatus:
    if isinstance(error, UsageError):
        return HTTPStatus.BAD_REQUEST
    if isinstance(error, NotFoundError):
        return HTTPStatus.NOT_FOUND
    if isinstance(error, ConflictError):
        return HTTPStatus.CONFLICT
    if isinstance(error, BrainUnreadableError):
        return HTTPStatus.SERVICE_UNAVAILABLE
    return HTTPStatus.UNPROCESSABLE_ENTITY


def make_handler(routes: Routes, token: str | None) -> type[BaseHTTPRequestHandler]:
    """The request handler class for one server."""
    expected = None if token is None else f"Bearer {token}".encode()

    class Handler(BaseHTTPRequestHandler):
        server_version = "brain-serve"
        sys_version = ""
        protocol_version = "HTTP/1.1"
        # Headers and body leave in separate writes: without TCP_NODELAY, Nagle's algorithm holds the body
        # until the client's delayed ACK (40 ms on Linux) on every keep-alive request.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: an agent's requests are not worth a line each on stderr."""

        def do_GET(self) -> None:
            """Authenticate, route, answer JSON."""
            if expected is not None:
                given = (self.headers.get("Authorization") or "").encode()
                if not hmac.compare_digest(given, expected):
                    self._send(HTTPStatus.UNAUTHORIZED, {"error": "missing or wrong bearer token"},
                               {"WWW-Authenticate": 'Bearer realm="brain"'})
                    return
            try:
                body = routes.get(self.path)
                self._send(HTTPStatus.OK, body)
            except HttpError as e:
                self._send(e.status, {"error": e.message, "hint": e.hint})
            except BrainError as e:
                self._send(_status_of(e), {"error": e.message, "hint": e.hint})
            except Exception as e:  # noqa: BLE001 - a bug: answer it, keep serving, and say so on stderr
                print(f"brain serve: internal error on {self.path[:200]!r}: {type(e).__name__}: {e}", file=sys.stderr)
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal error (a bug); see the server's log"})

        def _refuse(self) -> None:
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{self.command} is not allowed: this server is "
                                                      "read-only"}, {"Allow": "GET"})

        do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _refuse

        def _send(self, status: HTTPStatus, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

    return Handler


class BrainHTTPServer(ThreadingHTTPServer):
    """A threading server whose worker threads do not keep the process alive."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    parent_pid: int | None = None  # set in a forked worker: it stops when its parent is gone

    def service_actions(self) -> None:
        """Between requests: a worker whose parent died (even by SIGKILL) exits instead of serving on."""
        if self.parent_pid is not None and os.getppid() != self.parent_pid:
            os._exit(0)


class BrainHTTPServerV6(BrainHTTPServer):
    """The same on an IPv6 address."""

    address_family = socket.AF_INET6


def start(face: BrainFace, bind: str, token_file: Path | None, app: HandlerFactory | None = None) -> BrainHTTPServer:
    """Bind (refusing a non-loopback address without a token) and return the server, not yet serving.

    `app` (`serve.proposals_http`: tokens, proposals, the UI) builds the handler instead, given the routes
    and the `--token-file` token; it says whether it requires tokens."""
    host, port = parse_bind(bind)
    token = read_token(token_file) if token_file is not None else None
    if token is None and not is_loopback(host) and not (app is not None and app.protected):
        raise UsageError(f"binding {host or 'every interface'} exposes the brain to the network",
                         hint="pass --token-file PATH or --tokens FILE, or bind 127.0.0.1")
    server_class = BrainHTTPServerV6 if ":" in host else BrainHTTPServer
    handler = make_handler(Routes(face), token) if app is None else app.handler(Routes(face), token)
    try:
        return server_class((host, port), handler)
    except OSError as e:
        raise ConflictError(f"cannot listen on {bind}: {e.strerror or e}") from None


class HandlerFactory(Protocol):
    """Builds the request handler in place of `make_handler` (see `start`)."""

    @property
    def protected(self) -> bool:
        """Every request needs a token: a non-loopback bind is allowed."""
        ...

    @property
    def writes(self) -> bool:
        """Proposals are accepted (said when the server starts)."""
        ...

    def handler(self, routes: Routes, token: str | None) -> type[BaseHTTPRequestHandler]:
        """The handler class for one server."""
        ...


def serve_http(
    face: BrainFace, bind: str, token_file: Path | None, note: Callable[[str], None], workers: int = 1,
    app: HandlerFactory | None = None,
) -> None:
    """Serve until interrupted, in `workers` processes sharing the listening socket (threads in each).

    One Python process runs one request's Python at a time; forked workers put every core to use. They are
    forked before any index connection or cache exists (each warms its own) and exit when the parent does.
    """
    server = start(face, bind, token_file, app)
    host, port = str(server.server_address[0]), server.server_address[1]
    plural = f" in {workers} processes" if workers > 1 else ""
    mode = "with proposals" if app is not None and app.writes else "read-only"
    note(f"serving {face.brain_path} {mode} on http://{host}:{port}{plural} (Ctrl-C to stop)")
    if workers <= 1:
        try:
            server.serve_forever()
        finally:
            server.server_close()
        return
    parent = os.getpid()
    # The workers share one listening socket, and every one of them wakes for each connection: a blocking
    # accept() would park all but the winner inside the kernel, where they could never notice their parent
    # is gone. Non-blocking, the losers get EAGAIN (socketserver drops it) and return to their checks.
    server.socket.setblocking(False)
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: serve until the parent goes away
            server.parent_pid = parent
            try:
                server.serve_forever(poll_interval=0.5)
            finally:
                os._exit(0)
        children.append(pid)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        for pid in children:
            os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGTERM, previous)
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        for pid in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        server.server_close()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
