"""`openai`: any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp) as a proposer.

Requests use structured output (`response_format` json_schema, `strict: true`) with the answer schema
narrowed to the task's allowed types, in its most portable form (no `pattern`/`minItems`). The answer is
parsed as hostile input like any other; the producer it names is replaced by `{"kind": "model", "id":
<model>}` (a model cannot vouch for itself).

Retries are ours, not the client's (`max_retries=0`), so the policy is explicit and tested: 429, 5xx,
timeouts and connection failures are retried up to `max_retries` times, waiting the server's
`retry-after-ms`/`Retry-After` when given, else exponential backoff with full jitter. Long sources are
sent in chunks of at most `max_input_chars` (cut at paragraph or page breaks); usage is summed. The
server's `x-ratelimit-*` headers pace the next request (it waits for the window to reset rather than run
into a 429), and `estimate` says what a source would cost before it is sent (`ingest.budget`).
The API key is never logged, never part of the cache key, and is scrubbed from error details.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import openai

from brain.blocks.provenance import Producer, ProducerKind
from brain.errors import UsageError
from brain.http_retry import RETRYABLE_STATUS, backoff_delay, retry_after
from ingest.budget import CHARS_PER_TOKEN, estimate_usage
from ingest.proposers.base import (
    ProposalOutcome,
    ProposalResult,
    Proposer,
    SourceText,
    TokenUsage,
    propose_many,
    sum_usage,
)
from ingest.proposers.candidates import Candidate, CandidateSet, Task, candidates_json_schema, parse_candidate_set
from ingest.proposers.errors import ProposerError
from ingest.proposers.ratelimit import RateLimiter

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_FRAMING_CHARS = 40  # "TASK:", "SOURCE TEXT (part i of n):" and the message wrappers
SYSTEM_PROMPT = (
    "You extract durable knowledge from one source document for a Boltzmann knowledge brain. Answer with one "
    "JSON object following the given schema. Propose only what the text states: semantic blocks (concepts, "
    "facts, formulas, relations, constraints: a short label and a one-sentence statement), procedural blocks "
    "(a goal and ordered steps) and episodic blocks (dated events, occurred_at as UTC YYYY-MM-DDTHH:MM:SSZ), "
    "limited to the task's allowed_memory_types. Every candidate's evidence is exactly [task.source]. A locator "
    "says where in the text (e.g. \"L5-L6\" or \"p.3\"). Never invent facts; an empty candidates list is fine."
)


class OpenAIProposer(Proposer):
    """Proposes through a chat-completions endpoint with structured output (`brain/openai`)."""

    id = "brain/openai"
    version = "1"

    def __init__(
        self,
        *,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        concurrency: int = 4,
        max_input_chars: int = 48_000,
        temperature: str | None = None,
    ) -> None:
        if not model:
            raise UsageError("the openai proposer needs a model: --model or BRAIN_OPENAI_MODEL")
        self.model: str | None = model
        self.base_url = base_url
        self.timeout, self.max_retries = timeout, max_retries
        self.backoff, self.max_backoff = backoff, max_backoff
        self.concurrency = max(1, concurrency)
        self.max_input_chars = max(1000, max_input_chars)
        self.temperature = temperature
        # Strings only: the parameters feed the JCS cache key, which refuses floats.
        self.parameters: dict[str, Any] = {
            "base_url": base_url,
            "max_input_chars": self.max_input_chars,
            "temperature": temperature,
        }
        self._secret = api_key or ""
        self._limiter = RateLimiter()
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "no-key", timeout=timeout, max_retries=0
        )

    def __repr__(self) -> str:
        return f"OpenAIProposer(model={self.model!r}, base_url={self.base_url!r})"

    @classmethod
    def from_options(cls, options: Mapping[str, Any], environ: Mapping[str, str]) -> OpenAIProposer:
        """Build from CLI options, falling back to `BRAIN_OPENAI_*` / `OPENAI_*` environment variables."""
        base_url = options.get("base_url") or environ.get("BRAIN_OPENAI_BASE_URL") or environ.get("OPENAI_BASE_URL")
        api_key = options.get("api_key") or environ.get("BRAIN_OPENAI_API_KEY") or environ.get("OPENAI_API_KEY")
        if not api_key and not base_url:
            raise UsageError(
                "the openai proposer needs an API key for api.openai.com: set BRAIN_OPENAI_API_KEY or OPENAI_API_KEY "
                "(or point BRAIN_OPENAI_BASE_URL at a local server)"
            )
        tuning = {k: options[k] for k in ("timeout", "max_retries", "concurrency", "max_input_chars", "temperature")
                  if options.get(k) is not None}
        return cls(
            model=options.get("model") or environ.get("BRAIN_OPENAI_MODEL") or "",
            base_url=base_url or DEFAULT_BASE_URL,
            api_key=api_key,
            **tuning,
        )

    def propose(self, task: Task, source: SourceText) -> ProposalResult:
        """Ask the model about one source (in chunks when long); raises `ProposerError`."""
        chunks = split_text(source.text, self.max_input_chars)
        schema = candidates_json_schema(tuple(m.value for m in task.allowed_memory_types), constraints=False)
        candidates: list[Candidate] = []
        usages: list[TokenUsage | None] = []
        for index, chunk in enumerate(chunks):
            answer, usage = self._ask(task, schema, chunk, (index + 1, len(chunks)))
            candidates.extend(answer.candidates)
            usages.append(usage)
        producer = Producer(kind=ProducerKind.MODEL, id=self.model or "")
        merged = CandidateSet(task_id=task.task_id, producer=producer, candidates=tuple(candidates))
        return ProposalResult(merged, sum_usage(usages))

    def estimate(self, task: Task, source: SourceText) -> TokenUsage:
        """The documented estimate (`ingest.budget`) for the requests `propose` would send, prompt included."""
        chunks = split_text(source.text, self.max_input_chars)
        schema = candidates_json_schema(tuple(m.value for m in task.allowed_memory_types), constraints=False)
        fixed = len(SYSTEM_PROMPT) + len(json.dumps(task.to_json())) + len(json.dumps(schema)) + _FRAMING_CHARS
        return estimate_usage(len(source.text), fixed, requests=len(chunks))

    def propose_many(self, jobs: Sequence[tuple[Task, SourceText]], concurrency: int = 1) -> list[ProposalOutcome]:
        """Propose for many sources with at most this proposer's own `concurrency` requests in flight, in job order."""
        return propose_many(self.propose, jobs, self.concurrency)

    def _ask(
        self, task: Task, schema: dict[str, Any], text: str, part: tuple[int, int]
    ) -> tuple[CandidateSet, TokenUsage | None]:
        where = f" (part {part[0]} of {part[1]})" if part[1] > 1 else ""
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": f"TASK:\n{json.dumps(task.to_json())}\n\nSOURCE TEXT{where}:\n{text}"},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "boltzmann_candidates", "schema": schema, "strict": True},
            },
        }
        if self.temperature is not None:
            request["temperature"] = float(self.temperature)
        self._limiter.wait(math.ceil(len(text) / CHARS_PER_TOKEN))
        response = self._with_retries(lambda: self._paced(request))
        if not response.choices:
            raise ProposerError("proposer-garbage", "the endpoint answered with no choices")
        choice = response.choices[0]
        if getattr(choice.message, "refusal", None):
            raise ProposerError("proposer-refused", self._scrub(f"the model refused: {choice.message.refusal}"))
        if choice.finish_reason == "length":
            raise ProposerError("proposer-garbage", "the answer was cut off at the output token limit")
        content = choice.message.content
        if not content:
            raise ProposerError("proposer-garbage", "the answer has no content")
        usage = None
        if response.usage is not None:
            usage = TokenUsage(
                prompt_tokens=response.usage.prompt_tokens or 0,
                completion_tokens=response.usage.completion_tokens or 0,
                total_tokens=response.usage.total_tokens or 0,
            )
        return parse_candidate_set(content.encode("utf-8"), task), usage

    def _paced(self, request: dict[str, Any]) -> Any:
        """One request; its rate-limit headers pace the next ones (`ingest.proposers.ratelimit`)."""
        try:
            raw = self._client.chat.completions.with_raw_response.create(**request)
        except openai.APIStatusError as e:
            self._limiter.observe(e.response.headers)
            raise
        self._limiter.observe(raw.headers)
        return raw.parse()

    def _with_retries(self, call: Callable[[], Any]) -> Any:
        for attempt in range(self.max_retries + 1):
            try:
                return call()
            except openai.APIStatusError as e:
                retry = e.status_code in RETRYABLE_STATUS
                detail = f"{self.base_url} answered HTTP {e.status_code}: {e.message}"
                failure = ProposerError("proposer-http", self._scrub(detail))
                wait = retry_after(e.response.headers)
            except openai.APITimeoutError:
                retry, wait = True, None
                failure = ProposerError("proposer-timeout", f"{self.base_url} did not answer within {self.timeout:g} s")
            except openai.APIConnectionError as e:
                retry, wait = True, None
                detail = f"cannot reach {self.base_url}: {e.__cause__ or e}"
                failure = ProposerError("proposer-http", self._scrub(detail))
            except (openai.APIError, ValueError) as e:
                # The client raises bare JSON/validation errors for a body it cannot decode.
                detail = f"unreadable response from {self.base_url}: {e}"
                raise ProposerError("proposer-garbage", self._scrub(detail)) from None
            if not retry or attempt == self.max_retries:
                raise failure
            time.sleep(self._delay(attempt, wait))
        raise AssertionError("unreachable")

    def _delay(self, attempt: int, wait: float | None) -> float:
        return backoff_delay(attempt, wait, backoff=self.backoff, max_backoff=self.max_backoff)

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text


def split_text(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` chars, cut at page, paragraph, line or word breaks when possible."""
    pieces = []
    while len(text) > limit:
        window = text[:limit]
        cut = max(window.rfind(sep) for sep in ("\f", "\n\n"))
        if cut < limit // 2:
            cut = max(window.rfind("\n"), window.rfind(" "))
        if cut < limit // 2:
            cut = limit - 1
        pieces.append(text[: cut + 1])
        text = text[cut + 1 :]
    return [*pieces, text] if text or not pieces else pieces
