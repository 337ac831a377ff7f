"""The MCP tools of `brain serve --mcp --allow-propose`: `propose` and `record_episode` (see `serve.proposals`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer

from serve.proposals import EpisodeRequest, ProposalDesk, ProposalRequest, parse_request

T = TypeVar("T")

PROPOSE_INSTRUCTIONS = (
    " You may also teach it: `propose` candidates (memory_type semantic, procedural or episodic; payload; "
    "evidence = canonical block ids you read; optional locator such as L5-L9) and `record_episode` for what "
    "happened in this session. Each candidate is judged by the brain's validation gate; validated ones land "
    "on your proposals branch for a person to review and merge. Nothing you send can remove or change "
    "what the brain holds."
)


def add_proposal_tools(
    server: MCPServer, desk: ProposalDesk, agent: tuple[str, str], answer: Callable[[Callable[[], Any]], Any]
) -> None:
    """Register `propose` and `record_episode` for the agent (name, actor id); `answer` maps errors."""
    name, actor = agent

    @server.tool(description="Propose knowledge. `candidates`: a list of {memory_type: semantic|procedural|"
                 "episodic, payload: {...v1 payload...}, evidence: [canonical block ids], locator?: 'L5-L9'}. "
                 "Returns each candidate's verdict (validated, rejected, contradicted) and issue codes; "
                 "validated ones are committed to your proposals branch for review.")
    def propose(candidates: list[dict[str, Any]], task_id: str | None = None) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            body = {"candidates": candidates, **({"task_id": task_id} if task_id is not None else {})}
            request: ProposalRequest = parse_request(ProposalRequest, body)
            return desk.submit(name, actor, request.candidates, request.task_id).model_dump(mode="json")

        result: dict[str, Any] = answer(work)
        return result

    @server.tool(description="Record what happened in this session as an episodic block: summary, occurred_at "
                 "(UTC YYYY-MM-DDTHH:MM:SSZ), evidence (canonical block ids it concerns), optional context, "
                 "participants, outcome, tags. Judged by the gate and committed to your proposals branch.")
    def record_episode(
        summary: str,
        occurred_at: str,
        evidence: list[str],
        context: str | None = None,
        participants: list[str] | None = None,
        outcome: str | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            fields = {"summary": summary, "occurred_at": occurred_at, "evidence": evidence, "context": context,
                      "participants": participants, "outcome": outcome, "tags": tags}
            episode: EpisodeRequest = parse_request(EpisodeRequest, {k: v for k, v in fields.items() if v is not None})
            return desk.submit(name, actor, [episode.candidate()]).model_dump(mode="json")

        result: dict[str, Any] = answer(work)
        return result
