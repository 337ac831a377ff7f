"""Where a proposal job's answer comes from: the proposal cache, pool workers, or the proposer in-process.

Every source of answers has one interface, `AnswerSource`: jobs are `offer`ed as sources register (a
source may start on them early), then `answer` returns one `Answer` per job, in job order, for a whole
batch. Jobs and answers are frozen: a source keeps what it needs about a job (a pool ticket) itself.
`batch` says how many jobs the run collects before asking, so each source owns its schedule:

- `InProcessAnswers`: the proposer's `propose_many`, `concurrency` requests at a time.
- `PooledAnswers`: the built-in heuristic in forked workers (`ingest.proposers.pool`), chunks handed
  over as they fill; a chunk whose worker failed is answered in-process.
- `CachedAnswers`: the proposal cache in front of either; hits never reach the proposer, fresh answers
  are appended to the cache.

The deriver judges the answers in job order whichever source gave them, so the snapshots a run writes
do not depend on which source answered, or on whether workers could start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ingest.cache import ProposalCache
from ingest.proposers import ProposalResult, Proposer, ProposerError, SourceText, Task
from ingest.proposers import pool as heuristic_pool
from ingest.proposers.pool import HeuristicPool, Ticket
from ingest.record import SourceRecord


@dataclass(frozen=True, slots=True, eq=False)
class Job:
    """One source waiting for its proposal: the ask stage's output (compared by identity, never by value)."""

    record: SourceRecord
    task: Task
    source: SourceText
    key: str
    """Its proposal-cache key."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a source of answers says about one job: a result, or an error."""

    result: ProposalResult | None = None
    error: ProposerError | None = None
    cached: bool = False
    """Read from the proposal cache."""
    entry: bytes | None = None
    """The proposal-cache entry a pool worker already built."""


class AnswerSource(Protocol):
    """Answers proposal jobs; subclass it for the defaults."""

    batch: int
    """How many jobs to collect before asking for their answers (the proposer's useful parallelism)."""

    def offer(self, job: Job) -> None:
        """`job` will be in a later `answer` call; a source may start on it now. The default waits."""
        return None

    def answer(self, jobs: Sequence[Job]) -> list[Answer]:
        """One answer per job, in order; offered jobs not yet started are answered here too."""
        ...

    def close(self) -> None:
        """Release what the source holds (worker processes). The default holds nothing."""
        return None


class InProcessAnswers(AnswerSource):
    """The proposer itself, in this process, at most `concurrency` requests in flight."""

    def __init__(self, proposer: Proposer, concurrency: int = 1) -> None:
        self.proposer = proposer
        self.concurrency = concurrency
        self.batch = max(8, 4 * concurrency)

    def answer(self, jobs: Sequence[Job]) -> list[Answer]:
        """Ask the proposer about every job at once (it bounds its own concurrency)."""
        if not jobs:
            return []
        outcomes = self.proposer.propose_many([(job.task, job.source) for job in jobs], self.concurrency)
        return [Answer(outcome.result, outcome.error) for outcome in outcomes]


class PooledAnswers(AnswerSource):
    """The built-in heuristic in forked workers, in chunks of `ingest.proposers.pool.CHUNK`."""

    def __init__(self, pool: HeuristicPool, fallback: AnswerSource) -> None:
        self.pool = pool
        self.fallback = fallback  # for chunks no worker took or answered
        self.batch = heuristic_pool.BATCH
        self._unsubmitted: list[Job] = []
        self._tickets: dict[Job, Ticket] = {}  # where a worker is proposing for an offered job

    def offer(self, job: Job) -> None:
        """Hand jobs to a worker once a chunk is full."""
        self._unsubmitted.append(job)
        if len(self._unsubmitted) >= heuristic_pool.CHUNK:
            chunk, self._unsubmitted = self._unsubmitted, []
            ticket = self.pool.submit([heuristic_pool.pack(job.task, job.source, job.key) for job in chunk])
            if ticket is not None:
                for index, job in enumerate(chunk):
                    self._tickets[job] = Ticket(ticket, index)

    def answer(self, jobs: Sequence[Job]) -> list[Answer]:
        """Collect the workers' answers; what they did not answer (a partial chunk, a failure) in-process."""
        self._unsubmitted = []
        tickets, self._tickets = self._tickets, {}
        chunks: dict[int, list[tuple[ProposalResult, bytes]] | None] = {}
        answers: list[Answer | None] = []
        rest: list[Job] = []
        for job in jobs:
            ticket = tickets.get(job)
            replies = None
            if ticket is not None:
                chunk, index = ticket
                if chunk not in chunks:
                    chunks[chunk] = self.pool.results(chunk)
                replies = chunks[chunk]
            if replies is None:
                rest.append(job)
                answers.append(None)
            else:
                result, entry = replies[index]
                answers.append(Answer(result, entry=entry))
        return merge_answers(answers, self.fallback.answer(rest))

    def close(self) -> None:
        """Stop the workers."""
        self.pool.close()
        self.fallback.close()


class CachedAnswers(AnswerSource):
    """The proposal cache in front of another source: hits are answered from it, new answers appended."""

    def __init__(self, cache: ProposalCache, inner: AnswerSource, *, read: bool = True, write: bool = True) -> None:
        self.cache = cache
        self.inner = inner
        self.read = read  # False: `--no-cache`, every job is asked again
        self.write = write  # False: `--dry-run`, nothing is written
        self.batch = inner.batch

    def offer(self, job: Job) -> None:
        """Only jobs the cache cannot answer reach the inner source."""
        if not (self.read and self.cache.has(job.key)):
            self.inner.offer(job)

    def answer(self, jobs: Sequence[Job]) -> list[Answer]:
        """Cache hits first; the rest from the inner source, then kept for the next run."""
        answers: list[Answer | None] = []
        missing: list[Job] = []
        for job in jobs:
            hit = self.cache.get(job.key, job.task) if self.read else None
            if hit is not None:
                answers.append(Answer(hit, cached=True))
            else:
                answers.append(None)
                missing.append(job)
        fresh = self.inner.answer(missing)
        if self.write:
            for job, answer in zip(missing, fresh, strict=True):
                if answer.result is None:
                    continue  # failures are never cached: the next run asks again
                if answer.entry is not None:
                    self.cache.put_entry(job.key, answer.entry)
                else:
                    self.cache.put(job.key, answer.result)
        return merge_answers(answers, fresh)

    def close(self) -> None:
        """Close the inner source."""
        self.inner.close()


def answer_source(
    proposer: Proposer,
    cache: ProposalCache,
    sources: int,
    *,
    concurrency: int = 1,
    read_cache: bool = True,
    write_cache: bool = True,
    wrap: Callable[[AnswerSource], AnswerSource] | None = None,
) -> AnswerSource:
    """The answers for a run of `sources` sources: the cache, in front of the pool when it suits, else the proposer.

    `wrap` puts a source between the cache and the proposer (the budget of `ingest.budgeted`).
    """
    in_process = InProcessAnswers(proposer, concurrency)
    inner: AnswerSource = in_process
    if heuristic_pool.suits(proposer, sources):
        inner = PooledAnswers(HeuristicPool(), in_process)
    if wrap is not None:
        inner = wrap(inner)
    return CachedAnswers(cache, inner, read=read_cache, write=write_cache)


def merge_answers(answers: list[Answer | None], rest: Sequence[Answer]) -> list[Answer]:
    """`answers` with each gap filled, in order, from `rest` (the answers of the jobs left for another source)."""
    if len(rest) != answers.count(None):
        raise RuntimeError(f"an answer source gave {len(rest)} answers for {answers.count(None)} jobs")
    filling = iter(rest)
    return [answer if answer is not None else next(filling) for answer in answers]


__all__ = [
    "Answer", "AnswerSource", "CachedAnswers", "InProcessAnswers", "Job", "PooledAnswers", "answer_source",
    "merge_answers",
]
