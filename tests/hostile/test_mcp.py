"""Hostile input to `brain serve --mcp`: huge arguments (#24 item 8) and malformed JSON-RPC lines (item 12)."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.mcp_client import RawMcp, sdk_calls


def test_a_megabyte_id_is_an_mcp_error_result_not_a_traceback(reference_brain: Path) -> None:
    huge = "a" * 1_000_000
    raw = RawMcp(reference_brain)
    try:
        raw.initialize()
        for number, (tool, arguments) in enumerate(
            [("show", {"id": huge}), ("prove", {"id": huge}), ("cat", {"id": huge}), ("show", {"id": "x" * 300})],
            start=1,
        ):
            raw.request("tools/call", {"name": tool, "arguments": arguments}, id=number)
            answer = raw.receive(timeout=30)
            assert answer["id"] == number
            result = answer["result"]
            assert result["isError"] is True, answer
            text = result["content"][0]["text"]
            assert len(text) < 400 and "\n" not in text, text[:500]
    finally:
        err = raw.close()
    assert "Traceback" not in err and len(err) < 2000, err[:2000]


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


def test_malformed_json_rpc_lines_get_json_rpc_errors(reference_brain: Path) -> None:
    raw = RawMcp(reference_brain)
    try:
        assert raw.initialize()["result"]["serverInfo"]["name"] == "brain"
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
    finally:
        err = raw.close()
    assert "Traceback" not in err, err[-2000:]
