"""The answer sources of cost control: a metered, budgeted source, and the dry run's estimate that asks nothing.

Both sit behind the proposal cache (`CachedAnswers`), so cache hits are free and never counted. For every
job they ask the proposer's `estimate` (None: not metered, nothing to do):

- `BudgetedAnswers` reserves each job's estimate in the `Budget` before the batch is sent; the first job
  that does not fit, and every job after it, is answered with the `budget-exhausted` error instead (not
  cached, so the next run proposes it), and the reported usage of the others replaces their estimate.
- `EstimatingAnswers` (`--dry-run`) calls no model: each job gets an empty answer and its estimate is added
  to the run's estimated usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from ingest.answers import Answer, AnswerSource, Job, merge_answers
from ingest.budget import (
    BUDGET_EXHAUSTED,
    Budget,
    CostLimits,
    Estimate,
    ProposerUsage,
    as_estimate,
)
from ingest.proposers import ProposalResult, Proposer, ProposerError, TokenUsage
from ingest.proposers.candidates import CandidateSet

MICRO_USD = Decimal("0.000001")  # costs are reported to a millionth of a dollar


class BudgetedAnswers(AnswerSource):
    """`inner`'s answers for the jobs whose estimate fits in `budget`; `budget-exhausted` for the rest."""

    def __init__(self, inner: AnswerSource, proposer: Proposer, budget: Budget) -> None:
        self.inner = inner
        self.proposer = proposer
        self.budget = budget
        self.batch = inner.batch
        self.exhausted = 0

    def offer(self, job: Job) -> None:
        """Nothing starts before its estimate is reserved (so offered jobs wait for `answer`)."""
        return

    def answer(self, jobs: Sequence[Job]) -> list[Answer]:
        """Reserve, ask the inner source about what fits, settle the reported usage."""
        answers: list[Answer | None] = []
        admitted: list[tuple[Job, Estimate | None]] = []
        for job in jobs:
            guess = self.proposer.estimate(job.task, job.source)
            held = None if guess is None else as_estimate(guess)
            if held is not None and not self.budget.reserve(held):
                answers.append(Answer(error=ProposerError(BUDGET_EXHAUSTED, self._why())))
                self.exhausted += 1
                continue
            answers.append(None)
            admitted.append((job, held))
        fresh = self.inner.answer([job for job, _ in admitted])
        for (_, held), answer in zip(admitted, fresh, strict=True):
            if held is not None:
                self.budget.settle(held, answer.result.usage if answer.result is not None else None)
            elif answer.result is not None and answer.result.usage is not None:
                self.budget.settle(Estimate(0, 0), answer.result.usage)
        return merge_answers(answers, fresh)

    def _why(self) -> str:
        limits = []
        if self.budget.max_tokens is not None:
            limits.append(f"--max-tokens {self.budget.max_tokens}")
        if self.budget.max_cost is not None:
            limits.append(f"--max-cost {self.budget.max_cost}")
        return f"not proposed: {' and '.join(limits)} would be exceeded; the next run proposes it"

    def close(self) -> None:
        """Close the inner source."""
        self.inner.close()


class EstimatingAnswers(AnswerSource):
    """`--dry-run` of a metered proposer: no request; an empty answer per job and its estimate counted."""

    def __init__(self, proposer: Proposer, budget: Budget) -> None:
        self.proposer = proposer
        self.budget = budget  # its `spent` is the run's *estimated* usage
        self.batch = 64
        self.exhausted = 0

    def answer(self, jobs: Sequence[Job]) -> list[Answer]:
        """Estimate every job; what would not fit in the budget is reported `budget-exhausted`."""
        answers = []
        for job in jobs:
            guess = self.proposer.estimate(job.task, job.source) or TokenUsage()
            held = as_estimate(guess)
            if self.budget.limited and not self.budget.reserve(held):
                error = ProposerError(BUDGET_EXHAUSTED, "would not be proposed: the budget would be exceeded")
                answers.append(Answer(error=error))
                self.exhausted += 1
                continue
            if self.budget.limited:
                self.budget.settle(held, guess)
            else:
                self.budget.spent = self.budget.spent + guess
            answers.append(Answer(ProposalResult(CandidateSet(task_id=job.task.task_id, candidates=()), None, ())))
        return answers


@dataclass
class Meter:
    """The budget of one run of a model-backed proposer, and the answer source that enforces it."""

    proposer: Proposer
    budget: Budget
    dry_run: bool
    source: BudgetedAnswers | EstimatingAnswers | None = None

    @classmethod
    def of(cls, proposer: Proposer, limits: CostLimits, *, dry_run: bool) -> Meter | None:
        """A meter for a model-backed proposer (one that names a model); None for a local one."""
        if proposer.model is None:
            return None
        return cls(proposer, limits.budget(), dry_run)

    def wrap(self, inner: AnswerSource) -> AnswerSource:
        """The source that answers behind the cache: estimates only (`--dry-run`), or budgeted."""
        self.source = (
            EstimatingAnswers(self.proposer, self.budget)
            if self.dry_run
            else BudgetedAnswers(inner, self.proposer, self.budget)
        )
        return self.source

    def usage(self) -> ProposerUsage:
        """The run's tokens and cost (estimated after a dry run)."""
        spent = self.budget.spent
        cost = self.budget.spent_cost
        return ProposerUsage(
            prompt_tokens=spent.prompt_tokens, completion_tokens=spent.completion_tokens,
            total_tokens=spent.total_tokens,
            cost_usd=None if cost is None else str(cost.quantize(MICRO_USD)), estimated=self.dry_run,
            budget_exhausted=self.source.exhausted if self.source is not None else 0,
            max_tokens=self.budget.max_tokens,
            max_cost_usd=None if self.budget.max_cost is None else str(self.budget.max_cost),
        )  # fmt: skip


