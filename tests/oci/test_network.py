"""Connection failures are classified from the real exceptions `requests` raises: permanent ones at once."""

from __future__ import annotations

import http.server
import time
from collections.abc import Iterator

import pytest
import requests

from brain.errors import RemoteError
from oci.network import network_failure
from oci.reference import Reference
from oci.retry import RetryPolicy
from oci.transport import RegistryClient
from tests.loopback import LoopbackServer
from tests.registry import free_port

SLOW = RetryPolicy(attempts=5, base_delay=30.0, max_delay=30.0)


def _failure_of(url: str) -> BaseException:
    with pytest.raises(requests.RequestException) as caught:
        requests.get(url, timeout=5)
    return caught.value


@pytest.fixture
def plain_http_server() -> Iterator[str]:
    """A loopback server that only speaks plain HTTP (`host:port`)."""
    server = LoopbackServer(http.server.BaseHTTPRequestHandler).start()
    try:
        yield f"127.0.0.1:{server.port}"
    finally:
        server.close()


def test_refused_connection_is_permanent_and_names_the_fix() -> None:
    host = f"127.0.0.1:{free_port()}"
    failure = network_failure(host, _failure_of(f"http://{host}/v2/"))
    assert not failure.retryable
    assert failure.error.message == f"registry {host} refused the connection"
    assert "running" in (failure.error.hint or "")


def test_unknown_host_is_permanent() -> None:
    failure = network_failure("nohost.invalid", _failure_of("http://nohost.invalid/v2/"))
    assert not failure.retryable
    assert failure.error.message == "registry host nohost.invalid not found (DNS lookup failed)"


def test_tls_to_a_plain_http_registry_is_permanent_and_suggests_plain_http(plain_http_server: str) -> None:
    failure = network_failure(plain_http_server, _failure_of(f"https://{plain_http_server}/v2/"))
    assert not failure.retryable
    assert failure.error.message.startswith(f"TLS handshake with registry {plain_http_server} failed")
    assert "--plain-http" in (failure.error.hint or "")


def test_other_failures_stay_retryable() -> None:
    assert network_failure("r.example.org", requests.ConnectTimeout("slow")).retryable
    assert network_failure("r.example.org", requests.exceptions.ChunkedEncodingError("cut")).retryable


def test_client_reports_a_permanent_failure_without_backing_off(plain_http_server: str) -> None:
    client = RegistryClient(Reference(plain_http_server, "a/b", plain_http=False), retry=SLOW)
    started = time.monotonic()
    with pytest.raises(RemoteError, match="TLS handshake"):
        client.ping()
    assert time.monotonic() - started < 10
