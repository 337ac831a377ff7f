"""Hostile HTTP against a real `brain serve --http` process: what the README promises holds (#24 item 11).

A real client (`requests`) for well-formed requests, raw sockets for everything a client library would
refuse to send (foreign Host headers, unknown methods, HTTP/0.9, oversized lines, dropped connections).
"""

from __future__ import annotations

import shutil
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.hostile.http_server import Server, parse_response, read_all
from tests.shared_paths import REFERENCE_BRAIN

IDLE_LIMIT = 12.0  # the server closes an idle connection well before this


def _copy(target: Path) -> Path:
    shutil.copytree(REFERENCE_BRAIN, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    return target


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(_copy(tmp_path_factory.mktemp("http") / "brain"))
    try:
        yield running
    finally:
        log = running.stop()
        assert "Traceback" not in log, log[-3000:]


def _raw(server: Server, request: bytes) -> tuple[int, dict[str, str], object]:
    return parse_response(server.exchange(request))


def _is_error_json(body: object) -> bool:
    return isinstance(body, dict) and set(body) == {"error", "hint"} and isinstance(body["error"], str)


def test_65_query_fields_are_a_400(server: Server) -> None:
    query = "&".join(["q=spectrum", *(f"f{i}=1" for i in range(70))])
    found = requests.get(f"{server.url}/v1/search?{query}", timeout=10)
    assert found.status_code == 400 and _is_error_json(found.json()), found.text


def test_an_impossible_date_is_a_400(server: Server) -> None:
    for field in ("since", "until"):
        found = requests.get(f"{server.url}/v1/search", params={"q": "spectrum", field: "2026-13-45"}, timeout=10)
        assert found.status_code == 400 and "not a date" in found.json()["error"], found.text
    fine = requests.get(f"{server.url}/v1/search", params={"q": "spectrum", "since": "2020-02-29"}, timeout=10)
    assert fine.status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io:{port}", "localhost:1",
                                  "10.0.0.1:{port}", "[::2]:{port}", "localhost:{port}@evil.example", ""])
def test_a_foreign_host_header_is_misdirected(server: Server, host: str) -> None:
    value = host.format(port=server.port)
    status, _, body = _raw(server, f"GET /v1/status HTTP/1.1\r\nHost: {value}\r\nConnection: close\r\n\r\n".encode())
    assert status == 421 and _is_error_json(body), (status, body)


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "[::1]:{port}", "LOCALHOST:{port}",
                                  "localhost"])
def test_the_servers_own_names_are_answered(server: Server, host: str) -> None:
    value = host.format(port=server.port)
    status, _, body = _raw(server, f"GET /v1/status HTTP/1.1\r\nHost: {value}\r\nConnection: close\r\n\r\n".encode())
    assert status == 200 and isinstance(body, dict) and "snapshot" in str(body), (status, body)


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "FOO", "PROPFIND", "POST", "DELETE", "OPTIONS"])
def test_other_methods_are_405_json(server: Server, method: str) -> None:
    target = "127.0.0.1:443" if method == "CONNECT" else "/v1/status"
    status, headers, body = _raw(
        server, f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Length: 0\r\n\r\n".encode()
    )
    assert status == 405 and _is_error_json(body), (status, body)
    assert "GET" in headers.get("allow", "")


def test_a_refused_body_is_never_read_as_the_next_request(server: Server) -> None:
    # The 405 is sent before the body is read; a server that kept the connection would answer the body.
    inner = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    outer = (f"POST /v1/status HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
             f"Content-Length: {len(inner)}\r\n\r\n").encode()
    answer = server.exchange(outer + inner)
    status, headers, body = parse_response(answer)
    assert status == 405 and headers.get("connection") == "close", (status, headers)
    assert answer.count(b"HTTP/1.1 ") == 1, answer


def test_a_request_line_over_64_kib_is_414_json(server: Server) -> None:
    status, headers, body = _raw(server, b"GET /v1/search?q=" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n")
    assert status == 414 and _is_error_json(body), (status, body)
    assert headers["content-type"] == "application/json"


@pytest.mark.parametrize("headers", [b"X-Long: " + b"a" * 70_000 + b"\r\n",
                                     b"".join(b"X-%d: 1\r\n" % i for i in range(120))])
def test_oversized_headers_are_431_json(server: Server, headers: bytes) -> None:
    status, _, body = _raw(server, b"GET /v1/status HTTP/1.1\r\nHost: localhost\r\n" + headers + b"\r\n")
    assert status == 431 and _is_error_json(body), (status, body)


def test_malformed_request_lines_are_json_errors(server: Server) -> None:
    for line in (b"GET / HTTP/9.9\r\n\r\n", b"GET / HTTP/1.1 extra\r\n\r\n", b"\x16\x03\x01\x02\x00\r\n\r\n"):
        status, _, body = _raw(server, line)
        assert 400 <= status < 600 and _is_error_json(body), (line, status, body)


def test_an_http_0_9_request_is_answered_or_closed_promptly(server: Server) -> None:
    started = time.monotonic()
    with server.connect(timeout=5) as sock:
        sock.sendall(b"GET /healthz\r\n")  # no version, no headers, and the client does not half-close
        answer = read_all(sock)
    assert time.monotonic() - started < 3, "the server waited for headers an HTTP/0.9 client never sends"
    assert b"Traceback" not in answer


def test_idle_connections_are_closed(server: Server) -> None:
    started = time.monotonic()
    with server.connect(timeout=IDLE_LIMIT + 5) as idle, server.connect(timeout=IDLE_LIMIT + 5) as used:
        used.sendall(f"GET /healthz HTTP/1.1\r\nHost: localhost:{server.port}\r\n\r\n".encode())
        assert read_all(idle) == b""  # closed by the server (our timeout is later than IDLE_LIMIT)
        answer = read_all(used)  # the answer, then the server closes the idle keep-alive connection
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"status": "ok"}'), answer
    assert time.monotonic() - started < IDLE_LIMIT


def test_connections_are_capped_and_the_server_recovers(server: Server) -> None:
    held = [server.connect(timeout=10) for _ in range(300)]
    try:
        time.sleep(0.5)
        refused = 0
        for sock in held[-20:]:
            sock.settimeout(3)
            data = b""
            try:
                data = sock.recv(65536)
            except TimeoutError:
                pass
            if data.startswith(b"HTTP/1.1 503"):
                status, _, body = parse_response(data + read_all(sock))
                assert _is_error_json(body)
                refused += 1
        assert refused > 0, "300 idle connections were all accepted"
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.3)
    assert requests.get(f"{server.url}/healthz", timeout=10).status_code == 200


def test_dropped_clients_leave_at_most_a_line_each(server: Server) -> None:
    before = len(server.log)

    def drop(number: int) -> None:
        try:
            sock = server.connect(timeout=5)
        except OSError:
            return
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
        if number % 3 == 1:
            sock.sendall(b"GET /v1/search?q=spectrum HTTP/1.1\r\nHost: localhost\r\n\r\n")
        elif number % 3 == 2:
            sock.sendall(b"GET /v1/sta")
        sock.close()

    threads = [threading.Thread(target=drop, args=(n,)) for n in range(150)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    time.sleep(1.0)
    assert requests.get(f"{server.url}/healthz", timeout=10).status_code == 200
    lines = server.log[before:]
    assert len(lines) <= 150 and not any("Traceback" in line for line in lines), "".join(lines)[-3000:]


def test_bearer_is_case_insensitive(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    running = Server(_copy(tmp_path / "brain"), "--token-file", str(token))
    try:
        for scheme in ("Bearer", "bearer", "BEARER", "bEaReR"):
            ok = requests.get(
                f"{running.url}/v1/status", headers={"Authorization": f"{scheme} s3cret-token"}, timeout=10
            )
            assert ok.status_code == 200, (scheme, ok.text)
        for value in ("Basic s3cret-token", "Bearer wrong", "Bearer", "s3cret-token"):
            refused = requests.get(f"{running.url}/v1/status", headers={"Authorization": value}, timeout=10)
            assert refused.status_code == 401 and _is_error_json(refused.json()), (value, refused.text)
        # A token server answers any Host (it may be bound to a public name), but never without the token.
        foreign = requests.get(f"{running.url}/v1/status", headers={"Host": "brain.example.org",
                               "Authorization": "Bearer s3cret-token"}, timeout=10)
        assert foreign.status_code == 200
    finally:
        running.stop()


def test_an_unreadable_brain_is_503_without_its_path_and_unhealthy(tmp_path: Path) -> None:
    brain_dir = _copy(tmp_path / "brain")
    running = Server(brain_dir)
    try:
        assert requests.get(f"{running.url}/healthz", timeout=10).status_code == 200
        (brain_dir / "boltzmann" / "head.json").write_text("{ not json")
        for route in ("/v1/status", "/v1/search?q=spectrum", "/healthz"):
            found = requests.get(f"{running.url}{route}", timeout=10)
            assert found.status_code == 503, (route, found.status_code, found.text)
            assert _is_error_json(found.json()), found.text
            assert str(brain_dir) not in found.text and str(tmp_path) not in found.text, found.text
    finally:
        log = running.stop()
    assert "Traceback" not in log
