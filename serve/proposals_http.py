"""The write face and the review UI over HTTP: tokens, scopes, rate limits, `POST /v1/proposals|episodes`, `/ui/`.

A thin adapter: it authenticates, bounds and parses the request, then calls `serve.proposals.ProposalDesk`
(the use case) or `serve.ui` (the pages); the read routes stay `serve.http_api.Routes`'. Answers:

| status | when |
|---|---|
| 401 | no bearer token, or one the tokens file does not hold |
| 403 | the token lacks the scope (`read` for GET and the UI, `propose` for POST) |
| 411 / 413 | a POST without `Content-Length` (or chunked) / a body over 1 MiB |
| 415 | a POST whose `Content-Type` is not `application/json` |
| 400 | a body that is not strict JSON (§1.4) or not the documented shape: the reason is in `error` |
| 429 | the token's bucket is empty, or the brain is busy (a proposal could not start within 5 s); see `Retry-After` |
| 503 | the proposal process is not running (`serve.proposals_process`): nothing was committed |
"""

from __future__ import annotations

import contextlib
import hmac
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from brain.errors import (
    BrainError,
    CanonicalFormError,
    ConflictError,
    LocalStorageError,
    LockTimeoutError,
    NotFoundError,
    UsageError,
)
from brain.identity import parse_strict
from serve.http_api import HttpError, Routes, is_loopback, make_handler
from serve.http_limits import bearer_token
from serve.proposals import ProposalDesk
from serve.proposals_process import DeskProcess, ProposalProcessGone
from serve.tokens import Principal, RateLimiter, Scope, TokenTable

MAX_BODY_BYTES = 1 << 20
LEGACY_TOKEN = "token-file"  # the principal name of the single `--token-file` token (read only)
READ, PROPOSE = "read", "propose"


@dataclass(frozen=True)
class Access:
    """Who may call: the tokens file's table, the legacy `--token-file` secret, and the rate limits."""

    table: TokenTable | None
    legacy_token: str | None
    limiter: RateLimiter | None

    @property
    def open(self) -> bool:
        """No token of any kind configured: reads are open (loopback only; `http_api.start` enforces it)."""
        return self.table is None and self.legacy_token is None

    def principal(self, authorization: str | None, query_token: str | None) -> Principal | None:
        """The caller, from `Authorization: Bearer` or (the UI on loopback) a `?token=` secret."""
        if self.table is not None:
            found = self.table.principal(authorization)
            if found is None and query_token is not None:
                found = self.table.by_secret(query_token)
            if found is not None:
                return found
        if self.legacy_token is not None:
            given = bearer_token(authorization) or query_token or ""
            if hmac.compare_digest(given.encode(), self.legacy_token.encode()):
                return Principal(name=LEGACY_TOKEN, actor="brain/token-file", scopes=frozenset({Scope.READ}))
        return None


class ProposalFace(Protocol):
    """What the POST routes call (satisfied by `serve.proposals.ProposalDesk`)."""

    def propose(self, principal: Principal, body: Any) -> dict[str, Any]:
        """Judge and commit `{"candidates": [...]}`; raises `BadProposal` on a wrong shape."""
        ...

    def record_episode(self, principal: Principal, body: Any) -> dict[str, Any]:
        """Judge and commit one episode."""
        ...


Page = Callable[[str, dict[str, list[str]], Principal | None], tuple[HTTPStatus, str, str]]
"""The UI: (path, query, caller) → (status, content type, body)."""


class _Answered(Exception):
    """The request was answered with an error already."""


class _WriteHandler:
    """Mixed in before `serve.http_api.make_handler`'s class: tokens, scopes, limits, POST routes, `/ui/`."""

    access: Access
    desk: ProposalFace | None
    ui: Page | None
    # What the base handler (BaseHTTPRequestHandler and http_api's class) provides:
    path: str
    command: str
    headers: Any
    rfile: Any
    wfile: Any
    client_address: Any
    close_connection: bool
    _send: Callable[..., None]
    _refuse: Callable[[], None]
    send_response: Callable[..., None]
    send_header: Callable[[str, str], None]
    end_headers: Callable[[], None]

    def is_open(self) -> bool:
        """No token of any kind (`serve.http_api` then answers only to the server's own host names)."""
        return self.access.open

    def _allowed(self) -> str:
        """POST only where proposals are accepted (the `Allow` of a 405)."""
        return "GET, POST" if self.desk is not None else "GET"

    def do_GET(self) -> None:
        """Authenticate (`read`), then the UI or the read routes."""
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True, max_num_fields=64)
        is_ui = parts.path == "/ui" or parts.path.startswith("/ui/")
        query_token = _one(query, "token") if is_ui and self._from_loopback() else None
        try:
            principal = self._caller(Scope.READ, READ, query_token)
        except _Answered:
            return
        if not is_ui:
            super().do_GET()  # type: ignore[misc]
            return
        if self.ui is None:
            self._send(HTTPStatus.NOT_FOUND, {"error": "the review UI is not served here"})
            return
        try:
            status, content_type, text = self.ui(parts.path, query, principal)
        except HttpError as e:
            status, content_type, text = e.status, "text/plain; charset=utf-8", e.message
        except BrainError as e:
            status, content_type, text = _status(e), "text/plain; charset=utf-8", e.message
        except Exception as e:  # noqa: BLE001 - a bug: answer it, keep serving, and say so on stderr
            print(f"brain serve: internal error on {parts.path[:200]!r}: {type(e).__name__}: {e}", file=sys.stderr)
            status, content_type, text = (HTTPStatus.INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                                          "internal error (a bug); see the server's log")
        self._send_text(status, content_type, text)

    def do_POST(self) -> None:
        """Authenticate (`propose`), bound and parse the body, hand it to the desk."""
        path = urlsplit(self.path).path
        desk = self.desk
        if desk is None or path not in ("/v1/proposals", "/v1/episodes"):
            self._refuse()
            return
        try:
            principal = self._caller(Scope.PROPOSE, PROPOSE, None)
        except _Answered:
            return
        assert principal is not None  # open access refuses proposals; `--allow-propose` requires tokens
        try:
            body = self._json_body()
            answer = desk.propose(principal, body) if path == "/v1/proposals" else desk.record_episode(principal, body)
        except HttpError as e:
            self._send(e.status, {"error": e.message, "hint": e.hint})
            return
        except LockTimeoutError as e:  # saturated: back off like a rate limit (nothing was written)
            self._send(HTTPStatus.TOO_MANY_REQUESTS, {"error": e.message, "hint": e.hint},
                       {"Retry-After": RateLimiter.retry_after(2.0)})
            return
        except BrainError as e:
            self._send(_status(e), {"error": e.message, "hint": e.hint})
            return
        except Exception as e:  # noqa: BLE001 - a bug: answer it, keep serving, and say so on stderr
            print(f"brain serve: internal error on POST {path!r}: {type(e).__name__}: {e}", file=sys.stderr)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal error (a bug); see the server's log"})
            return
        self._send(HTTPStatus.OK, answer)

    # --- helpers ---------------------------------------------------------------------------------------

    def _from_loopback(self) -> bool:
        return is_loopback(str(self.client_address[0]))

    def _caller(self, scope: Scope, kind: str, query_token: str | None) -> Principal | None:
        """The authenticated caller (None when access is open); raises `_Answered` once an error was sent."""
        access = self.access
        if access.open:
            if scope is Scope.PROPOSE:
                self._send(HTTPStatus.FORBIDDEN, {"error": "proposals need a token with the propose scope"})
                raise _Answered
            return None
        principal = access.principal(self.headers.get("Authorization"), query_token)
        if principal is None:
            hint = "send Authorization: Bearer <a token of --tokens or --token-file>"
            self._send(HTTPStatus.UNAUTHORIZED, {"error": "missing or wrong bearer token", "hint": hint},
                       {"WWW-Authenticate": 'Bearer realm="brain"'})
            raise _Answered
        if not principal.may(scope):
            self._send(HTTPStatus.FORBIDDEN, {"error": f"token {principal.name!r} lacks the {scope} scope"})
            raise _Answered
        wait = access.limiter.take(principal.name, kind) if access.limiter is not None else 0.0
        if wait > 0:
            if self.command == "POST":
                self.close_connection = True  # the body is not read
            self._send(HTTPStatus.TOO_MANY_REQUESTS,
                       {"error": f"token {principal.name!r} is over its {kind} rate limit",
                        "hint": "retry after the Retry-After seconds"},
                       {"Retry-After": RateLimiter.retry_after(wait)})
            raise _Answered
        return principal

    def _json_body(self) -> Any:
        if self.headers.get("Transfer-Encoding") is not None:
            self.close_connection = True
            raise HttpError(HTTPStatus.LENGTH_REQUIRED, "chunked bodies are not accepted", "send Content-Length")
        length_text = self.headers.get("Content-Length")
        if length_text is None or not length_text.isdigit():
            self.close_connection = True
            raise HttpError(HTTPStatus.LENGTH_REQUIRED, "a POST needs a Content-Length")
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # the body is not read: the connection cannot be reused
            raise HttpError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                            f"the body is {length} bytes, over the {MAX_BODY_BYTES}-byte limit",
                            "send fewer candidates per request")
        data = self.rfile.read(length)
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise HttpError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                            f"Content-Type must be application/json, got {content_type[:60]!r}")
        try:
            return parse_strict(data)
        except CanonicalFormError as e:
            raise HttpError(HTTPStatus.BAD_REQUEST, f"the body is not strict JSON: {e.message}",
                            "UTF-8, no duplicate keys, no floats, integers within 2^53") from None

    def _send_text(self, status: HTTPStatus, content_type: str, text: str) -> None:
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        # The pages run no script at all; what a document or a proposal says can never become one.
        self.send_header("Content-Security-Policy",
                         "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                         "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(data)


def make_write_handler(
    routes: Routes, access: Access, desk: ProposalFace | None, ui: Page | None
) -> type[BaseHTTPRequestHandler]:
    """`serve.http_api.make_handler`'s class (without its own token check) under `_WriteHandler`."""
    base = make_handler(routes, None)  # authentication is done here, before the read routes run
    handler: type[BaseHTTPRequestHandler] = type(
        "WriteHandler", (_WriteHandler, base),
        {"access": access, "desk": desk, "ui": None if ui is None else staticmethod(ui)}
    )
    return handler


def _one(values: dict[str, list[str]], name: str) -> str | None:
    found = values.get(name)
    return found[-1] if found else None


def _status(error: BrainError) -> HTTPStatus:
    if isinstance(error, ProposalProcessGone):
        return HTTPStatus.SERVICE_UNAVAILABLE
    if isinstance(error, NotFoundError):
        return HTTPStatus.NOT_FOUND
    if isinstance(error, UsageError):
        return HTTPStatus.BAD_REQUEST
    if isinstance(error, ConflictError):
        return HTTPStatus.CONFLICT
    if isinstance(error, LocalStorageError):  # the server's disk is full or read-only: nothing was committed
        return HTTPStatus.INSUFFICIENT_STORAGE
    return HTTPStatus.UNPROCESSABLE_ENTITY


@dataclass
class WriteApp:
    """`serve.http_api.HandlerFactory` for `--tokens`, `--allow-propose` and the UI (built before any fork)."""

    table: TokenTable | None
    desk: ProposalFace | None
    ui: Page | None
    limiter: RateLimiter | None

    @property
    def protected(self) -> bool:
        """Every route needs a token."""
        return self.table is not None

    @property
    def writes(self) -> bool:
        """The POST routes are served."""
        return self.desk is not None

    def handler(self, routes: Routes, token: str | None) -> type[BaseHTTPRequestHandler]:
        """The handler class; `token` is the `--token-file` secret (accepted for reads)."""
        return make_write_handler(routes, Access(self.table, token, self.limiter), self.desk, self.ui)

    def started(self) -> None:
        """A serving process starts: the review UI warms up in the background (`ReviewUI.warm`), so the
        first page each process answers finds its caches read (a reviewer's next request may reach any
        worker; the first `/ui/` request alone would warm only the worker that took it)."""
        warm = getattr(self.ui, "warm", None)
        if warm is not None:
            warm()

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """While the server runs, proposals go to their own process (`serve.proposals_process`): a commit's
        CPU time is then never spent holding the GIL the request threads read under."""
        desk = self.desk
        if desk is None or not isinstance(desk, ProposalDesk):
            yield
            return
        with DeskProcess.running(desk) as process:
            self.desk = process
            try:
                yield
            finally:
                self.desk = desk


def rate_limiter(table: TokenTable | None, proposals_per_second: float) -> RateLimiter | None:
    """Per-token buckets: proposals at `proposals_per_second` (burst twice that, at least 1), reads at 20 times
    the rate (burst at least 4)."""
    if table is None or proposals_per_second <= 0:
        return None
    rates = {
        PROPOSE: (proposals_per_second, max(1.0, 2 * proposals_per_second)),
        READ: (20 * proposals_per_second, max(4.0, 40 * proposals_per_second)),
    }
    return RateLimiter(table.names, rates)
