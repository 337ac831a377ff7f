"""Retry schedule: bounded exponential backoff with jitter, Retry-After honoured up to a cap."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from oci.retry import RetryPolicy, parse_retry_after


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=4.0)
    rng = random.Random(1)
    delays = [policy.backoff(n, rng) for n in range(8)]
    assert 0.25 <= delays[0] <= 0.5
    assert all(d <= 4.0 for d in delays)
    assert delays[6] >= 2.0


def test_retry_after_seconds_and_date_are_capped() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    policy = RetryPolicy(max_retry_after=10.0)
    assert policy.delay(0, "3", now) == 3.0
    assert policy.delay(0, "3600", now) == 10.0
    assert parse_retry_after("Thu, 01 Jan 2026 00:00:05 GMT", now) == 5.0
    assert parse_retry_after("Wed, 31 Dec 2025 00:00:00 GMT", now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None) is None
