"""Proposing and validating for registered sources: tasks, the proposal cache, the gate, the staging.

Sources are proposed for in batches (so a proposer with `concurrency` keeps that many requests in flight),
but answers are judged and staged strictly in source order, so the gate's decisions (duplicates,
contradictions between sources) do not depend on which request finished first.

When a source is proposed for: always when its canonical block is new; when it was already a member,
only if the proposal cache holds no answer for this exact proposer and task (its earlier proposal failed,
or the proposer, allowed types or instructions changed). Failures are never cached, so they are retried
by the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from brain.blocks import MemoryType
from brain.identity import BlockId, utc_timestamp
from ingest.cache import ProposalCache, question_ids
from ingest.commit import Stager
from ingest.proposers import ProposalResult, Proposer, ProposerError, SourceText, Task, propose_many
from ingest.proposers.pool import HeuristicPool, pack
from ingest.register import Registration
from ingest.report import SourceProblemReport
from ingest.validate import RejectedCandidate, validate_candidates


@dataclass(frozen=True)
class DeriveOptions:
    """How to propose: allowed types, instructions, caching and concurrency."""

    allowed: tuple[MemoryType, ...]
    instructions: str | None = None
    read_cache: bool = True
    write_cache: bool = True
    concurrency: int = 1


@dataclass
class Job:
    """One source waiting for its proposal."""

    registration: Registration
    task: Task
    source: SourceText
    key: str
    result: ProposalResult | None = None
    error: ProposerError | None = None
    cached: bool = False
    ticket: tuple[int, int] | None = None
    """(chunk, index) when a pool worker is proposing for it."""
    entry: bytes | None = None
    """The proposal-cache entry a pool worker already built."""
    counts: dict[str, int] = field(default_factory=lambda: {"proposed": 0, "validated": 0, "rejected": 0})


class Deriver:
    """Turns registrations into proposal jobs, runs them in batches, and stages what the gate validates."""

    def __init__(
        self,
        proposer: Proposer,
        cache: ProposalCache,
        stager: Stager,
        options: DeriveOptions,
        answered: Callable[[BlockId, str], bool],
        read_view: Callable[[BlockId], bytes | None],
        pool: HeuristicPool | None = None,
    ) -> None:
        self.proposer = proposer
        self.pool = pool
        self.cache = cache
        self.stager = stager
        self.options = options
        self.answered = answered  # whether the brain records a derivation from this source under this task id
        self.read_view = read_view  # a member's stored normalized view (None if it has none)
        # The task every source gets, but for its source and id (a placeholder source until then).
        self._question = Task(
            source=BlockId("0" * 64),
            allowed_memory_types=options.allowed,
            requirements=(),
            instructions=options.instructions,
        )

    def job_for(self, reg: Registration) -> Job | None:
        """The proposal job a registration calls for, or None (no text, duplicate, or already answered).

        A member is asked again only if neither this cache nor the brain's records (the task id of its
        derivations: a pulled brain has no cache) say the same question was answered; changing the
        proposer, its model or parameters, the allowed types or the instructions makes a new question.
        """
        if reg.block is None or reg.status not in ("registered", "replaced", "unchanged"):
            return None
        if reg.view is None and reg.newly_added:
            return None  # no normalized view: nothing to read
        question = self._question.model_copy(update={"source": reg.block})  # validated once, in __init__
        key, task_id = question_ids(self.proposer, question)
        task = question.model_copy(update={"task_id": task_id})
        if not reg.newly_added and (
            not self.options.read_cache or self.cache.has(key) or self.answered(reg.block, task.task_id)
        ):
            return None
        # An unchanged source the fingerprint index vouched for was not read: its stored view is the text.
        view = reg.view if reg.view is not None else self.read_view(reg.block)
        if view is None:
            return None
        try:
            text = view.decode("utf-8")
        except UnicodeDecodeError:
            return None
        source = SourceText.of(reg.block, reg.media_type or "text/plain", text)
        return Job(registration=reg, task=task, source=source, key=key)

    def prefetch(self, jobs: Sequence[Job]) -> None:
        """Start proposing for `jobs` the cache cannot answer in the pool (if any); `run` collects the answers."""
        if self.pool is None:
            return
        todo = [job for job in jobs if not (self.options.read_cache and self.cache.has(job.key))]
        ticket = self.pool.submit([pack(job.task, job.source, job.key) for job in todo])
        if ticket is not None:
            for index, job in enumerate(todo):
                job.ticket = (ticket, index)

    def close(self) -> None:
        """Stop the pool's workers, if any."""
        if self.pool is not None:
            self.pool.close()

    def run(self, jobs: Sequence[Job]) -> None:
        """Answer every job (cache first, then the proposer), then judge and stage the answers in order."""
        pooled = self._collect(jobs)
        missing: list[Job] = []
        for job in jobs:
            hit = self.cache.get(job.key, job.task) if self.options.read_cache else None
            if hit is not None:
                job.result, job.cached = hit, True
            else:
                missing.append(job)
        proposed = iter(self._propose([job for job in missing if id(job) not in pooled]))
        for job in missing:
            job.result, job.error = (pooled[id(job)], None) if id(job) in pooled else next(proposed)
            if job.result is not None and self.options.write_cache:
                if id(job) in pooled and job.entry is not None:
                    self.cache.put_entry(job.key, job.entry)
                else:
                    self.cache.put(job.key, job.result)
        for job in jobs:
            self._judge(job)

    def _collect(self, jobs: Sequence[Job]) -> dict[int, ProposalResult]:
        """The pool's answers for `jobs`, by `id(job)`; a job whose chunk failed is left to `_propose`."""
        if self.pool is None:
            return {}
        chunks: dict[int, list[tuple[ProposalResult, bytes]] | None] = {}
        found: dict[int, ProposalResult] = {}
        for job in jobs:
            if job.ticket is None:
                continue
            ticket, index = job.ticket
            if ticket not in chunks:
                chunks[ticket] = self.pool.results(ticket)
            replies = chunks[ticket]
            if replies is not None:
                found[id(job)], job.entry = replies[index]
        return found

    def _propose(self, jobs: Sequence[Job]) -> list[tuple[ProposalResult | None, ProposerError | None]]:
        if not jobs:
            return []
        pairs = [(job.task, job.source) for job in jobs]
        many = getattr(self.proposer, "propose_many", None)
        if callable(many):  # the proposer bounds its own concurrency (openai)
            outcomes = many(pairs)
        else:
            outcomes = propose_many(self.proposer.propose, pairs, self.options.concurrency)
        return [(o.result, o.error) for o in outcomes]

    def _judge(self, job: Job) -> None:
        reg = job.registration
        if job.error is not None or job.result is None:
            error = job.error or ProposerError("proposer-crashed", "no answer")
            problem = SourceProblemReport(stage="propose", code=error.code, detail=error.detail, kind="failure")
            reg.problems.append(problem)
            reg.fingerprint = None  # not done: the next run must propose again
            return
        for note in job.result.notes:  # e.g. `proposals-capped: ...`: reported, never a failure
            code, _, detail = note.partition(": ")
            reg.problems.append(SourceProblemReport(stage="propose", code=code, detail=detail or note, kind="note"))
        answer = job.result.candidates
        context = self.stager.gate_context()
        verdicts = validate_candidates(answer, job.task, context)
        job.counts["proposed"] = len(verdicts)
        at = utc_timestamp()
        for verdict in verdicts:
            if isinstance(verdict, RejectedCandidate):
                job.counts["rejected"] += 1
                locator = verdict.candidate.locator
                where = f"candidate {verdict.index}" + (f" ({locator})" if locator else "")
                for issue in verdict.issues:
                    detail = f"{where}, {verdict.verdict.value}: {issue.detail}"
                    reg.problems.append(
                        SourceProblemReport(
                            stage="validate", code=issue.code, detail=detail, kind="rejection", candidate=verdict.index
                        )
                    )
            elif self.stager.commit_validated(verdict, answer, job.task.task_id, at):
                job.counts["validated"] += 1
