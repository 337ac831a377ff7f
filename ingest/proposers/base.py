"""The `Proposer` protocol: what ingest hands a proposer (a task and the source text) and what comes back.

A proposer only proposes; nothing it says reaches a brain without passing the validation gate
(`ingest.validate`). Failures are `ProposerError`s with a code, reported per source.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import Field

from brain.frozen import FrozenModel
from brain.identity import BlockId
from ingest.proposers.candidates import CandidateSet, Task
from ingest.proposers.errors import ProposerError

PAGE_BREAK = "\f"
PAGED_MEDIA_TYPES = frozenset({"application/pdf"})

_Count = Field(default=0, ge=0, strict=True)


class TokenUsage(FrozenModel):
    """Tokens a model-backed proposer spent; they add up across requests and sources."""

    prompt_tokens: int = _Count
    completion_tokens: int = _Count
    total_tokens: int = _Count

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )


def sum_usage(usages: Iterable[TokenUsage | None]) -> TokenUsage | None:
    """The sum of the known usages, or None when none is known."""
    known = [u for u in usages if u is not None]
    if not known:
        return None
    total = known[0]
    for usage in known[1:]:
        total = total + usage
    return total


@dataclass(frozen=True)
class SourceText:
    """The normalized text of one canonical source, with the page map of paged media (PDF pages split on `\\f`)."""

    block_id: BlockId
    media_type: str
    text: str
    # Character offset where each page starts (page 1 at index 0); None for unpaged text.
    page_starts: tuple[int, ...] | None = field(default=None)

    @classmethod
    def of(cls, block_id: BlockId, media_type: str, text: str) -> SourceText:
        """Wrap normalized text, building the page map when the media type is paged."""
        pages = None
        if media_type in PAGED_MEDIA_TYPES:
            starts = [0]
            at = text.find(PAGE_BREAK)
            while at != -1:
                starts.append(at + 1)
                at = text.find(PAGE_BREAK, at + 1)
            pages = tuple(starts)
        return cls(block_id=block_id, media_type=media_type, text=text, page_starts=pages)

    def page_of(self, offset: int) -> int | None:
        """The 1-based page holding character `offset`, or None for unpaged text."""
        if self.page_starts is None:
            return None
        return bisect.bisect_right(self.page_starts, offset)


@dataclass(frozen=True)
class ProposalResult:
    """What a proposer answered for one source, and the tokens it cost (None when not metered)."""

    candidates: CandidateSet
    usage: TokenUsage | None = None
    # One line each, `code: detail` (e.g. `proposals-capped: ...`): things the run should report, not failures.
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProposalOutcome:
    """One job of `propose_many`: the result, or the error that stopped it."""

    task: Task
    source: SourceText
    result: ProposalResult | None = None
    error: ProposerError | None = None


def propose_many(
    propose: Callable[[Task, SourceText], ProposalResult],
    jobs: Sequence[tuple[Task, SourceText]],
    concurrency: int = 1,
) -> list[ProposalOutcome]:
    """Run `propose` over `jobs` with at most `concurrency` in flight; outcomes come back in job order."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")

    def run(job: tuple[Task, SourceText]) -> ProposalOutcome:
        task, source = job
        try:
            return ProposalOutcome(task, source, result=propose(task, source))
        except ProposerError as e:
            return ProposalOutcome(task, source, error=e)

    if concurrency == 1 or len(jobs) <= 1:
        return [run(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(jobs)), thread_name_prefix="proposer") as pool:
        return list(pool.map(run, jobs))


@runtime_checkable
class ProposerCore(Protocol):
    """The members every proposer must define (`Proposer` adds those with defaults)."""

    id: str
    """Namespaced name, e.g. `brain/heuristic`."""
    version: str
    model: str | None
    parameters: dict[str, Any]
    """Everything besides id/version/model that changes answers; JCS-able (no floats): part of the cache key."""

    def propose(self, task: Task, source: SourceText) -> ProposalResult:
        """Answer one task; raises `ProposerError` on failure."""
        ...


@runtime_checkable
class Proposer(ProposerCore, Protocol):
    """Anything that turns a task and a source text into candidate blocks.

    Subclass it to inherit the defaults of the optional members; a third-party proposer that defines only
    the `ProposerCore` members gets them from `ingest.proposers.loader`.
    """

    def propose_many(self, jobs: Sequence[tuple[Task, SourceText]], concurrency: int = 1) -> list[ProposalOutcome]:
        """Answer many tasks, outcomes in job order, a failure per job rather than raised.

        The default runs `propose` on at most `concurrency` threads; a proposer that bounds its own
        requests (openai) overrides it.
        """
        return propose_many(self.propose, jobs, concurrency)

    def estimate(self, task: Task, source: SourceText) -> TokenUsage | None:
        """The tokens answering would cost, before asking (`--max-tokens`, `--max-cost`, `--dry-run`).

        None (the default) means not metered: a local proposer costs nothing. A model-backed one returns its
        documented estimate (`ingest.budget.estimate_usage`).
        """
        return None


__all__ = [
    "PAGE_BREAK",
    "ProposalOutcome",
    "ProposalResult",
    "Proposer",
    "ProposerCore",
    "ProposerError",
    "SourceText",
    "TokenUsage",
    "propose_many",
    "sum_usage",
]
