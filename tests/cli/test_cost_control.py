"""Cost control end to end: `brain ingest --proposer openai` with the real `openai` client against a loopback
chat-completions server that reports usage and rate limits. A run cut short by the budget is completed by a
second run with nothing proposed twice; --dry-run sends nothing; bad limits are one clear line."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.loopback import LoopbackServer

SOURCES = 6
PROMPT_TOKENS = 900  # what the server reports per request
COMPLETION_TOKENS = 60


class ChatServer:
    """`POST /v1/chat/completions`: one grounded semantic candidate per source, usage and rate-limit headers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []
        self.headers: dict[str, str] = {}
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][1]["content"]
                task = json.loads(prompt.split("TASK:\n", 1)[1].split("\n\nSOURCE TEXT", 1)[0])
                first = re.search(r"Component \d+ validates every request\.", prompt)
                statement = first.group() if first else "Every request is validated."
                with server.lock:
                    server.requests.append(task)
                    server.times.append(time.monotonic())
                    extra = dict(server.headers)
                content = json.dumps({
                    "schema_version": "boltzmann.candidates/v1", "task_id": task.get("task_id"), "producer": None,
                    "candidates": [{
                        "memory_type": "semantic", "evidence": [task["source"]], "locator": "L3", "confidence": "0.9",
                        "payload": {"kind": "fact", "label": statement.split(" validates")[0], "statement": statement,
                                    "subject": None},
                    }],
                })  # fmt: skip
                data = json.dumps({
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "tiny",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content, "refusal": None}}],
                    "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                              "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS},
                }).encode()  # fmt: skip
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = LoopbackServer(Handler).start()
        self.url = f"http://127.0.0.1:{self.http.port}/v1"

    def sources_asked(self) -> list[str]:
        with self.lock:
            return [task["source"] for task in self.requests]


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    server = ChatServer()
    yield server
    server.http.close()


@pytest.fixture
def docs(tmp_path: Path, brain: BrainRunner) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for n in range(SOURCES):
        body = (
            f"# Component {n}\n\nComponent {n} validates every request. " + "It logs the outcome of each check. " * 30
        )
        (root / f"c{n}.md").write_text(body + "\n")
    assert brain("init", "--actor", "ci@example.org").code == 0
    return root


def _ingest(brain: BrainRunner, chat: ChatServer, *extra: str) -> Any:
    return brain(
        "ingest", "docs", "--actor", "ci@example.org", "--proposer", "openai", "--model", "tiny",
        "--base-url", chat.url, "--concurrency", "1", "--json", *extra, env={"OPENAI_API_KEY": "sk-loopback"},
    )  # fmt: skip


def _budget_exhausted(result: dict[str, Any]) -> list[str]:
    return [o["origin"] for o in result["outcomes"] if any(p["code"] == "budget-exhausted" for p in o["problems"])]


def test_a_run_cut_short_by_the_budget_is_completed_by_the_next(
    brain: BrainRunner, docs: Path, chat: ChatServer
) -> None:
    # Each source is estimated at well under 1,500 tokens and really costs 960: room for three, not four.
    first = _ingest(brain, chat, "--max-tokens", "4000")
    assert first.code == 0, first
    result = first.json()
    usage = result["usage"]
    asked = chat.sources_asked()
    assert 1 <= len(asked) < SOURCES
    assert usage["total_tokens"] == len(asked) * (PROMPT_TOKENS + COMPLETION_TOKENS)  # reported, not estimated
    assert usage["total_tokens"] <= 4000 and usage["estimated"] is False
    held_back = _budget_exhausted(result)
    assert len(held_back) == SOURCES - len(asked) == usage["budget_exhausted"]
    assert result["validated"] == len(asked)

    second = _ingest(brain, chat)
    assert second.code == 0, second
    again = chat.sources_asked()
    assert len(again) == SOURCES and len(set(again)) == SOURCES  # every source asked exactly once over both runs
    assert second.json()["usage"]["budget_exhausted"] == 0
    assert _budget_exhausted(second.json()) == []
    third = _ingest(brain, chat)
    assert third.code == 0 and len(chat.sources_asked()) == SOURCES  # nothing left to ask
    members = brain("ls", "--type", "semantic", "--json").json()
    assert len(members) == SOURCES


def test_strict_turns_an_exhausted_budget_into_exit_1(brain: BrainRunner, docs: Path, chat: ChatServer) -> None:
    done = _ingest(brain, chat, "--max-tokens", "1200", "--strict")
    assert done.code == 1, done
    assert "--strict" in done.stderr


def test_cost_budget_with_prices_from_the_config_file(
    brain: BrainRunner, docs: Path, chat: ChatServer, tmp_path: Path
) -> None:
    # $10 and $30 per million: a request costs 900*10/1e6 + 60*30/1e6 = $0.0108.
    (tmp_path / "brain.toml").write_text('[ingest]\nprice = "input=10,output=30"\nmax-cost = "0.07"\n')
    done = _ingest(brain, chat)
    assert done.code == 0, done
    usage = done.json()["usage"]
    asked = len(chat.sources_asked())
    assert 1 <= asked < SOURCES
    assert usage["cost_usd"] == f"{asked * 0.0108:.6f}"
    assert float(usage["cost_usd"]) <= 0.07 and usage["max_cost_usd"] == "0.07"


def test_dry_run_calls_no_model_and_estimates(brain: BrainRunner, docs: Path, chat: ChatServer) -> None:
    done = _ingest(brain, chat, "--dry-run", "--price", "input=2.5,output=10")
    assert done.code == 0, done
    usage = done.json()["usage"]
    assert chat.requests == []
    assert usage["estimated"] is True
    assert usage["prompt_tokens"] > SOURCES * 1000 // 3  # at least the source text at 3 characters a token
    expected = (usage["prompt_tokens"] * 2.5 + usage["completion_tokens"] * 10) / 1e6
    assert abs(float(usage["cost_usd"]) - expected) < 1e-6
    people = brain("ingest", "docs", "--actor", "ci@example.org", "--proposer", "openai", "--model", "tiny",
                   "--base-url", chat.url, "--dry-run", env={"OPENAI_API_KEY": "sk-loopback"})  # fmt: skip
    assert "would spend about" in people.stdout and chat.requests == []
    assert brain("status", "--json").json()["snapshot"] is None  # nothing was written


def test_rate_limit_headers_pace_the_next_request(brain: BrainRunner, docs: Path, chat: ChatServer) -> None:
    chat.headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "400ms"}
    done = _ingest(brain, chat)
    assert done.code == 0, done
    gaps = [b - a for a, b in zip(chat.times, chat.times[1:], strict=False)]
    assert len(gaps) == SOURCES - 1
    assert min(gaps) >= 0.35


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--max-tokens", "-5"], "--max-tokens -5 must be zero or more"),
        (["--max-cost", "-1", "--price", "input=1,output=1"], "non-negative"),
        (["--max-cost", "5"], "--max-cost needs prices"),
        (["--max-cost", "5", "--price", "3"], "is not input=P or output=Q"),
        (["--max-cost", "five", "--price", "input=1,output=1"], "is not an amount in USD"),
        (["--price", "input=1"], "has no output price"),
    ],
)
def test_bad_limits_are_one_line_and_write_nothing(
    brain: BrainRunner, docs: Path, chat: ChatServer, options: list[str], message: str
) -> None:
    done = _ingest(brain, chat, *options)
    assert_one_line_error(done, 3)
    assert message in done.stderr
    assert chat.requests == []
    assert brain("status", "--json").json()["snapshot"] is None
