"""Embeddings through any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, llama.cpp), with
the official `openai` client.

Configured like the `openai` proposer (`ingest.proposers.openai`): `--base-url`, else `BRAIN_OPENAI_BASE_URL`
or `OPENAI_BASE_URL`; the key from `BRAIN_OPENAI_API_KEY` or `OPENAI_API_KEY`; the model from `--model`,
else `BRAIN_EMBED_MODEL`. Retries are ours (`max_retries=0` on the client), with the proposer's policy:
408/409/429/5xx, timeouts and connection failures are retried up to `max_retries` times, waiting the
server's `retry-after-ms`/`Retry-After` when given (at most 120 s), else exponential backoff with full
jitter. The answer is hostile input: one finite vector per input, all of one dimension. The API key is
never logged and is scrubbed from error details.

`openai` is imported when the first `Embedder` is made (it costs more to import than a whole lexical search),
so a command that never embeds never pays for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from brain.errors import RemoteError, UsageError
from brain.http_retry import RETRYABLE_STATUS, backoff_delay, retry_after

if TYPE_CHECKING:
    import openai

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_INPUT_CHARS = 8000  # a passage is at most 1,400 characters; a long statement is cut here
BATCH = 128


class EmbeddingError(RemoteError):
    """The endpoint could not be reached, refused, or answered something that is not the embeddings asked for."""


@dataclass(frozen=True)
class EmbedSettings:
    """Where and how to embed."""

    model: str
    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = None
    timeout: float = 60.0
    max_retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    batch: int = BATCH

    @classmethod
    def from_environ(
        cls, environ: Mapping[str, str], *, model: str | None = None, base_url: str | None = None,
        required: bool = True, **tuning: Any,
    ) -> EmbedSettings | None:
        """Options over `BRAIN_OPENAI_*`/`OPENAI_*`/`BRAIN_EMBED_MODEL`; None (or, when `required`, a
        `UsageError`) when no endpoint or model is configured."""
        base = base_url or environ.get("BRAIN_OPENAI_BASE_URL") or environ.get("OPENAI_BASE_URL")
        key = environ.get("BRAIN_OPENAI_API_KEY") or environ.get("OPENAI_API_KEY")
        name = model or environ.get("BRAIN_EMBED_MODEL")
        if not name:
            if required:
                raise UsageError("no embedding model: give --model or set BRAIN_EMBED_MODEL",
                                 hint="e.g. --model nomic-embed-text (Ollama) or text-embedding-3-small (OpenAI)")
            return None
        if not base and not key:
            if required:
                raise UsageError("no embeddings endpoint: set BRAIN_OPENAI_API_KEY or OPENAI_API_KEY for "
                                 "api.openai.com, or give --base-url (e.g. http://localhost:11434/v1 for Ollama)")
            return None
        return cls(model=name, base_url=base or DEFAULT_BASE_URL, api_key=key, **tuning)


class Embedder:
    """Turns texts into float32 vectors through the endpoint (`embed`)."""

    def __init__(self, settings: EmbedSettings, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.requests = 0
        self._sleep = sleep
        self._secret = settings.api_key or ""
        import openai  # here, not at the top: see the module's docstring

        self._openai = openai
        self._client: openai.OpenAI = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key or "no-key",
                                     timeout=settings.timeout, max_retries=0)

    def __repr__(self) -> str:
        return f"Embedder(model={self.settings.model!r}, base_url={self.settings.base_url!r})"

    def close(self) -> None:
        """Close the client's connections."""
        self._client.close()

    def embed(self, texts: Sequence[str], *, dimension: int | None = None,
              on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        """One row per text (float32, shape (len(texts), D)); `dimension`: the D the answer must have."""
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), max(1, self.settings.batch)):
            batch = [(t or " ")[:MAX_INPUT_CHARS] for t in texts[start : start + self.settings.batch]]
            block = self._with_retries(lambda b=batch: self._ask(b))  # type: ignore[misc]
            if dimension is None:
                dimension = block.shape[1]
            elif block.shape[1] != dimension:
                raise EmbeddingError(
                    f"{self.settings.base_url} returned vectors of dimension {block.shape[1]} for model "
                    f"{self.settings.model!r}; expected {dimension}",
                    hint="the endpoint serves a different model than the one the index was made with; "
                         "use the same model, or embed again with another --model")
            rows.append(block)
            if on_batch is not None:
                on_batch(len(batch))
        if not rows:
            return np.zeros((0, dimension or 0), dtype=np.float32)
        return np.concatenate(rows)

    def _ask(self, batch: list[str]) -> np.ndarray:
        raw = self._client.embeddings.with_raw_response.create(
            model=self.settings.model, input=batch, encoding_format="float")
        self.requests += 1
        try:
            body = orjson.loads(raw.http_response.content)
            data = body["data"]
            ordered = sorted(data, key=lambda d: d["index"])
            if [d["index"] for d in ordered] != list(range(len(batch))):
                raise ValueError(f"{len(data)} embeddings for {len(batch)} inputs")
            block = np.asarray([d["embedding"] for d in ordered], dtype=np.float32)
        except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as e:
            raise EmbeddingError(self._scrub(f"unreadable embeddings from {self.settings.base_url}: {e}")) from None
        if block.ndim != 2 or block.shape[1] == 0 or not np.isfinite(block).all():
            raise EmbeddingError(f"{self.settings.base_url} returned ragged, empty or non-finite vectors")
        return block

    def _with_retries(self, call: Callable[[], np.ndarray]) -> np.ndarray:
        settings, openai = self.settings, self._openai
        for attempt in range(settings.max_retries + 1):
            try:
                return call()
            except openai.APIStatusError as e:
                retry = e.status_code in RETRYABLE_STATUS
                answered = f"{settings.base_url} answered HTTP {e.status_code}: {e.message}"
                failure = EmbeddingError(self._scrub(answered))
                wait = retry_after(e.response.headers)
            except openai.APITimeoutError:
                retry, wait = True, None
                failure = EmbeddingError(f"{settings.base_url} did not answer within {settings.timeout:g} s")
            except openai.APIConnectionError as e:
                retry, wait = True, None
                failure = EmbeddingError(self._scrub(f"cannot reach {settings.base_url}: {e.__cause__ or e}"))
            if not retry or attempt == settings.max_retries:
                raise failure
            self._sleep(self._delay(attempt, wait))
        raise AssertionError("unreachable")

    def _delay(self, attempt: int, wait: float | None) -> float:
        return backoff_delay(attempt, wait, backoff=self.settings.backoff, max_backoff=self.settings.max_backoff)

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text
