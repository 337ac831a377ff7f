"""A real `brain serve --http` process on an ephemeral loopback port, and raw-socket helpers for malformed requests."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

from tests.cli.conftest import BRAIN_EXE


class Server:
    """`brain serve --http 127.0.0.1:0` (one worker unless told); its stderr is collected as it runs."""

    def __init__(self, brain_dir: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        args = [str(BRAIN_EXE), "--brain", str(brain_dir), "serve", "--http", "127.0.0.1:0", *extra]
        if "--workers" not in extra:
            args += ["--workers", "1"]
        self.process = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                        env={**os.environ, "NO_COLOR": "1", **(env or {})})
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert match, line + self.process.stderr.read()
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"
        self.log: list[str] = []
        self._reader = threading.Thread(target=self._collect, daemon=True)
        self._reader.start()

    def _collect(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)

    def stop(self) -> str:
        """Stop the server; everything it wrote on stderr."""
        self.process.terminate()
        self.process.wait(timeout=10)
        self._reader.join(timeout=5)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return "".join(self.log)

    def connect(self, timeout: float = 10) -> socket.socket:
        """A raw TCP connection to the server."""
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def exchange(self, data: bytes, timeout: float = 10) -> bytes:
        """Send `data` on a fresh connection, half-close, and read until the server closes (or `timeout`)."""
        with self.connect(timeout) as sock:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            return read_all(sock)


def read_all(sock: socket.socket) -> bytes:
    """Everything until EOF (a timeout ends it too)."""
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except TimeoutError:
        pass
    return b"".join(chunks)


def parse_response(raw: bytes) -> tuple[int, dict[str, str], Any]:
    """(status, headers lowercased, JSON body or raw bytes) of one HTTP/1.x response."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", len(body)))
    body = body[:length]
    try:
        return status, headers, json.loads(body)
    except ValueError:
        return status, headers, body
