"""Pacing from the server's rate-limit headers (`x-ratelimit-remaining-*`, `x-ratelimit-reset-*`).

OpenAI-compatible servers say, on every answer, how many requests and tokens are left in the current window
and when it resets (`6m0s`, `1.5s`, `20ms`). Rather than run into a 429 (and its `Retry-After`, which the
proposer also honours), the next request waits for the reset when the window has no request left, or
fewer tokens left than the request is expected to use. Waits are capped, like `Retry-After`.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping

MAX_WAIT = 120.0
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_reset(value: str | None) -> float | None:
    """Seconds in a reset header (`1m30s`, `0.5s`, `20ms`, or plain seconds), None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(number) * _UNIT[unit] for number, unit in parts)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class RateLimiter:
    """Remembers the last rate-limit headers and makes the next request wait when they say it must."""

    def __init__(
        self, *, sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._sleep, self._clock = sleep, clock
        self._lock = threading.Lock()
        self._requests_left: int | None = None
        self._tokens_left: int | None = None
        self._requests_reset_at = self._tokens_reset_at = 0.0
        self.waited = 0.0

    def observe(self, headers: Mapping[str, str]) -> None:
        """Record what an answer's headers say (case-insensitive names)."""
        lowered = {k.lower(): v for k, v in headers.items()}
        now = self._clock()
        with self._lock:
            requests = _int(lowered.get("x-ratelimit-remaining-requests"))
            tokens = _int(lowered.get("x-ratelimit-remaining-tokens"))
            if requests is not None:
                self._requests_left = requests
                reset = parse_reset(lowered.get("x-ratelimit-reset-requests")) or 0.0
                self._requests_reset_at = now + min(reset, MAX_WAIT)
            if tokens is not None:
                self._tokens_left = tokens
                self._tokens_reset_at = now + min(parse_reset(lowered.get("x-ratelimit-reset-tokens")) or 0.0, MAX_WAIT)

    def delay(self, tokens: int) -> float:
        """How long a request expected to use `tokens` should wait now (0 when the window allows it)."""
        now = self._clock()
        with self._lock:
            wait = 0.0
            if self._requests_left is not None and self._requests_left <= 0:
                wait = max(wait, self._requests_reset_at - now)
            if self._tokens_left is not None and self._tokens_left < tokens:
                wait = max(wait, self._tokens_reset_at - now)
            return min(max(wait, 0.0), MAX_WAIT)

    def wait(self, tokens: int) -> None:
        """Sleep for `delay(tokens)`, then count the request against the window."""
        pause = self.delay(tokens)
        if pause > 0:
            self.waited += pause
            self._sleep(pause)
        with self._lock:
            if pause > 0:  # the window reset while we waited
                self._requests_left = self._tokens_left = None
            elif self._requests_left is not None:
                self._requests_left -= 1
