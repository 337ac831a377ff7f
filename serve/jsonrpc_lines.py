"""The lines of an MCP stdio stream that are no JSON-RPC message, answered as JSON-RPC 2.0 requires.

The official SDK's stdio transport drops such a line (it logs it at debug level and answers nothing), so
a client that sent one waits forever. `CheckedLines` stands between stdin and the SDK's transport (as the
`stdin` it accepts): a line that is not JSON gets a parse error (-32700, id null); JSON that is not one
valid JSON-RPC 2.0 message (an array or batch, a wrong `jsonrpc`, no method and no result, an id that is
neither a string nor an integer, params that are not an object, a line over `MAX_LINE` bytes) gets an
invalid request (-32600) with the message's id when one can be read, else null. Every other line goes to
the SDK unchanged, which answers it (including -32601 for an unknown method). Blank lines are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

import anyio
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError

MAX_LINE = 8 << 20  # bytes: a tool call with a megabyte argument passes; a runaway line does not fill memory

Problem = tuple[int, str, "str | int | None"]
Answer = Callable[[JSONRPCError], Awaitable[None]]


def problem_of(line: bytes) -> Problem | None:
    """Why `line` is not a JSON-RPC 2.0 message (code, message, id to answer with), or None if it is one."""
    try:
        value = json.loads(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and JSONDecodeError alike
        return PARSE_ERROR, "Parse error", None
    if not isinstance(value, dict):
        return INVALID_REQUEST, "Invalid Request: a message is one JSON object (batches are not supported)", None
    identifier = _id_of(value)
    if "id" in value and identifier is None:
        return INVALID_REQUEST, "Invalid Request: the id must be a string or an integer", None
    if ("method" in value) == ("result" in value or "error" in value):
        return INVALID_REQUEST, "Invalid Request: a message has a method, or a result or an error", identifier
    try:
        jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", identifier
    return None


def _id_of(message: dict[str, Any]) -> str | int | None:
    found = message.get("id")
    return found if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)) else None


class CheckedLines:
    """Lines of a binary stream as the SDK's stdio transport iterates them, minus those answered here."""

    def __init__(self, source: BinaryIO) -> None:
        self._source = source
        self._answer: Answer | None = None
        self._ready = anyio.Event()

    def answer_with(self, answer: Answer) -> None:
        """Where error responses go (the transport's outgoing stream); lines are read only from now on."""
        self._answer = answer
        self._ready.set()

    def __aiter__(self) -> CheckedLines:
        return self

    async def __anext__(self) -> str:
        await self._ready.wait()
        while True:
            line = await self._readline(MAX_LINE + 1)
            if not line:
                raise StopAsyncIteration
            if len(line) > MAX_LINE and not line.endswith(b"\n"):
                await self._skip_rest_of_line()
                await self._refuse((INVALID_REQUEST, f"Invalid Request: a message is at most {MAX_LINE} bytes", None))
                continue
            if not line.strip():
                continue
            problem = problem_of(line)
            if problem is None:
                return line.decode("utf-8")
            await self._refuse(problem)

    async def _skip_rest_of_line(self) -> None:
        while (chunk := await self._readline(MAX_LINE)) and not chunk.endswith(b"\n"):
            pass

    async def _readline(self, limit: int) -> bytes:
        """One line of at most `limit` bytes, read in a worker thread (a blocking read must not stall the loop)."""
        return await anyio.to_thread.run_sync(self._source.readline, limit, abandon_on_cancel=True)

    async def _refuse(self, problem: Problem) -> None:
        code, message, identifier = problem
        assert self._answer is not None
        await self._answer(JSONRPCError(jsonrpc="2.0", id=identifier, error=ErrorData(code=code, message=message)))
