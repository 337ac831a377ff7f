"""When and how long to wait before re-trying a registry request: bounded exponential backoff with jitter.

Pure logic (no I/O) so the schedule is testable without a network: 408, 429 and 5xx answers and
connection failures are retried; a `Retry-After` header (seconds or HTTP date) is honored up to a cap.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to try one request and how long to wait in between."""

    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 30.0

    def backoff(self, attempt: int, rng: random.Random | None = None) -> float:
        """Full-jitter exponential delay before try number `attempt + 1` (attempt counts from 0)."""
        ceiling = min(self.max_delay, self.base_delay * (2**attempt))
        return (rng or random).uniform(ceiling / 2, ceiling)

    def delay(self, attempt: int, retry_after: str | None, now: datetime | None = None) -> float:
        """The wait before the next try: the server's `Retry-After` if it gave one (capped), else backoff."""
        hinted = parse_retry_after(retry_after, now)
        if hinted is not None:
            return min(hinted, self.max_retry_after)
        return self.backoff(attempt)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header value, or None if absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
