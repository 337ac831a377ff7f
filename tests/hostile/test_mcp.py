"""Hostile input to `brain serve --mcp`: huge and odd tool arguments (#24 item 8) and malformed JSON-RPC lines
(item 12), over the real server's stdin/stdout; the valid path through the SDK's own client."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.mcp_client import RawMcp, sdk_calls
from tests.shared_paths import REFERENCE_BRAIN

HUGE = "a" * 1_000_000


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawMcp]:
    """One server for the module's raw exchanges (initialized); its stderr is checked when it stops."""
    brain_dir = tmp_path_factory.mktemp("mcp") / "brain"
    shutil.copytree(REFERENCE_BRAIN, brain_dir)
    for path in [brain_dir, *brain_dir.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    server = RawMcp(brain_dir)
    try:
        assert server.initialize()["result"]["serverInfo"]["name"] == "brain"
        yield server
    finally:
        err = server.close()
    assert "Traceback" not in err and len(err) < 4000, err[-4000:]


HOSTILE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("show", {"id": HUGE}),
    ("prove", {"id": HUGE}),
    ("cat", {"id": HUGE}),
    ("show", {"id": "x" * 300}),
    ("show", {"id": "../../../../etc/passwd"}),
    ("cat", {"id": "https://example.org/fourier.md", "locator": "L999999999999-L1"}),
    ("cat", {"id": "https://example.org/fourier.md", "locator": HUGE}),
    ("search", {"query": HUGE}),
    ("search", {"query": "spectrum", "limit": -1}),
    ("search", {"query": "spectrum", "limit": 10**12}),
    ("search", {"query": "spectrum", "types": ["provenance", "x" * 10_000]}),
    ("search", {"query": "spectrum", "limit": "many"}),
    ("search", {}),
    ("ls", {"type": "../../x"}),
    ("no-such-tool", {}),
]


def test_hostile_tool_calls_are_error_results_not_tracebacks(raw: RawMcp) -> None:
    for number, (tool, arguments) in enumerate(HOSTILE_CALLS, start=1):
        raw.request("tools/call", {"name": tool, "arguments": arguments}, id=number)
        answer = raw.receive(timeout=30)
        assert answer["id"] == number, answer
        if "error" in answer:  # the SDK refuses some calls at the protocol level
            assert len(answer["error"]["message"]) < 2000, (tool, answer["error"]["message"][:300])
            continue
        result = answer["result"]
        assert result["isError"] is True, (tool, str(answer)[:300])
        text = result["content"][0]["text"]
        assert len(text) < 2000, (tool, text[:300])
    raw.request("tools/call", {"name": "status", "arguments": {}}, id=1000)
    assert raw.receive(timeout=30)["result"]["isError"] is False


def test_the_sdk_client_still_gets_answers(reference_brain: Path) -> None:
    status, shown = sdk_calls(reference_brain, [("status", {}), ("show", {"id": "ab" * 128})])
    assert status.is_error is False and status.structured_content["snapshot"]
    assert shown.is_error is True and "invalid block id prefix" in shown.content[0].text


MALFORMED: list[tuple[bytes, int, object]] = [
    (b"{not json", -32700, None),
    (b"[1, 2", -32700, None),
    (b"\xff\xfe\x00garbage", -32700, None),
    (b'"just a string"', -32600, None),
    (b"42", -32600, None),
    (b"[]", -32600, None),
    (b'[{"jsonrpc": "2.0", "id": 5, "method": "ping"}]', -32600, None),
    (b'{"jsonrpc": "1.0", "id": 7, "method": "ping"}', -32600, 7),
    (b'{"jsonrpc": "2.0", "id": "eight"}', -32600, "eight"),
    (b'{"jsonrpc": "2.0", "id": 9, "method": 5}', -32600, 9),
    (b'{"jsonrpc": "2.0", "id": 10, "method": "ping", "params": [1]}', -32600, 10),
    (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', -32600, None),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, None),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600, None),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None),
    (b'{"id": 12, "method": "ping"}', -32600, 12),
    (b'{"jsonrpc": "2.0", "id": 13, "method": "ping", "result": {}}', -32600, 13),
]


def test_malformed_json_rpc_lines_get_json_rpc_errors(raw: RawMcp) -> None:
    for line, code, expected_id in MALFORMED:
        raw.send(line)
        answer = raw.receive()
        assert answer.get("jsonrpc") == "2.0" and "id" in answer, (line, answer)
        assert answer["id"] == expected_id and answer["error"]["code"] == code, (line, answer)
    raw.send(b"x" * (9 << 20))  # one line over the size limit: refused, and the stream goes on
    assert raw.receive()["error"]["code"] in (-32600, -32700)
    raw.send(b"")  # a blank line is no message: no answer for it
    raw.request("ping", id=99)
    assert raw.receive() == {"jsonrpc": "2.0", "id": 99, "result": {}}
    raw.request("no/such/method", id=100)
    unknown = raw.receive()
    assert unknown["id"] == 100 and unknown["error"]["code"] == -32601
    raw.request("tools/call", {"name": "status", "arguments": {}}, id=101)
    status = raw.receive(timeout=30)
    assert status["id"] == 101 and status["result"]["isError"] is False
