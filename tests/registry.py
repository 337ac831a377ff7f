"""Real-registry fixtures: CNCF distribution (`docker-registry serve`) on 127.0.0.1, plus a loopback proxy.

Both registries run for the whole session on free loopback ports with temporary storage; one of them
requires htpasswd basic auth. A missing binary skips locally and fails in CI (`BRAIN_REQUIRE_REGISTRY=1`).
`FaultyProxy` sits in front of a registry to corrupt blobs or answer 503 with `Retry-After`.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from tests.loopback import LoopbackServer

REGISTRY_BINARY = "docker-registry"
USERNAME = "brain-tester"
PASSWORD = "correct horse battery staple"
_STARTUP_SECONDS = 30.0


def require_tool(name: str) -> str:
    """The path of `name`, or skip (locally) / fail (CI, BRAIN_REQUIRE_REGISTRY=1) when it is missing."""
    path = shutil.which(name)
    if path is None:
        reason = f"{name} is not installed (apt-get install docker-registry skopeo apache2-utils)"
        if os.environ.get("BRAIN_REQUIRE_REGISTRY") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RegistryServer:
    """One running registry: `host` is `127.0.0.1:PORT`; `log` is its access/error log file."""

    host: str
    storage: Path
    log: Path
    process: subprocess.Popen
    username: str | None = None
    password: str | None = None

    def ref(self, name: str) -> str:
        """A reference on this registry, e.g. `ref("team/brain:v1")`."""
        return f"{self.host}/{name}"

    def log_text(self) -> str:
        """Everything the registry logged so far."""
        return self.log.read_text(errors="replace")


def _htpasswd_line(username: str, password: str) -> str:
    binary = shutil.which("htpasswd")
    if binary is not None:
        done = subprocess.run([binary, "-Bbn", username, password], capture_output=True, text=True, check=True)
        return done.stdout.strip()
    try:
        import bcrypt  # type: ignore[import-not-found]
    except ImportError:
        require_tool("htpasswd")
        raise
    return f"{username}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt()).decode()}"


def _config(port: int, storage: Path, htpasswd: Path | None) -> str:
    text = (
        "version: 0.1\n"
        "log:\n  level: info\n  accesslog:\n    disabled: false\n"
        f"storage:\n  filesystem:\n    rootdirectory: {storage}\n  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    if htpasswd is not None:
        text += f"auth:\n  htpasswd:\n    realm: brain-test\n    path: {htpasswd}\n"
    return text


def start_registry(workdir: Path, *, with_auth: bool = False) -> RegistryServer:
    """Start `docker-registry serve` on a free loopback port and wait until `/v2/` answers."""
    binary = require_tool(REGISTRY_BINARY)
    workdir.mkdir(parents=True, exist_ok=True)
    htpasswd = None
    if with_auth:
        htpasswd = workdir / "htpasswd"
        htpasswd.write_text(_htpasswd_line(USERNAME, PASSWORD) + "\n")
    # Only our config counts: REGISTRY_* variables would override it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("REGISTRY_")}
    last_error = ""
    for _ in range(3):
        port = free_port()
        config = workdir / "config.yml"
        config.write_text(_config(port, workdir / "storage", htpasswd))
        log = workdir / "registry.log"
        with open(log, "ab") as sink:
            process = subprocess.Popen([binary, "serve", str(config)], stdout=sink, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + _STARTUP_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"http://127.0.0.1:{port}/v2/", timeout=1).status_code in (200, 401):
                    return RegistryServer(
                        f"127.0.0.1:{port}", workdir / "storage", log, process,
                        USERNAME if with_auth else None, PASSWORD if with_auth else None,
                    )
            time.sleep(0.05)
        stop_registry(process)
        last_error = log.read_text(errors="replace")[-2000:]
    pytest.fail(f"docker-registry did not start:\n{last_error}")


def stop_registry(process: subprocess.Popen) -> None:
    """Terminate one registry process we started (and reap it)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    """An anonymous registry for the whole test session."""
    server = start_registry(tmp_path_factory.mktemp("registry"))
    yield server
    stop_registry(server.process)


@pytest.fixture(scope="session")
def auth_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryServer]:
    """A registry requiring htpasswd basic auth (`USERNAME`/`PASSWORD`)."""
    server = start_registry(tmp_path_factory.mktemp("auth-registry"), with_auth=True)
    yield server
    stop_registry(server.process)


def skopeo_raw_manifest(reference: str) -> bytes:
    """The exact manifest bytes a registry serves for `reference`, read by skopeo (an independent client)."""
    binary = require_tool("skopeo")
    done = subprocess.run(
        [binary, "inspect", "--raw", "--tls-verify=false", f"docker://{reference}"],
        capture_output=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


@dataclass(frozen=True)
class CutBody:
    """Forward the registry's answer with its full Content-Length but only `after` body bytes, then hang up."""

    after: int


@dataclass(frozen=True)
class WrongLength:
    """Forward the registry's answer with `Content-Length: length` (a mangling proxy), then close."""

    length: int


@dataclass(frozen=True)
class ResetRequest:
    """Read the request, then reset the connection without answering (after forwarding it upstream if
    `forward`, as when an answer is lost on the way back)."""

    forward: bool = False


# A hook sees (method, path) and may return (status, headers, body) to answer instead of the registry,
# a callable that rewrites the upstream body, or one of the faults above.
Hook = Callable[
    [str, str],
    "tuple[int, dict[str, str], bytes] | Callable[[bytes], bytes] | CutBody | WrongLength | ResetRequest | None",
]


@dataclass
class FaultyProxy:
    """A loopback HTTP proxy in front of a registry whose `hook` can inject faults; counts requests."""

    upstream: str
    hook: Hook | None = None
    # Like `hook` but also sees the request headers (for authentication tests); runs first.
    gate: Callable[[str, str, dict[str, str]], "tuple[int, dict[str, str], bytes] | None"] | None = None
    requests_seen: list[tuple[str, str]] = field(default_factory=list)
    # (method, path, request headers, body bytes sent back) per answered request.
    answers: list[tuple[str, str, dict[str, str], int]] = field(default_factory=list)
    # Body bytes received per request (what an upload sent).
    received: list[tuple[str, str, int]] = field(default_factory=list)
    host: str = ""

    def bytes_sent(self, path_part: str) -> int:
        """Body bytes the proxy sent back for requests whose path contains `path_part`."""
        return sum(n for _, path, _, n in self.answers if path_part in path)

    def start(self) -> FaultyProxy:
        """Listen on a free 127.0.0.1 port in a daemon thread."""
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                proxy.requests_seen.append((self.command, self.path))
                proxy.received.append((self.command, self.path, len(body)))
                answer = proxy.gate(self.command, self.path, dict(self.headers.items())) if proxy.gate else None
                if answer is not None:
                    self._reply(*answer)
                    return
                action = proxy.hook(self.command, self.path) if proxy.hook else None
                if isinstance(action, tuple):
                    self._reply(*action)
                    return
                if isinstance(action, ResetRequest) and not action.forward:
                    self._reset()
                    return
                drop = ("content-length", "connection", "authorization")
                headers = {k: v for k, v in self.headers.items() if k.lower() not in drop}
                upstream = requests.request(
                    self.command, f"http://{proxy.upstream}{self.path}", headers=headers, data=body,
                    allow_redirects=False, timeout=30,
                )
                content = upstream.content if self.command != "HEAD" else b""
                if isinstance(action, ResetRequest):
                    self._reset()
                    return
                if callable(action):
                    content = action(content)
                out = {
                    k: v
                    for k, v in upstream.headers.items()
                    if k.lower() not in ("content-length", "connection", "transfer-encoding", "content-encoding")
                }
                out["Content-Length"] = (
                    upstream.headers.get("Content-Length", "0") if self.command == "HEAD" else str(len(content))
                )
                if isinstance(action, WrongLength):
                    out.update({"Content-Length": str(action.length), "Connection": "close"})
                    self.close_connection = True
                    self._reply(upstream.status_code, out, content)
                    return
                if isinstance(action, CutBody):
                    self._reply(upstream.status_code, out, content[: action.after])  # keeps the full Content-Length
                    self._hang_up()
                    return
                self._reply(upstream.status_code, out, content)

            def _reply(self, status: int, headers: dict[str, str], body: bytes) -> None:
                self.send_response(status)
                headers = {"Content-Length": str(len(body)), **headers}
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                proxy.answers.append((self.command, self.path, dict(self.headers.items()), len(body)))
                if self.command != "HEAD":
                    self.wfile.write(body)
                    self.wfile.flush()

            def _hang_up(self) -> None:
                """Close the connection in the middle of a body (FIN: the client reads what was sent, then EOF)."""
                with contextlib.suppress(OSError):
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.connection.close()
                self.close_connection = True

            def _reset(self) -> None:
                """Abort the connection with a TCP reset (SO_LINGER 0), as a dropped link does."""
                import struct

                with contextlib.suppress(OSError):
                    self.wfile.flush()
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                self.close_connection = True

            do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _handle  # noqa: N815

        self._server = LoopbackServer(Handler)
        self._server.handle_error = lambda request, address: None  # type: ignore[method-assign]  # resets are the point
        self.host = f"127.0.0.1:{self._server.port}"
        self._server.start()
        return self

    def stop(self) -> None:
        """Shut the proxy down (its connections and threads too)."""
        self._server.close()


@pytest.fixture
def faulty_proxy(registry: RegistryServer) -> Iterator[FaultyProxy]:
    """A fresh fault-injecting proxy in front of the session registry."""
    proxy = FaultyProxy(registry.host).start()
    yield proxy
    proxy.stop()
