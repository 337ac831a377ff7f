"""The budget, prices and estimates of cost control, and pacing from rate-limit headers (pure logic)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from brain.errors import UsageError
from ingest.budget import Budget, Estimate, Prices, estimate, parse_money, parse_prices
from ingest.proposers.base import TokenUsage
from ingest.proposers.ratelimit import RateLimiter, parse_reset


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("input=2.5,output=10", Prices(Decimal("2.5"), Decimal(10))),
        ("output=$10/M, input=0.15/1M", Prices(Decimal("0.15"), Decimal(10))),
        ("INPUT=1,OUTPUT=2/million", Prices(Decimal(1), Decimal(2))),
    ],
)
def test_prices_parse(text: str, expected: Prices) -> None:
    assert parse_prices(text) == expected


@pytest.mark.parametrize("text", ["2.5", "input=2.5", "input=abc,output=1", "input=-1,output=2", "in=1,out=2", ""])
def test_a_price_without_its_unit_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="--price"):
        parse_prices(text)


def test_money() -> None:
    assert parse_money("$5") == Decimal(5)
    for bad in ("-1", "five", "nan", "inf"):
        with pytest.raises(UsageError):
            parse_money(bad)


def test_negative_budget_and_cost_without_prices_are_refused() -> None:
    with pytest.raises(UsageError, match="--max-tokens"):
        Budget(max_tokens=-1)
    with pytest.raises(UsageError, match="needs prices"):
        Budget(max_cost=Decimal(1))


def test_estimate_is_documented_and_generous() -> None:
    guess = estimate(3000, fixed_prompt_characters=300)
    assert guess == Estimate(prompt_tokens=1100, completion_tokens=275 + 256)
    assert estimate(3000, max_output=100).completion_tokens == 100
    assert estimate(3000, requests=2).completion_tokens == 250 + 512


def test_budget_stops_before_it_would_be_exceeded_and_stays_stopped() -> None:
    budget = Budget(max_tokens=1000)
    first, second = Estimate(400, 100), Estimate(400, 200)
    assert budget.reserve(first)
    assert not budget.reserve(second)  # 500 + 600 > 1000: refused before it is sent
    assert budget.exhausted
    assert not budget.reserve(Estimate(1, 1))  # once stopped, stopped: the rest waits for the next run
    budget.settle(first, TokenUsage(prompt_tokens=380, completion_tokens=90, total_tokens=470))
    assert budget.spent.total_tokens == 470 and budget.reserved_tokens == 0


def test_cost_budget_uses_the_prices() -> None:
    budget = Budget(max_cost=Decimal("0.01"), prices=Prices(Decimal(2), Decimal(8)))  # USD per million
    assert budget.reserve(Estimate(2000, 500))  # 0.004 + 0.004 = 0.008
    assert budget.reserve(Estimate(1000, 0))  # 0.008 + 0.002 reaches the limit exactly: allowed
    assert not budget.reserve(Estimate(1, 0))  # anything more would exceed it


def test_reported_usage_replaces_the_estimate() -> None:
    budget = Budget(max_cost=Decimal(1), prices=Prices(Decimal(1), Decimal(1)))
    held = Estimate(10, 10)
    assert budget.reserve(held)
    budget.settle(held, None)  # no usage reported: the estimate is what was spent
    assert budget.spent.total_tokens == 20
    assert budget.spent_cost == Decimal(20) / Decimal(1_000_000)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("2.5", 2.5), ("soon", None), (None, None)]
)
def test_reset_durations(text: str | None, seconds: float | None) -> None:
    assert parse_reset(text) == seconds


def test_rate_limiter_waits_for_the_reset_when_the_window_is_spent() -> None:
    now = [100.0]
    slept: list[float] = []
    limiter = RateLimiter(sleep=lambda s: (slept.append(s), now.__setitem__(0, now[0] + s)), clock=lambda: now[0])
    limiter.observe(
        {
            "X-RateLimit-Remaining-Requests": "5", "x-ratelimit-remaining-tokens": "1000",
            "x-ratelimit-reset-tokens": "2s",
        }
    )
    limiter.wait(500)
    assert slept == []
    limiter.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s"})
    limiter.wait(10)
    assert slept == [1.5]
    limiter.observe({"x-ratelimit-remaining-tokens": "100", "x-ratelimit-reset-tokens": "3s"})
    limiter.wait(500)  # fewer tokens left than the request needs
    assert slept == [1.5, 3.0]
    limiter.observe({"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "10m"})
    assert limiter.delay(1) == 120.0  # capped like Retry-After
