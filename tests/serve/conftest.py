"""Fixtures of the write face and the review UI: a corpus brain, a tokens file, and running servers."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import BRAIN_EXE
from tests.serve.browser import browser  # noqa: F401 - fixture
from tests.retrieval.conftest import corpus_brain, corpus_brain_master  # noqa: F401 - fixtures

SECRETS = {"claude": "claude-secret-1", "reader": "reader-secret-2", "proposer": "proposer-only-3"}
SCOPES = {"claude": ["read", "propose"], "reader": ["read"], "proposer": ["propose"]}
ACTORS = {"claude": "agents/claude", "reader": "agents/reader", "proposer": "agents/proposer"}


def bearer(name: str) -> dict[str, str]:
    """The Authorization header of one test token."""
    return {"Authorization": f"Bearer {SECRETS[name]}"}


@pytest.fixture
def tokens_file(tmp_path: Path) -> Path:
    """A tokens file with three tokens: claude (read, propose), reader (read), proposer (propose)."""
    lines = []
    for name, secret in SECRETS.items():
        lines += [f"[tokens.{name}]", f'secret_sha256 = "{hashlib.sha256(secret.encode()).hexdigest()}"',
                  f"scopes = {json.dumps(SCOPES[name])}", f'actor = "{ACTORS[name]}"', ""]
    path = tmp_path / "tokens.toml"
    path.write_text("\n".join(lines))
    return path


class Server:
    """A `brain serve --http` process on an ephemeral loopback port."""

    def __init__(self, brain_dir: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [str(BRAIN_EXE), "--brain", str(brain_dir), "serve", "--http", "127.0.0.1:0", *extra],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
            env={**os.environ, "NO_COLOR": "1", **(env or {})},
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert match, line + self.process.stderr.read()
        self.banner = line
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def raw(self, method: str, path: str, headers: dict[str, str] | None = None, body: bytes | None = None
            ) -> tuple[int, Any, dict[str, str]]:
        """(status, parsed JSON or bytes, headers) of one request on a fresh connection."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            data = response.read()
            parsed = json.loads(data) if data[:1] == b"{" else data
            return response.status, parsed, {k.lower(): v for k, v in response.getheaders()}
        finally:
            connection.close()

    def post(self, path: str, document: Any, token: str | None = "claude") -> tuple[int, Any, dict[str, str]]:
        """POST a JSON document with a test token."""
        headers = {"Content-Type": "application/json", **(bearer(token) if token else {})}
        return self.raw("POST", path, headers, json.dumps(document).encode())

    def alive(self) -> bool:
        """The process still runs and answers."""
        return self.process.poll() is None and self.raw("GET", "/healthz", bearer("reader"))[0] == 200

    def stop(self) -> None:
        """Terminate and reap."""
        self.process.terminate()
        self.process.wait(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture
def start_server() -> Iterator[Any]:
    """Starts servers for a test and stops them after it."""
    running: list[Server] = []

    def start(brain_dir: Path, *extra: str, env: dict[str, str] | None = None) -> Server:
        server = Server(brain_dir, *extra, env=env)
        running.append(server)
        return server

    yield start
    for server in running:
        server.stop()
