"""`brain serve --http HOST:PORT`: the brain's read-only face over HTTP (standard library server).

Routes (GET only; every other method is 405, so no write route exists):
`/healthz`, `/v1/status`, `/v1/search?q=…&limit=K&type=T&include_superseded=1` (also `subject`, `since`,
`until`, `expand=0`, `tag=T`: repeatable, every tag), `/v1/context?q=…&max_tokens=N` (also `type`, `tag`),
`/v1/blocks/{id}`, `/v1/blocks/{id}/proof`, `/v1/sources/{id}/view?locator=L`.
Bodies are the JSON of the CLI's `--json`; errors are `{"error": message, "hint": hint}` with 400 (bad
input), 401 (token), 404, 405, 409, 414 and 431 (request line or headers too long), 421 (a foreign Host
on the tokenless server), 503 (brain unreadable, or too many connections). With `--token-file`, every route
needs `Authorization: Bearer <token>`; a non-loopback bind is refused without one. Each request brings the
index to the head before it reads, inside one read transaction: a request sees one snapshot, never a mix.

The request-handling framework (`make_handler`, `BrainHTTPServer`) checks every request before any route
sees it: time and connection limits, the Host header, the token (`serve.http_limits`); every error, even
one the standard library raises while parsing, is the same JSON.
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
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from brain.brain import Brain
from brain.errors import (
    BrainError,
    BrainUnreadableError,
    ConflictError,
    NotFoundError,
    UsageError,
)
from brain.store.user_files import read_user_file
from serve.face import BrainFace
from serve.http_limits import (
    MAX_CONNECTIONS,
    MAX_QUERY_FIELDS,
    TimedReader,
    bearer_token,
    host_allowed,
    linger,
    parse_query,
    public_text,
    turn_away,
)

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
        try:
            values = parse_query(parts.query)
        except ValueError:
            raise HttpError(HTTPStatus.BAD_REQUEST, f"more than {MAX_QUERY_FIELDS} query fields",
                            "send only the documented fields (q, limit, type, subject, since, until, ...)") from None
        segments = parts.path.split("/")[1:]
        if ".." in segments or any("/" in unquote(s) or "\\" in unquote(s) for s in segments):
            raise HttpError(HTTPStatus.BAD_REQUEST, "path traversal is not allowed")
        match segments:
            case ["healthz"]:
                return _health(self.face)
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
            tags=values.get("tag", []),
        )

    def _context(self, values: dict[str, list[str]]) -> Any:
        budget_text = _one(values, "max_tokens")
        try:
            budget = int(budget_text) if budget_text is not None else 2000
        except ValueError:
            raise HttpError(HTTPStatus.BAD_REQUEST,
                            f"max_tokens must be an integer, got {str(budget_text)[:20]!r}") from None
        return self.face.context(_one(values, "q") or "", budget, types=values.get("type", []),
                                 include_superseded=_flag(values, "include_superseded", False),
                                 tags=values.get("tag", []))


def _health(face: BrainFace) -> dict[str, str]:
    """`/healthz`: ok only while the brain opens and its head snapshot reads (503 otherwise)."""
    try:
        Brain.open(face.brain_path).snapshot()
    except BrainError as e:
        raise HttpError(HTTPStatus.SERVICE_UNAVAILABLE, f"unhealthy: {e.message}", e.hint) from None
    return {"status": "ok"}


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


_ERROR_HINTS = {
    HTTPStatus.REQUEST_URI_TOO_LONG: "the request line is limited to 64 KiB: shorten the query",
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: "at most 100 headers of at most 64 KiB each",
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: "speak HTTP/1.0 or HTTP/1.1",
    HTTPStatus.BAD_REQUEST: "send an HTTP/1.1 request, e.g. GET /v1/search?q=words HTTP/1.1",
}
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")



class BrainRequestHandler(BaseHTTPRequestHandler):
    """The framework every route runs in: limits, admission (Host, token), JSON errors; `make_handler` binds it."""

    routes: Routes
    token: str | None = None
    server_version = "brain-serve"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.0"  # an error found before the version is read still gets a status line
    # Headers and body leave in separate writes: without TCP_NODELAY, Nagle's algorithm holds the body
    # until the client's delayed ACK (40 ms on Linux) on every keep-alive request.
    disable_nagle_algorithm = True
    rfile: Any  # a TimedReader over the socket's buffered reader (see setup)
    raw_requestline: bytes

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: an agent's requests are not worth a line each on stderr."""

    def setup(self) -> None:
        """Every read of this connection is time-bounded (`serve.http_limits.TimedReader`)."""
        super().setup()
        self.rfile = TimedReader(self.rfile, self.connection)

    def handle_one_request(self) -> None:
        """One request; the wait for it is bounded by the idle time."""
        self.rfile.next_request()
        self.request_version = self.command = ""
        super().handle_one_request()
        unread = self.rfile.unread(getattr(self, "headers", None))
        if unread:  # answered without reading the body: the next bytes are not a request
            self.close_connection = True
            linger(self.connection, unread)

    def parse_request(self) -> bool:
        """Parse the request line and headers, then admit the request (Host, token) or answer why not."""
        if len(self.raw_requestline.split()) == 2:  # HTTP/0.9: no version, and no headers will ever follow
            self.request_version, self.close_connection = "HTTP/0.9", True
            self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, "HTTP/0.9 is not supported")
            return False
        if not super().parse_request():
            return False
        self.rfile.head_read()
        return self._admit()

    def is_open(self) -> bool:
        """No token of any kind is configured: the server is loopback-only and answers to its own names only."""
        return self.token is None

    def _admit(self) -> bool:
        try:
            parse_query(urlsplit(self.path).query)
        except ValueError:
            self._error(HTTPStatus.BAD_REQUEST, f"more than {MAX_QUERY_FIELDS} query fields",
                        "send only the documented fields (q, limit, type, subject, since, until, ...)")
            return False
        token = self.token
        if self.is_open():
            address: Any = self.server.server_address
            host, port = str(address[0]), int(address[1])
            hosts = self.headers.get_all("Host") or []
            if len(hosts) > 1 or not host_allowed(hosts[0] if hosts else None, port, host):
                self._error(HTTPStatus.MISDIRECTED_REQUEST, "this server answers only to its own names "
                            "(localhost, 127.0.0.1, [::1])", f"connect to http://127.0.0.1:{port}/; a page of "
                            "another site cannot use it (DNS rebinding)", close=True)
                return False
        elif token is not None and not hmac.compare_digest(
                (bearer_token(self.headers.get("Authorization")) or "").encode(), token.encode()):
            self._error(HTTPStatus.UNAUTHORIZED, "missing or wrong bearer token",
                        "send Authorization: Bearer <the token in --token-file>",
                        headers={"WWW-Authenticate": 'Bearer realm="brain"'})
            return False
        return True

    def do_GET(self) -> None:
        """Route and answer JSON (the request was admitted by `parse_request`)."""
        try:
            body = self.routes.get(self.path)
            self._send(HTTPStatus.OK, body)
        except HttpError as e:
            self._error(e.status, e.message, e.hint)
        except BrainError as e:
            self._error(_status_of(e), e.message, e.hint)
        except Exception as e:  # noqa: BLE001 - a bug: answer it, keep serving, and say so on stderr
            print(f"brain serve: internal error on {self.path[:200]!r}: {type(e).__name__}: {e}", file=sys.stderr)
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error (a bug)", "see the server's log")

    def _refuse(self) -> None:
        allowed = self._allowed()
        why = "this server is read-only" if allowed == "GET" else "not here"
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, f"{self.command[:20]} is not allowed: {why}",
                    f"this server answers {allowed}", headers={"Allow": allowed})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_TRACE = do_CONNECT = _refuse

    def _allowed(self) -> str:
        """The methods this handler answers (those with a `do_` method of their own)."""
        refuse = BrainRequestHandler._refuse
        return ", ".join(m for m in _METHODS if getattr(type(self), f"do_{m}", refuse) is not refuse)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors the standard library raises while parsing (400, 414, 431, 501, 505) as our JSON."""
        status = HTTPStatus(code)
        if status == HTTPStatus.NOT_IMPLEMENTED:  # a method no `do_` handles
            self._refuse()
            return
        self._error(status, (message or status.phrase)[:200], _ERROR_HINTS.get(status), close=True)

    def _error(self, status: HTTPStatus, message: str, hint: str | None, *, close: bool = False,
               headers: dict[str, str] | None = None) -> None:
        body = {"error": message, "hint": hint}
        extra = dict(headers or {})
        if close:
            extra["Connection"] = "close"
        self._send(status, body, extra)

    def _send(self, status: HTTPStatus, body: Any, headers: dict[str, str] | None = None) -> None:
        if status >= 400 and isinstance(body, dict):  # every route's errors: never the brain's absolute path
            brain_path = self.routes.face.brain_path
            body = {k: public_text(v, brain_path) if isinstance(v, str) else v for k, v in body.items()}
            body.setdefault("hint", None)
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        extra = dict(headers or {})
        if self.rfile.unread(getattr(self, "headers", None)):
            extra["Connection"] = "close"  # the body is not read: this connection ends with this answer
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


def make_handler(routes: Routes, token: str | None) -> type[BaseHTTPRequestHandler]:
    """The request handler class for one server."""
    return type("Handler", (BrainRequestHandler,), {"routes": routes, "token": token})


class BrainHTTPServer(ThreadingHTTPServer):
    """A threading server whose worker threads do not keep the process alive."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    parent_pid: int | None = None  # set in a forked worker: it stops when its parent is gone
    max_connections = MAX_CONNECTIONS
    _open = 0
    _count = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection in a thread, or answer 503 and close it when `max_connections` are open."""
        with self._count:
            full = self._open >= self.max_connections
            if not full:
                self._open += 1
        if full:
            turn_away(request, json.dumps({"error": "too many open connections",
                                           "hint": "retry in a second; reuse one keep-alive connection"}).encode())
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """The thread of one connection; it frees its place when done."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release()

    def _release(self) -> None:
        with self._count:
            self._open -= 1

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection failed: a client that went away is not news; anything else is one line, no traceback."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        print(f"brain serve: connection from {client_address[0]} failed: {type(error).__name__}: {error}"[:300],
              file=sys.stderr)

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

    def serving(self) -> contextlib.AbstractContextManager[None]:
        """Around the server's whole life, entered before it binds, starts a thread or forks a worker (the
        proposals' own process is forked there: `serve.proposals_process`)."""
        ...

    def started(self) -> None:
        """In each process that answers requests (every forked worker, or the one process), as it starts to:
        begin reading in the background what its first answers need (each process has its own caches)."""
        ...


def serve_http(
    face: BrainFace, bind: str, token_file: Path | None, note: Callable[[str], None], workers: int = 1,
    app: HandlerFactory | None = None,
) -> None:
    """Serve until interrupted, in `workers` processes sharing the listening socket (threads in each).

    One Python process runs one request's Python at a time; forked workers put every core to use. They are
    forked before any index connection or cache exists (each warms its own) and exit when the parent does.
    """
    with contextlib.nullcontext() if app is None else app.serving():
        _serve_http(face, bind, token_file, note, workers, app)


def _serve_http(
    face: BrainFace, bind: str, token_file: Path | None, note: Callable[[str], None], workers: int,
    app: HandlerFactory | None,
) -> None:
    server = start(face, bind, token_file, app)
    host, port = str(server.server_address[0]), server.server_address[1]
    plural = f" in {workers} processes" if workers > 1 else ""
    mode = "with proposals" if app is not None and app.writes else "read-only"
    note(f"serving {face.brain_path} {mode} on http://{host}:{port}{plural} (Ctrl-C to stop)")
    if workers <= 1:
        if app is not None:
            app.started()
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
                if app is not None:
                    app.started()
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
