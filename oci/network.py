"""What a failed exchange with a registry means for the user: one message, the fix, and whether to retry.

`requests` wraps the real cause several layers deep (ConnectionError → MaxRetryError → NewConnectionError
→ ConnectionRefusedError). A refused connection, an unknown host or a failed TLS handshake will not heal
in the next few seconds, so they are reported at once instead of after the whole backoff schedule;
timeouts and dropped connections are worth another try. An answer nobody expected (`unexpected`) names
the registry's error codes.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass

import requests

from brain.errors import RemoteError

# What `requests` raises when a connection fails, stalls or is cut short mid-body.
NETWORK_ERRORS = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)
_PLAIN_HTTP_HINT = "check the address, the network, or use --plain-http for a plain-HTTP registry"
_AGAIN_HINT = "run the same command again: what was transferred and verified is kept"


@dataclass(frozen=True)
class NetworkFailure:
    """A failed request: the error to raise and whether retrying could help."""

    error: RemoteError
    retryable: bool


def causes(error: BaseException) -> Iterator[BaseException]:
    """`error` and every exception it wraps (cause, context, urllib3's `reason`, exception arguments)."""
    seen: set[int] = set()
    stack: list[object] = [error]
    while stack:
        current = stack.pop()
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend([current.__cause__, current.__context__, getattr(current, "reason", None), *current.args])


def network_failure(registry: str, error: BaseException, *, answered: bool = False) -> NetworkFailure:
    """Classify a connection-level failure talking to `registry` (`host[:port]`).

    `answered`: the registry already answered this client, so a dropped or stalled connection says
    nothing about the address or --plain-http, and no such hint is given.
    """
    chain = list(causes(error))
    host = registry.rsplit(":", 1)[0] if registry.count(":") == 1 else registry
    if any(isinstance(c, socket.gaierror) for c in chain):
        return NetworkFailure(
            RemoteError(
                f"registry host {host} not found (DNS lookup failed)", hint="check the host name in the reference"
            ),
            retryable=False,
        )
    if any(isinstance(c, ConnectionRefusedError) for c in chain):
        return NetworkFailure(
            RemoteError(
                f"registry {registry} refused the connection",
                hint="check that the registry is running and that the port is right",
            ),
            retryable=False,
        )
    tls = next((c for c in chain if isinstance(c, ssl.SSLError)), None)
    if tls is not None or isinstance(error, requests.exceptions.SSLError):
        reason = getattr(tls, "reason", None) or getattr(tls, "verify_message", None)
        detail = f" ({str(reason).lower().replace('_', ' ')})" if reason else ""
        return NetworkFailure(
            RemoteError(
                f"TLS handshake with registry {registry} failed{detail}",
                hint="a plain-HTTP registry needs --plain-http; otherwise check its certificate",
            ),
            retryable=False,
        )
    if isinstance(error, requests.Timeout):
        what = type(error).__name__
        hint = _AGAIN_HINT if answered else _PLAIN_HTTP_HINT
        slow = RemoteError(f"registry {registry} did not answer in time ({what})", hint=hint)
        return NetworkFailure(slow, retryable=True)
    if answered:
        dropped = RemoteError(f"the connection to registry {registry} dropped ({_innermost(chain)})", hint=_AGAIN_HINT)
        return NetworkFailure(dropped, retryable=True)
    return NetworkFailure(
        RemoteError(f"registry {registry} unreachable: {type(error).__name__}", hint=_PLAIN_HTTP_HINT), retryable=True
    )


def _innermost(chain: list[BaseException]) -> str:
    """The name of the lowest-level cause: ConnectionResetError, IncompleteRead... rather than requests' wrapper."""
    for cause in reversed(chain):
        if isinstance(cause, OSError) or type(cause).__name__ in ("IncompleteRead", "ProtocolError"):
            return type(cause).__name__
    return type(chain[-1]).__name__ if chain else "unknown"


def error_codes(response: requests.Response) -> list[str]:
    """The `errors[].code` values of a distribution-API error body (none when it is not one)."""
    try:
        errors = response.json().get("errors", [])
        return [str(e.get("code")) for e in errors if isinstance(e, dict)]
    except (ValueError, AttributeError):
        return []


def unexpected(registry: str, what: str, response: requests.Response) -> RemoteError:
    """The error for an answer `what` did not expect from `registry`: its status and error codes."""
    codes = ",".join(error_codes(response)) or response.reason
    message = f"{what} on {registry}: unexpected HTTP {response.status_code} ({codes})"
    if response.status_code == 405:
        return RemoteError(message, hint="the registry refuses it here: read-only, or a pull-through cache?")
    return RemoteError(message)
