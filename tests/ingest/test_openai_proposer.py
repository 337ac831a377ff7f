"""The openai proposer against a REAL loopback HTTP server speaking the chat-completions API, through the
real `openai` client: structured-output requests, retries with Retry-After, 5xx, garbage, timeouts,
concurrency and token usage."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from brain.errors import UsageError
from brain.identity import BlockId
from ingest.proposers.base import SourceText
from ingest.proposers.candidates import Task
from ingest.proposers.errors import ProposerError
from brain.http_retry import retry_after as _retry_after
from ingest.proposers.openai import OpenAIProposer, split_text
from tests.loopback import LoopbackServer

SOURCE = BlockId("8" * 64)
KEY = "sk-test-SECRET-0123456789"
TASK = Task(source=SOURCE, allowed_memory_types=["semantic"], task_id="t-1")
TEXT = SourceText.of(SOURCE, "text/plain", "The FFT is a fast algorithm.")


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(
    content: str | None, *, usage: tuple[int, int] = (10, 5), finish: str = "stop", refusal: str | None = None
) -> dict:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "test-model",
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", "content": content, "refusal": refusal}}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def answer(label: str = "FFT", **extra: Any) -> str:
    candidate = {"memory_type": "semantic", "evidence": [str(SOURCE)], "locator": "L1", "confidence": "0.9",
                 "payload": {"kind": "concept", "label": label, "statement": f"{label} is fast.", "subject": None}}
    return json.dumps({"schema_version": "boltzmann.candidates/v1", "task_id": None, "producer": None,
                       "candidates": [candidate]} | extra)


class FakeEndpoint:
    """A scripted chat-completions server on 127.0.0.1; unscripted requests get a good answer."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with endpoint.lock:
                    endpoint.requests.append(body)
                    endpoint.headers.append({k.lower(): v for k, v in self.headers.items()})
                    reply = endpoint.replies.pop(0) if endpoint.replies else Reply(body=completion(answer()))
                    endpoint.in_flight += 1
                    endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
                try:
                    self.server.closing.wait(reply.delay)  # type: ignore[attr-defined]  # a LoopbackServer
                finally:
                    # Counted out before the answer goes: once the client has it, it may send the next request,
                    # whose handler could otherwise count itself in before this one counted itself out.
                    with endpoint.lock:
                        endpoint.in_flight -= 1
                try:
                    data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = LoopbackServer(Handler).start()
        self.url = f"http://127.0.0.1:{self.server.port}/v1"

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    server = FakeEndpoint()
    yield server
    server.close()


def _proposer(endpoint: FakeEndpoint, **options: Any) -> OpenAIProposer:
    settings = {"model": "test-model", "base_url": endpoint.url, "api_key": KEY, "timeout": 5.0,
                "max_retries": 3, "backoff": 0.01} | options
    proposer = OpenAIProposer(**{k: v for k, v in settings.items() if k != "backoff"})
    proposer.backoff = settings["backoff"]
    return proposer


def _error(proposer: OpenAIProposer) -> ProposerError:
    with pytest.raises(ProposerError) as caught:
        proposer.propose(TASK, TEXT)
    assert KEY not in str(caught.value)
    return caught.value


def test_structured_request_and_parsed_answer(endpoint: FakeEndpoint) -> None:
    result = _proposer(endpoint).propose(TASK, TEXT)
    [candidate] = result.candidates.candidates
    assert candidate.payload == {"kind": "concept", "label": "FFT", "statement": "FFT is fast.", "subject": None}
    assert result.candidates.producer.to_json() == {"kind": "model", "id": "test-model"}
    assert result.candidates.task_id == "t-1"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.total_tokens) == (10, 5, 15)
    [request] = endpoint.requests
    assert request["model"] == "test-model" and "temperature" not in request
    schema = request["response_format"]["json_schema"]
    assert request["response_format"]["type"] == "json_schema"
    assert schema["name"] == "boltzmann_candidates" and schema["strict"] is True
    candidate_schema = schema["schema"]["properties"]["candidates"]["items"]["anyOf"][0]
    assert candidate_schema["properties"]["memory_type"]["enum"] == ["semantic"]
    assert "pattern" not in json.dumps(schema) and "minItems" not in json.dumps(schema)
    assert "The FFT is a fast algorithm." in request["messages"][1]["content"]
    assert endpoint.headers[0]["authorization"] == f"Bearer {KEY}"


def test_model_claimed_producer_is_replaced(endpoint: FakeEndpoint) -> None:
    claim = {"kind": "actor", "id": "root@example.org"}
    endpoint.replies = [Reply(body=completion(answer(producer=claim)))]
    assert _proposer(endpoint).propose(TASK, TEXT).candidates.producer.kind == "model"


def test_429_then_200_honors_retry_after(endpoint: FakeEndpoint) -> None:
    endpoint.replies = [Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"})]
    started = time.monotonic()
    result = _proposer(endpoint).propose(TASK, TEXT)
    assert time.monotonic() - started >= 1.0
    assert len(endpoint.requests) == 2 and len(result.candidates.candidates) == 1


def test_retry_after_ms_and_5xx_backoff(endpoint: FakeEndpoint) -> None:
    endpoint.replies = [Reply(503, {"error": {"message": "busy"}}, {"retry-after-ms": "50"}),
                        Reply(500, {"error": {"message": "oops"}}), Reply(502, b"<html>bad gateway</html>")]
    result = _proposer(endpoint).propose(TASK, TEXT)
    assert len(endpoint.requests) == 4 and result.candidates.candidates


def test_persistent_5xx_gives_up(endpoint: FakeEndpoint) -> None:
    endpoint.replies = [Reply(500, {"error": {"message": f"broken {KEY}"}})] * 10
    error = _error(_proposer(endpoint, max_retries=2))
    assert error.code == "proposer-http" and "HTTP 500" in error.detail and "***" in error.detail
    assert len(endpoint.requests) == 3


def test_client_errors_are_not_retried(endpoint: FakeEndpoint) -> None:
    endpoint.replies = [Reply(401, {"error": {"message": "bad key"}})]
    assert _error(_proposer(endpoint)).code == "proposer-http"
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (Reply(body=completion("this is not json")), "proposer-garbage"),
        (Reply(body=completion('{"schema_version": "boltzmann.candidates/v1"}')), "proposer-garbage"),
        (Reply(body=completion(None)), "proposer-garbage"),
        (Reply(body=completion(answer(), finish="length")), "proposer-garbage"),
        (Reply(body=completion(None, refusal="I cannot help")), "proposer-refused"),
        (Reply(body=completion(answer(task_id="other-task"))), "proposer-garbage"),
        (Reply(body=b"{not json at all"), "proposer-garbage"),
    ],
)
def test_malformed_answers(endpoint: FakeEndpoint, reply: Reply, code: str) -> None:
    endpoint.replies = [reply]
    assert _error(_proposer(endpoint)).code == code


def test_slow_response_times_out(endpoint: FakeEndpoint) -> None:
    endpoint.replies = [Reply(body=completion(answer()), delay=3.0)] * 2
    started = time.monotonic()
    error = _error(_proposer(endpoint, timeout=0.3, max_retries=1))
    assert error.code == "proposer-timeout" and time.monotonic() - started < 2.5
    assert len(endpoint.requests) == 2


def test_unreachable_endpoint(endpoint: FakeEndpoint) -> None:
    url = endpoint.url
    endpoint.close()
    proposer = _proposer(endpoint, base_url=url, max_retries=1)
    assert _error(proposer).code == "proposer-http"


def test_propose_many_is_bounded_and_sums_usage(endpoint: FakeEndpoint) -> None:
    endpoint.replies = [Reply(body=completion(answer(f"L{i}")), delay=0.2) for i in range(8)]
    proposer = _proposer(endpoint, concurrency=3)
    jobs = [(Task(source=SOURCE, allowed_memory_types=["semantic"], task_id=str(i)), TEXT) for i in range(8)]
    outcomes = proposer.propose_many(jobs)
    assert [o.result.candidates.task_id for o in outcomes] == [str(i) for i in range(8)]
    assert endpoint.max_in_flight == 3
    total = sum(o.result.usage.total_tokens for o in outcomes)
    assert total == 8 * 15


def test_long_text_is_chunked_and_usage_summed(endpoint: FakeEndpoint) -> None:
    text = SourceText.of(SOURCE, "text/plain", ("word " * 300 + "\n\n") * 10)
    result = _proposer(endpoint, max_input_chars=4000).propose(TASK, text)
    # Ten 1,502-char paragraphs, cut at paragraph breaks under 4,000 chars: two per request.
    assert len(endpoint.requests) == 5 and "part 1 of 5" in endpoint.requests[0]["messages"][1]["content"]
    assert result.usage.total_tokens == 75 and len(result.candidates.candidates) == 5


def test_options_and_environment() -> None:
    env = {"BRAIN_OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "BRAIN_OPENAI_MODEL": "llama3", "OPENAI_API_KEY": KEY}
    proposer = OpenAIProposer.from_options({"temperature": "0"}, env)
    assert (proposer.model, proposer.base_url, proposer.parameters["temperature"]) == (
        "llama3", env["BRAIN_OPENAI_BASE_URL"], "0",
    )
    assert KEY not in repr(proposer) and KEY not in json.dumps(proposer.parameters)
    assert OpenAIProposer.from_options({"model": "m"}, env).model == "m"
    with pytest.raises(UsageError, match="needs a model"):
        OpenAIProposer.from_options({}, {"OPENAI_API_KEY": KEY})
    with pytest.raises(UsageError, match="API key"):
        OpenAIProposer.from_options({"model": "m"}, {})
    assert OpenAIProposer.from_options({"model": "m"}, {"OPENAI_BASE_URL": "http://localhost:11434/v1"}).model == "m"


def test_retry_after_parsing_and_split() -> None:
    assert _retry_after({"retry-after": "3"}) == 3.0
    assert _retry_after({"retry-after-ms": "250"}) == 0.25
    assert _retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert _retry_after({"retry-after": "soon"}) is None and _retry_after({}) is None
    pieces = split_text("abc " * 1000, 1000)
    assert "".join(pieces) == "abc " * 1000 and all(len(p) <= 1000 for p in pieces)
