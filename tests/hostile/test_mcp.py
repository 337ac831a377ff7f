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
