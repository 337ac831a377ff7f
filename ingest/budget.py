"""Cost control for model proposers: prices, token estimates, and the budget the answer sources consult.

A run may be given `--max-tokens N` and/or `--max-cost USD` (which needs prices: `--price input=P,output=Q`
in USD per million tokens, or `price` in the config file). Before each request the budget is asked whether
the request's *estimate* still fits in what is left; the first one that does not fit stops proposing for
the rest of the run: those sources are reported `budget-exhausted`, are not cached, and are proposed by the
next run (whose cache answers everything this run did). After each answer the *reported* usage replaces the
estimate.

The estimate (no tokenizer ships offline for every model: `tiktoken` downloads its encodings at run time) is
documented and deliberately high, so a run stops early rather than late:

- input tokens = ceil(characters / 3) + the fixed prompt (system prompt, schema, instructions) per request;
  English averages about 4 characters per token with OpenAI's tokenizers, so a third over-counts;
- output tokens = ceil(input tokens / 4) + 256, capped by the request's own output limit when it has one.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from brain.errors import UsageError
from brain.frozen import FrozenModel
from ingest.proposers.base import TokenUsage

CHARS_PER_TOKEN = 3
OUTPUT_SHARE = 4
OUTPUT_BASE = 256
PER_MILLION = Decimal(1_000_000)
BUDGET_EXHAUSTED = "budget-exhausted"
_PRICE_PART = re.compile(
    r"^\s*(input|output)\s*=\s*\$?\s*([0-9]+(?:\.[0-9]+)?)\s*(?:/\s*(?:1?m|million))?\s*$", re.IGNORECASE
)


@dataclass(frozen=True)
class Prices:
    """USD per million input (prompt) tokens and per million output (completion) tokens."""

    input: Decimal
    output: Decimal

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal:
        """What that many tokens cost, in USD."""
        return (self.input * prompt_tokens + self.output * completion_tokens) / PER_MILLION


def parse_prices(text: str) -> Prices:
    """`input=P,output=Q` (USD per million tokens; `$` and `/M` allowed) as `Prices`; raises `UsageError`."""
    found: dict[str, Decimal] = {}
    for part in text.split(","):
        match = _PRICE_PART.match(part)
        if match is None:
            raise UsageError(
                f"--price {text!r}: {part.strip()!r} is not input=P or output=Q",
                hint="give both, in USD per million tokens: --price input=2.50,output=10",
            )
        found[match.group(1).lower()] = Decimal(match.group(2))
    missing = [name for name in ("input", "output") if name not in found]
    if missing:
        raise UsageError(
            f"--price {text!r} has no {' or '.join(missing)} price",
            hint="--price input=P,output=Q (USD per million tokens)",
        )
    return Prices(found["input"], found["output"])


def parse_money(text: str | float, what: str = "--max-cost") -> Decimal:
    """A non-negative USD amount (`5`, `0.25`, `$5`); raises `UsageError`."""
    try:
        value = Decimal(str(text).strip().lstrip("$"))
    except InvalidOperation:
        raise UsageError(f"{what} {text!r} is not an amount in USD", hint=f"e.g. {what} 5 or {what} 0.25") from None
    if not value.is_finite() or value < 0:
        raise UsageError(f"{what} {text!r} must be a non-negative amount in USD")
    return value


@dataclass(frozen=True)
class Estimate:
    """The tokens one request is expected to cost."""

    prompt_tokens: int
    completion_tokens: int

    @property
    def total(self) -> int:
        """Both together."""
        return self.prompt_tokens + self.completion_tokens


def estimate(
    characters: int, fixed_prompt_characters: int = 0, requests: int = 1, max_output: int | None = None
) -> Estimate:
    """The documented estimate for a source of `characters` sent in `requests` requests (see the module)."""
    prompt = math.ceil(characters / CHARS_PER_TOKEN) + requests * math.ceil(fixed_prompt_characters / CHARS_PER_TOKEN)
    output = math.ceil(prompt / OUTPUT_SHARE) + requests * OUTPUT_BASE
    if max_output is not None:
        output = min(output, requests * max_output)
    return Estimate(prompt, output)


def estimate_usage(characters: int, fixed_prompt_characters: int = 0, requests: int = 1) -> TokenUsage:
    """`estimate` as a `TokenUsage` (what `Proposer.estimate` returns)."""
    guess = estimate(characters, fixed_prompt_characters, requests)
    return TokenUsage(
        prompt_tokens=guess.prompt_tokens, completion_tokens=guess.completion_tokens, total_tokens=guess.total
    )


def as_estimate(usage: TokenUsage) -> Estimate:
    """A proposer's `TokenUsage` estimate as the budget's `Estimate`."""
    return Estimate(usage.prompt_tokens, usage.completion_tokens)


@dataclass
class Budget:
    """What a run may spend; thread-safe, since requests run concurrently."""

    max_tokens: int | None = None
    max_cost: Decimal | None = None
    prices: Prices | None = None
    spent: TokenUsage = field(default_factory=TokenUsage)
    reserved_tokens: int = 0
    reserved_cost: Decimal = Decimal(0)
    exhausted: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens < 0:
            raise UsageError(f"--max-tokens {self.max_tokens} must be zero or more")
        if self.max_cost is not None and self.max_cost < 0:
            raise UsageError(f"--max-cost {self.max_cost} must be a non-negative amount in USD")
        if self.max_cost is not None and self.prices is None:
            raise UsageError(
                "--max-cost needs prices",
                hint="add --price input=P,output=Q (USD per million tokens) or set price in brain.toml",
            )

    @property
    def limited(self) -> bool:
        """Whether there is any limit at all."""
        return self.max_tokens is not None or self.max_cost is not None

    def cost_of(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """USD for those tokens, or None without prices."""
        return None if self.prices is None else self.prices.cost(prompt_tokens, completion_tokens)

    @property
    def spent_cost(self) -> Decimal | None:
        """USD spent so far (reported usage), or None without prices."""
        return self.cost_of(self.spent.prompt_tokens, self.spent.completion_tokens)

    def reserve(self, expected: Estimate) -> bool:
        """Hold `expected` for one request if it fits in what is left; once one does not fit, none does."""
        with self._lock:
            if self.exhausted:
                return False
            tokens = self.spent.total_tokens + self.reserved_tokens + expected.total
            cost = self.cost_of(expected.prompt_tokens, expected.completion_tokens)
            over_tokens = self.max_tokens is not None and tokens > self.max_tokens
            over_cost = (
                self.max_cost is not None and cost is not None
                and (self.spent_cost or Decimal(0)) + self.reserved_cost + cost > self.max_cost
            )  # fmt: skip
            if over_tokens or over_cost:
                self.exhausted = True
                return False
            self.reserved_tokens += expected.total
            self.reserved_cost += cost or Decimal(0)
            return True

    def settle(self, expected: Estimate, usage: TokenUsage | None) -> None:
        """Replace a reservation by the usage the server reported (the estimate when it reported none)."""
        with self._lock:
            self.reserved_tokens -= expected.total
            self.reserved_cost -= self.cost_of(expected.prompt_tokens, expected.completion_tokens) or Decimal(0)
            actual = usage or TokenUsage(
                prompt_tokens=expected.prompt_tokens, completion_tokens=expected.completion_tokens,
                total_tokens=expected.total
            )
            self.spent = self.spent + actual


@dataclass(frozen=True)
class CostLimits:
    """What `--max-tokens`, `--max-cost` and `--price` asked for (all optional)."""

    max_tokens: int | None = None
    max_cost: Decimal | None = None
    prices: Prices | None = None

    def budget(self) -> Budget:
        """A fresh budget for one run (refuses a negative limit, or a cost limit without prices)."""
        return Budget(max_tokens=self.max_tokens, max_cost=self.max_cost, prices=self.prices)


class ProposerUsage(FrozenModel):
    """What a metered proposer cost in a run (`estimated` after `--dry-run`), and what the budget held back."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: str | None
    """Decimal USD as a string (no float rounding), None without prices."""
    estimated: bool
    budget_exhausted: int
    """Sources not proposed because the budget would have been exceeded (the next run proposes them)."""
    max_tokens: int | None = None
    max_cost_usd: str | None = None
