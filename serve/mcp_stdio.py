"""`brain serve --mcp`: the brain's read-only face as Model Context Protocol tools over stdio (official SDK).

Tools: `search`, `context`, `show`, `cat`, `prove`, `status`, `ls`; each returns the JSON of the matching CLI command's
`--json` as structured content (and as text for clients that read only text). A `BrainError` becomes a
tool error whose message is the CLI's one-line error and hint; stdout carries nothing but protocol.

The SDK's own stdio transport carries the protocol; its stdin is `serve.jsonrpc_lines.CheckedLines`, so a
line that is no JSON-RPC message gets the error JSON-RPC requires instead of silence.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError

from brain.errors import BrainError
from serve.face import BrainFace
from serve.jsonrpc_lines import CheckedLines
from serve.proposals import ProposalDesk
from serve.proposals_mcp import PROPOSE_INSTRUCTIONS, add_proposal_tools

T = TypeVar("T")

INSTRUCTIONS = (
    "A verified, read-only knowledge brain. Use `search` to find knowledge: every match carries its evidence "
    "(source origin, locator, excerpt) and an inclusion proof; trust a match only when `verified` is true. "
    "Use `cat` to read a source's text at a locator, `show` for a block's payload and ledger."
)


def build_server(face: BrainFace, desk: ProposalDesk | None = None, agent: tuple[str, str] | None = None) -> MCPServer:
    """The MCP server with the read-only tools bound to `face` (and, given a desk, the two proposal tools
    for `agent` = (name, actor id))."""
    instructions = INSTRUCTIONS if desk is None else INSTRUCTIONS + PROPOSE_INSTRUCTIONS
    server: MCPServer = MCPServer(name="brain", instructions=instructions, log_level="WARNING")
    lock = threading.Lock()  # tools run in worker threads; one answer at a time keeps the index simple

    def answer(work: Callable[[], T]) -> T:
        with lock:
            try:
                return work()
            except BrainError as e:
                raise ToolError(str(e)) from None

    @server.tool(description="Search the brain. Returns ranked matches, each an evidence bundle with an "
                 "inclusion proof and `verified` (checked by the server). `types`: canonical, semantic, "
                 "procedural, episodic. `tags`: only blocks carrying every one of these tags (episodes carry tags).")
    def search(
        query: str, limit: int = 10, types: list[str] | None = None, include_superseded: bool = False,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        return answer(lambda: face.search(query, limit=limit, types=types or (), include_superseded=include_superseded,
                                          tags=tags or ()))

    @server.tool(description="Prompt-ready context for a question: the best verified hits (passages, concepts, "
                 "procedures, episodes), deduplicated, packed by score into `max_tokens` (a conservative "
                 "estimate); each item has its text, origin, locator, block id and `verified`.")
    def context(query: str, max_tokens: int = 2000) -> dict[str, Any]:
        return answer(lambda: face.context(query, max_tokens))

    @server.tool(description="A block's payload and what the provenance ledger says about it (`brain show`).")
    def show(id: str) -> dict[str, Any]:
        return answer(lambda: face.show(id))

    @server.tool(description="A source's normalized text, or the part a locator (L5-L9, p.3, p.3 L2-L4) names.")
    def cat(id: str, locator: str | None = None) -> dict[str, Any]:
        return answer(lambda: face.cat(id, locator))

    @server.tool(description="An inclusion proof of a member in its module's Merkle root, checked (`brain prove`).")
    def prove(id: str) -> dict[str, Any]:
        return answer(lambda: face.prove(id))

    @server.tool(description="The current snapshot and each module's Merkle root and block count.")
    def status() -> dict[str, Any]:
        return answer(face.status)

    @server.tool(description="The accessible members, optionally of one memory type (`brain ls`).")
    def ls(type: str | None = None) -> dict[str, Any]:
        return answer(lambda: {"members": face.ls(type)})

    if desk is not None and agent is not None:
        add_proposal_tools(server, desk, agent, answer)
    return server


def run_stdio(face: BrainFace, desk: ProposalDesk | None = None, agent: tuple[str, str] | None = None) -> None:
    """Serve MCP on stdin/stdout until the client closes the stream."""
    anyio.run(_serve_stdio, build_server(face, desk, agent))


async def _serve_stdio(server: MCPServer) -> None:
    """`MCPServer.run("stdio")`, with stdin read through `CheckedLines` (malformed lines answered)."""
    lines = CheckedLines(sys.stdin.buffer)
    async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read_stream, write_stream):

        async def answer(error: JSONRPCError) -> None:
            await write_stream.send(SessionMessage(error))

        lines.answer_with(answer)
        lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs; the SDK has no public name for it
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
