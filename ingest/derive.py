"""Proposing and validating for registered sources: which sources to ask, then judging and staging answers.

`Questions` decides which registered sources are asked and builds each one's job; an `AnswerSource`
(`ingest.answers`: the proposal cache, pool workers, or the proposer in-process) answers the jobs in
batches (so a proposer with `concurrency` keeps that many requests in flight); the `Deriver` judges the
answers strictly in source order and stages what the gate validates, so the gate's decisions
(duplicates, contradictions between sources) do not depend on which request finished first, or where
an answer came from.

When a source is proposed for: always when its canonical block is new; when it was already a member,
only if the proposal cache holds no answer for this exact proposer and task (its earlier proposal failed,
or the proposer, allowed types or instructions changed). Failures are never cached, so they are retried
by the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from brain.blocks import MemoryType
from brain.identity import BlockId, utc_timestamp
from ingest.answers import AnswerSource, Job
from ingest.cache import ProposalCache, QuestionIds
from ingest.commit import Stager
from ingest.proposers import Proposer, ProposerError, SourceText, Task
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


class Questions:
    """Which registered sources the proposer is asked about, and the job for each."""

    def __init__(
        self,
        proposer: Proposer,
        cache: ProposalCache,
        options: DeriveOptions,
        answered: Callable[[BlockId, str], bool],
        read_view: Callable[[BlockId], bytes | None],
    ) -> None:
        self.proposer = proposer
        self.cache = cache
        self.read_cache = options.read_cache
        self.answered = answered  # whether the brain records a derivation from this source under this task id
        self.read_view = read_view  # a member's stored normalized view (None if it has none)
        # The task every source gets, but for its source and id (a placeholder source until then).
        self._question = Task(
            source=BlockId("0" * 64),
            allowed_memory_types=options.allowed,
            requirements=(),
            instructions=options.instructions,
        )
        self._ids = QuestionIds(proposer, self._question)

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
        key, task_id = self._ids.of(reg.block)
        if not reg.newly_added and (
            not self.read_cache or self.cache.has(key) or self.answered(reg.block, task_id)
        ):
            return None
        task = self._question.model_copy(update={"source": reg.block, "task_id": task_id})  # validated in __init__
        # An unchanged source the fingerprint index vouched for was not read: its stored view is the text.
        view = reg.view if reg.view is not None else self.read_view(reg.block)
        if view is None:
            return None
        try:
            text = _text_of(view)
        except UnicodeDecodeError:
            return None
        reg.view = view = None  # the text replaces the bytes: a 50 MB view is not held twice over
        source = SourceText.of(reg.block, reg.media_type or "text/plain", text)
        return Job(registration=reg, task=task, source=source, key=key)


ONE_LINE_AT = 1 << 20
"""A view this large that is one line is read without its trailing whitespace (see `_text_of`)."""


def _text_of(view: bytes) -> str:
    """The view's text. A huge view that is one line (a minified or hostile file) loses its trailing
    whitespace here, from a memoryview, not a copy: the heuristic cuts a line's trailing whitespace, and that
    slice of a 50 MB line would be a second whole copy of the text (5x the file at 2 bytes a character)."""
    if len(view) < ONE_LINE_AT or view.find(b"\n", 0, len(view) - 1) != -1:
        return view.decode("utf-8")
    end = len(view)
    while end and view[end - 1] in b" \t\n\r\x0b\x0c":
        end -= 1
    with memoryview(view) as whole:
        return str(whole[:end], "utf-8")


class Deriver:
    """Gets jobs answered, then judges the answers in job order and stages what the gate validates."""

    def __init__(self, stager: Stager, answers: AnswerSource) -> None:
        self.stager = stager
        self.answers = answers

    def offer(self, job: Job) -> None:
        """A job for a later `run`: its answer source may start on it now."""
        self.answers.offer(job)

    def run(self, jobs: Sequence[Job]) -> None:
        """Answer every job, then judge and stage the answers in order."""
        self.answers.answer(jobs)
        for job in jobs:
            self._judge(job)

    def close(self) -> None:
        """Release the answer source's workers, if any."""
        self.answers.close()

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


__all__ = ["DeriveOptions", "Deriver", "Job", "Questions"]
