"""`brain serve --mcp --allow-propose` through the SDK's own stdio client, and signed proposals in a governed
brain: they authenticate as proposals (`valid_as_proposal`), never as authorized heads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from brain.authenticity import judge
from brain.authn.outcomes import Stance
from brain.brain import Brain
from tests.authn.keys import write_key
from tests.cli.conftest import BRAIN_EXE
from tests.retrieval.conftest import run_cli
from tests.serve.test_proposals_http import branch_head, canonical_ids, fact


def _mcp(brain_dir: Path, calls: list[tuple[str, dict[str, Any]]], *extra: str) -> tuple[list[str], list[Any]]:
    params = StdioServerParameters(command=str(BRAIN_EXE), args=["--brain", str(brain_dir), "--actor",
                                   "agents/desktop", "serve", "--mcp", *extra], env={"NO_COLOR": "1"})
    names: list[str] = []
    answers: list[Any] = []

    async def main() -> None:
        async with Client(params) as client:
            names.extend(t.name for t in (await client.list_tools()).tools)
            for name, arguments in calls:
                answers.append(await client.call_tool(name, arguments))

    anyio.run(main)
    return names, answers


def test_mcp_propose_and_record_episode(corpus_brain: Path) -> None:
    source = canonical_ids(corpus_brain)[0]
    head = Brain.open(corpus_brain).snapshot_digest()
    calls = [
        ("propose", {"candidates": [fact(source), {"memory_type": "canonical", "payload": {}, "evidence": [source]},
                                    fact(source, label="with a float", weight=0.5)]}),
        ("record_episode", {"summary": "Answered a question about shards.", "occurred_at": "2026-12-01T10:00:00Z",
                            "evidence": [source], "outcome": "ok", "tags": ["mcp"]}),
        ("propose", {"candidates": [fact(source)]}),
        ("propose", {"candidates": []}),
        ("record_episode", {"summary": "bad time", "occurred_at": "yesterday", "evidence": [source]}),
    ]
    names, answers = _mcp(corpus_brain, calls, "--allow-propose", "--agent", "desktop")
    assert {"propose", "record_episode", "search", "show"} <= set(names)
    first = answers[0].structured_content
    assert first["branch"] == "proposals/desktop" and first["actor"] == "agents/desktop"
    assert [r["verdict"] for r in first["results"]] == ["validated", "rejected", "rejected"]
    assert first["results"][1]["codes"] == ["memory-type-not-allowed", "schema"]
    assert first["results"][2]["codes"] == ["schema"]  # a float fits no payload schema
    episode = answers[1].structured_content
    assert episode["results"][0]["verdict"] == "validated" and episode["base"] == first["snapshot"]
    assert answers[2].structured_content["results"][0]["codes"] == ["duplicate"]
    assert answers[3].is_error and "at least 1" in answers[3].content[0].text
    assert answers[4].structured_content["results"][0]["codes"] == ["schema"]
    assert branch_head(corpus_brain, "proposals/desktop") == episode["snapshot"]
    assert Brain.open(corpus_brain).snapshot_digest() == head


def test_mcp_without_allow_propose_has_no_write_tool(corpus_brain: Path) -> None:
    names, _ = _mcp(corpus_brain, [])
    assert "propose" not in names and "record_episode" not in names


def _governed(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    owner, proposer = write_key(tmp_path, "owner"), write_key(tmp_path, "proposer")
    target = tmp_path / "governed"
    done = run_cli("--brain", str(target), "init", "--trust-key", f"{owner}.pub@owner@example.org",
                   "--trust-key", f"{proposer}.pub=propose@agents/server", "--sign-with", str(owner))
    assert done.code == 0, done
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Fourier series decompose periodic signals.\n")
    done = run_cli("--brain", str(target), "--actor", "owner@example.org", "ingest", str(docs),
                   "--sign-with", str(owner))
    assert done.code == 0, done
    return target, owner, proposer, canonical_ids(target)[0]


def test_governed_proposals_are_signed_as_proposals(tmp_path: Path) -> None:
    target, owner, proposer, source = _governed(tmp_path)
    done = run_cli("--brain", str(target), "serve", "--mcp", "--allow-propose")
    assert done.code == 5 and "--sign-with" in done.stderr
    done = run_cli("--brain", str(target), "serve", "--mcp", "--allow-propose", "--sign-with", str(owner))
    assert done.code == 5 and "authorized heads" in done.stderr
    _, answers = _mcp(target, [("propose", {"candidates": [fact(source, label="fourier")]})], "--allow-propose",
                      "--sign-with", str(proposer))
    answer = answers[0].structured_content
    assert answer["signed"] and answer["committed"] == 1, answer
    brain = Brain.open(target)
    digest = brain.resolve_snapshot_prefix(answer["snapshot"])
    offered = judge(brain, digest, stance=Stance.OFFERED)
    assert [v.outcome for v in offered.signatures] == ["valid_as_proposal"]
    as_head = judge(brain, digest)
    assert as_head.state == "unauthorized" and "proposed_head" in [f.code for f in as_head.findings]
    assert judge(brain).state == "authorized"  # the served head is untouched
