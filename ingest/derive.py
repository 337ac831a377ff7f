"""Proposing and validating for registered sources: which sources to ask, then judging and staging answers.

`Questions` decides which registered sources are asked and builds each one's job; an `AnswerSource`
(`ingest.answers`: the proposal cache, pool workers, or the proposer in-process) answers the jobs in
batches (so a proposer with `concurrency` keeps that many requests in flight); the `Deriver` judges the
answers strictly in source order and stages what the gate validates, so the gate's decisions
(duplicates, contradictions between sources) do not depend on which request finished first, or where
an answer came from.

Two stages of the run (`ingest.record`) live here: `Questions.job_for` is the ask stage (a registered
record and its view in, a `Job` out), and `Deriver.run` the judge and stage stages (jobs in, one new
record per job out, with the answer's problems and counts).

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
from ingest.answers import Answer, AnswerSource, Job
from ingest.cache import ProposalCache, QuestionIds
from ingest.commit import Stager
from ingest.proposers import Candidate, CandidateSet, Proposer, ProposerError, SourceText
from ingest.record import SourceRecord
from ingest.report import SourceProblemReport
from ingest.validate import RejectedCandidate, ValidatedCandidate, validate_candidates


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
        # The one question of the run (its task validated now), asked about each source in turn.
        self._ids = QuestionIds.asking(proposer, options.allowed, (), options.instructions)

    def job_for(self, record: SourceRecord, view: bytes | None) -> Job | None:
        """The ask stage: the proposal job a registered record calls for, or None (no text, duplicate, or
        already answered). `view` is the normalized view registering read (None: not read).

        A member is asked again only if neither this cache nor the brain's records (the task id of its
        derivations: a pulled brain has no cache) say the same question was answered; changing the
        proposer, its model or parameters, the allowed types or the instructions makes a new question.
        """
        block = record.block
        if block is None or record.status not in ("registered", "replaced", "unchanged"):
            return None
        if view is None and record.newly_added:
            return None  # no normalized view: nothing to read
        key, task_id = self._ids.of(block)
        if not record.newly_added and (not self.read_cache or self.cache.has(key) or self.answered(block, task_id)):
            return None
        # An unchanged source the fingerprint index vouched for was not read: its stored view is the text.
        if view is None:
            view = self.read_view(block)
            if view is None:
                return None
        try:
            text = _text_of(view)
        except UnicodeDecodeError:
            return None
        view = None  # the text replaces the bytes (the caller lets go of them too)
        source = SourceText.of(block, record.media_type or "text/plain", text)
        return Job(record=record.advance("ask"), task=self._ids.task_for(block, task_id), source=source, key=key)


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

    def run(self, jobs: Sequence[Job]) -> list[SourceRecord]:
        """Answer every job, then judge and stage the answers in order: one new record per job."""
        answers = self.answers.answer(jobs)
        return [self._judge(job, answer) for job, answer in zip(jobs, answers, strict=True)]

    def close(self) -> None:
        """Release the answer source's workers, if any."""
        self.answers.close()

    def _judge(self, job: Job, answer: Answer) -> SourceRecord:
        """The judge stage (the gate's verdicts and their problems), then the stage stage (what validated)."""
        record = job.record
        if answer.error is not None or answer.result is None:
            error = answer.error or ProposerError("proposer-crashed", "no answer")
            problem = SourceProblemReport(stage="propose", code=error.code, detail=error.detail, kind="failure")
            return record.noted("judge", problem, fingerprint=None)  # not done: the next run must propose again
        problems = []
        for note in answer.result.notes:  # e.g. `proposals-capped: ...`: reported, never a failure
            code, _, detail = note.partition(": ")
            problems.append(SourceProblemReport(stage="propose", code=code, detail=detail or note, kind="note"))
        candidates = answer.result.candidates
        verdicts = validate_candidates(candidates, job.task, self.stager.gate_context())
        validated: list[ValidatedCandidate[Candidate]] = []
        for verdict in verdicts:
            if not isinstance(verdict, RejectedCandidate):
                validated.append(verdict)
                continue
            locator = verdict.candidate.locator
            where = f"candidate {verdict.index}" + (f" ({locator})" if locator else "")
            for issue in verdict.issues:
                detail = f"{where}, {verdict.verdict.value}: {issue.detail}"
                problems.append(
                    SourceProblemReport(
                        stage="validate", code=issue.code, detail=detail, kind="rejection", candidate=verdict.index
                    )
                )
        judged = record.noted(
            "judge", *problems, proposed=len(verdicts), rejected=len(verdicts) - len(validated), cached=answer.cached
        )
        return judged.advance("stage", validated=self._stage(validated, candidates, job.task.task_id))

    def _stage(
        self, validated: Sequence[ValidatedCandidate[Candidate]], answer: CandidateSet, task_id: str | None
    ) -> int:
        """Stage the validated blocks of one answer with their records (one `at`); how many were new."""
        at = utc_timestamp()
        return sum(self.stager.commit_validated(verdict, answer, task_id, at) for verdict in validated)


__all__ = ["DeriveOptions", "Deriver", "Job", "Questions"]
