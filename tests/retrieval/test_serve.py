"""`brain serve`: MCP through the official SDK's own stdio client, HTTP through a real client against a real
server process. Both answer with the CLI's `--json`, are read-only, and refuse bad input cleanly."""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import requests
from mcp import Client, StdioServerParameters

from brain.brain import Brain
from brain.identity import OciDigest
from tests.brain.brain_helpers import tree_digest
from tests.cli.conftest import BRAIN_EXE
from tests.retrieval.conftest import ingest, run_cli


def _cli_json(brain_dir: Path, *args: str) -> Any:
    done = run_cli("--brain", str(brain_dir), *args, "--json")
    assert done.code == 0, done
    return json.loads(done.stdout)


def _mcp_calls(brain_dir: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[Any]]:
    params = StdioServerParameters(command=str(BRAIN_EXE), args=["--brain", str(brain_dir), "serve", "--mcp"],
                                   env={"NO_COLOR": "1"})
    answers: list[Any] = []
    names: list[str] = []

    async def main() -> None:
        async with Client(params) as client:
            names.extend(t.name for t in (await client.list_tools()).tools)
            for name, arguments in calls:
                answers.append(await client.call_tool(name, arguments))

    anyio.run(main)
    return names, answers


def test_mcp_tools_answer_with_the_cli_json(corpus_brain: Path) -> None:
    before = _cli_json(corpus_brain, "search", "consistent hashing", "-k", "4")  # builds the index first
    semantic = _cli_json(corpus_brain, "ls", "--type", "semantic")
    block = semantic[0]["block_id"]
    calls = [
        ("search", {"query": "consistent hashing", "limit": 4}),
        ("search", {"query": "warmer", "types": ["episodic"], "include_superseded": True}),
        ("show", {"id": block}),
        ("prove", {"id": block[7:19]}),
        ("status", {}),
        ("ls", {"type": "semantic"}),
        ("cat", {"id": "notes/glossary.md", "locator": "L3"}),
        ("search", {"query": "   "}),
        ("show", {"id": "--all"}),
        ("cat", {"id": "notes/glossary.md", "locator": "L0"}),
    ]
    names, answers = _mcp_calls(corpus_brain, calls)
    assert sorted(names) == ["cat", "context", "ls", "prove", "search", "show", "status"]
    ok, errors = answers[:7], answers[7:]
    assert [a.is_error for a in ok] == [False] * 7
    assert ok[0].structured_content == before
    assert json.loads(ok[0].content[0].text) == before
    assert ok[1].structured_content == _cli_json(corpus_brain, "search", "warmer", "-t", "episodic",
                                                 "--include-superseded")
    assert ok[2].structured_content == _cli_json(corpus_brain, "show", block)
    assert ok[3].structured_content == _cli_json(corpus_brain, "prove", block)
    assert ok[3].structured_content["verified"] is True
    assert ok[4].structured_content == _cli_json(corpus_brain, "status")
    assert ok[5].structured_content == {"members": semantic}
    assert ok[6].structured_content == _cli_json(corpus_brain, "cat", "notes/glossary.md", "-l", "L3")
    assert [a.is_error for a in errors] == [True, True, True]
    assert "the query is empty" in errors[0].content[0].text
    assert "invalid argument" in errors[1].content[0].text
    assert "start at 1" in errors[2].content[0].text


class Server:
    """A `brain serve --http` process on an ephemeral loopback port."""

    def __init__(self, brain_dir: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            [str(BRAIN_EXE), "--brain", str(brain_dir), "serve", "--http", "127.0.0.1:0", *extra],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env={**os.environ, "NO_COLOR": "1"},
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert match, line
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def raw(self, method: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, headers=headers or {})
            response = connection.getresponse()
            body = response.read()
            return response.status, json.loads(body) if body and body.startswith(b"{") else body
        finally:
            connection.close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture
def server(corpus_brain: Path) -> Iterator[Server]:
    running = Server(corpus_brain)
    try:
        yield running
    finally:
        running.stop()


def test_http_routes_answer_with_the_cli_json(server: Server, corpus_brain: Path) -> None:
    found = requests.get(f"{server.url}/v1/search", params={"q": "consistent hashing", "limit": 4}, timeout=30)
    assert found.status_code == 200 and found.headers["Content-Type"] == "application/json"
    assert found.json() == _cli_json(corpus_brain, "search", "consistent hashing", "-k", "4")
    typed = requests.get(f"{server.url}/v1/search", timeout=30,
                         params={"q": "warmer", "type": ["episodic", "semantic"], "include_superseded": "1"})
    assert typed.json() == _cli_json(corpus_brain, "search", "warmer", "-t", "episodic", "-t", "semantic",
                                     "--include-superseded")
    block = found.json()["matches"][0]["block"]
    assert requests.get(f"{server.url}/v1/blocks/{block}", timeout=30).json() == _cli_json(corpus_brain, "show", block)
    proof = requests.get(f"{server.url}/v1/blocks/{block[7:19]}/proof", timeout=30).json()
    assert proof == _cli_json(corpus_brain, "prove", block) and proof["verified"] is True
    source = found.json()["matches"][0]["evidence"][0]["block"]
    view = requests.get(f"{server.url}/v1/sources/{source}/view", params={"locator": "p.2"}, timeout=30)
    assert view.json() == _cli_json(corpus_brain, "cat", source, "-l", "p.2")
    assert requests.get(f"{server.url}/v1/status", timeout=30).json() == _cli_json(corpus_brain, "status")
    assert requests.get(f"{server.url}/healthz", timeout=30).json() == {"status": "ok"}


def _brain_digest(brain_dir: Path) -> str:
    """The brain's files, without the search index sidecar (whose WAL files change as workers open it; it is
    left where it is: a serving process may be warming it)."""
    return tree_digest(brain_dir, exclude=Path("boltzmann") / "search")


def test_http_bad_input_is_a_clear_4xx_and_writes_nothing(server: Server, corpus_brain: Path) -> None:
    server.raw("GET", "/v1/search?q=shard")  # the index exists: what follows must not change the brain
    before = _brain_digest(corpus_brain)
    cases = {
        "/v1/search?q=": 400,
        "/v1/search?q=%22%2A%28%29": 400,
        "/v1/search?q=shard&type=bogus": 400,
        "/v1/search?q=shard&limit=abc": 400,
        "/v1/search?q=shard&limit=0": 400,
        "/v1/search?q=shard&include_superseded=maybe": 400,
        "/v1/search?q=%22shard%22%20NEAR%20-x%2A": 200,
        "/v1/sources/../../../etc/passwd/view": 400,
        "/v1/sources/..%2F..%2Fetc%2Fpasswd/view": 400,
        "/v1/sources/%2e%2e/view": 400,
        "/v1/sources/notes%2Fglossary.md/view": 400,
        "/v1/sources/abcd/view": 404,
        "/v1/blocks/xyz": 400,
        "/v1/blocks/" + "0" * 64: 404,
        "/v1/nothing": 404,
        "/": 404,
    }
    for path, expected in cases.items():
        status, body = server.raw("GET", path)
        assert status == expected, (path, status, body)
        if expected != 200:
            assert isinstance(body, dict) and body["error"], (path, body)
    status, _ = server.raw("GET", "/v1/search?q=" + "a" * 70_000)
    assert status == 414
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        status, body = server.raw(method, "/v1/blocks/abcd")
        assert status == 405 and "read-only" in body["error"]
    assert _brain_digest(corpus_brain) == before
    assert server.process.poll() is None  # still serving


def test_http_token_is_required_on_every_route(corpus_brain: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    running = Server(corpus_brain, "--token-file", str(token_file))
    try:
        for path in ("/healthz", "/v1/status", "/v1/search?q=shard", "/v1/blocks/abcd", "/v1/sources/abcd/view"):
            assert running.raw("GET", path)[0] == 401
            assert running.raw("GET", path, {"Authorization": "Bearer wrong"})[0] == 401
            assert running.raw("GET", path, {"Authorization": "s3cret-token"})[0] == 401
        good = {"Authorization": "Bearer s3cret-token"}
        assert running.raw("GET", "/healthz", good) == (200, {"status": "ok"})
        assert running.raw("GET", "/v1/search?q=shard", good)[0] == 200
    finally:
        running.stop()


def test_a_non_loopback_bind_needs_a_token(corpus_brain: Path) -> None:
    done = run_cli("--brain", str(corpus_brain), "serve", "--http", "0.0.0.0:0")
    assert done.code == 3 and "--token-file" in done.stderr
    assert run_cli("--brain", str(corpus_brain), "serve", "--mcp", "--http", "127.0.0.1:0").code == 3
    assert run_cli("--brain", str(corpus_brain), "serve", "--http", "nonsense").code == 3


def test_the_server_follows_the_head_and_each_answer_is_one_snapshot(
    server: Server, corpus_brain: Path, corpus_copy: Any
) -> None:
    corpus = corpus_copy()
    answers: list[dict[str, Any]] = []
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            reply = requests.get(f"{server.url}/v1/search", params={"q": "shard quokka note", "limit": 20}, timeout=60)
            assert reply.status_code == 200, reply.text
            answers.append(reply.json())

    worker = threading.Thread(target=hammer)
    worker.start()
    try:
        for n in range(3):
            (corpus / f"quokka-{n}.md").write_text(f"# Quokka {n}\n\nA quokka note number {n} about shard {n}.\n")
            ingest(corpus_brain, corpus)
    finally:
        stop.set()
        worker.join(timeout=60)
    brain = Brain.open(corpus_brain)
    final = requests.get(f"{server.url}/v1/search", params={"q": "quokka note", "limit": 20}, timeout=60).json()
    assert final["snapshot"] == str(brain.snapshot_digest())
    assert {m["evidence"][0]["origin"] for m in final["matches"]} >= {f"quokka-{n}.md" for n in range(3)}
    for answer in [*answers, final]:
        snapshot = brain.snapshot(OciDigest.parse(answer["snapshot"]))
        assert snapshot is not None
        for match in answer["matches"]:
            assert match["verified"] is True
            assert match["proof"]["root"] == str(snapshot.modules[match["memory_type"]].root)


def test_workers_stop_with_their_parent_even_after_a_sigkill(corpus_brain: Path) -> None:
    import signal
    import time

    running = Server(corpus_brain, "--workers", "2")
    try:
        assert running.raw("GET", "/healthz")[0] == 200
        running.process.send_signal(signal.SIGKILL)
        running.process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                running.raw("GET", "/healthz")
            except (OSError, http.client.HTTPException):
                break  # nobody listens any more, or the worker died while it answered
            time.sleep(0.2)
        else:
            pytest.fail("a worker kept serving after its parent was killed")
    finally:
        if running.process.stderr is not None:
            running.process.stderr.close()
