"""Drive `brain serve --mcp` two ways: the official SDK's own stdio client, and raw lines over a pipe."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from tests.cli.conftest import BRAIN_EXE


def sdk_calls(brain_dir: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each `(tool, arguments)` called through the SDK's client, in order; the results."""
    params = StdioServerParameters(command=str(BRAIN_EXE), args=["--brain", str(brain_dir), "serve", "--mcp"],
                                   env={"NO_COLOR": "1"})
    answers: list[Any] = []

    async def main() -> None:
        async with Client(params) as client:
            for name, arguments in calls:
                answers.append(await client.call_tool(name, arguments))

    anyio.run(main)
    return answers


class RawMcp:
    """A `brain serve --mcp` process written to and read from line by line (no SDK in between)."""

    def __init__(self, brain_dir: Path) -> None:
        self.process = subprocess.Popen(
            [str(BRAIN_EXE), "--brain", str(brain_dir), "serve", "--mcp"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        )
        assert self.process.stdout is not None
        os.set_blocking(self.process.stdout.fileno(), False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.process.stdout, selectors.EVENT_READ)
        self._buffer = b""

    def send(self, line: bytes) -> None:
        """Write one line (a newline is added)."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None, id: Any = 1) -> None:
        """Send one well-formed JSON-RPC request."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode())

    def initialize(self) -> dict[str, Any]:
        """The handshake a client does first; the server's answer."""
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "raw", "version": "0"}}, id=0)
        answer = self.receive()
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
        return answer

    def receive(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next JSON message on stdout (fails after `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"no answer within {timeout}s (got {self._buffer[:200]!r})"
            if self._selector.select(left):
                assert self.process.stdout is not None
                chunk = self.process.stdout.read(65536)
                assert chunk, "the server closed stdout"
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return dict(json.loads(line))

    def close(self) -> str:
        """Close stdin, wait for the server to exit; its stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        self.process.wait(timeout=15)
        self._selector.close()
        assert self.process.stdout is not None
        self.process.stdout.close()
        err = self.process.stderr.read().decode(errors="replace")
        self.process.stderr.close()
        return err
