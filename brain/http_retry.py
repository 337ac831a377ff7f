"""The retry policy of the OpenAI-compatible endpoints (proposer and embedder): which answers are worth
another try, how long a server may ask us to wait, and the jittered backoff otherwise. Pure: no I/O."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping

RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
MAX_RETRY_AFTER = 120.0


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, or `Retry-After` as seconds or an HTTP date)."""
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        if value.strip().isdigit():
            return float(value)
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (ValueError, TypeError, OverflowError):
        return None


def backoff_delay(attempt: int, wait: float | None, *, backoff: float, max_backoff: float) -> float:
    """The server's wait, capped; else full-jitter exponential backoff."""
    if wait is not None:
        return min(wait, MAX_RETRY_AFTER)
    return random.uniform(0, min(max_backoff, backoff * 2**attempt))
