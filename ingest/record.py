"""The one record each source carries through an ingest run, and the names of the stages it passes.

    discover ─▶ register ─▶ ask ─▶ judge ─▶ stage ─▶ commit
    run.py      register.py  derive.py (Questions, Deriver)   run.py (checkpoint)

A `SourceRecord` is immutable: a stage never edits the record it is given, it returns a new one
(`advance`), with the stage's name and what it found: its status, block and problems (a tuple, gathered
for this source only). A stage may skip the ones after it (a duplicate is not asked, a failed answer is
not staged), never go back. The run turns each committed record into the `SourceOutcome` it reports.

A named tuple rather than a frozen dataclass: a stage's new record is a `_replace` (about 2 µs, against
12 µs for `dataclasses.replace` of 16 fields), paid three times for each of a re-run's unchanged sources.

The record holds no bytes: the normalized view that `register` read is handed to `ask` beside the record
and dropped there, so a large view is never kept while its source waits for the rest of its batch.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from brain.identity import BlockId
from ingest.fingerprints import Fingerprint
from ingest.report import SourceOutcome, SourceProblemReport, Status
from ingest.sources import SourceFile, SourceProblem

StageName = Literal["discover", "register", "ask", "judge", "stage", "commit"]
STAGES: tuple[StageName, ...] = ("discover", "register", "ask", "judge", "stage", "commit")
_ORDER = {name: number for number, name in enumerate(STAGES)}
_OUTCOME_FIELDS = set(SourceOutcome.model_fields)  # never changed: the models are frozen, and a copy copies it


class StageOrderError(RuntimeError):
    """A stage was asked to handle a record that already passed it (a bug in the run, never bad input)."""


class SourceRecord(NamedTuple):
    """One source as far as the run has taken it (see the module docstring)."""

    relpath: str
    origin: str
    stage: StageName = "discover"
    status: Status | None = None
    """None until `register` decides it (a discovery problem is `skipped` or `failed` at once)."""
    source: SourceFile | None = None
    """The discovered file (None for a discovery problem)."""
    block: BlockId | None = None
    media_type: str | None = None
    size: int | None = None
    newly_added: bool = False
    replaces: tuple[BlockId, ...] = ()
    """The previous versions of this origin that the new block superseded (§3.7 "replace source")."""
    fingerprint: Fingerprint | None = None
    """What the fingerprint index remembers once the source is handled (None: nothing, or not done)."""
    problems: tuple[SourceProblemReport, ...] = ()
    proposed: int = 0
    validated: int = 0
    rejected: int = 0
    cached: bool = False
    """Its answer came from the proposal cache."""

    @classmethod
    def discovered(cls, source: SourceFile, origin: str) -> SourceRecord:
        """The record of a file discovery found, under the origin it will be registered as."""
        return cls(relpath=source.relpath, origin=origin, source=source)

    @classmethod
    def of_problem(cls, problem: SourceProblem) -> SourceRecord:
        """The record of a path discovery could not (or chose not to) turn into a source: done at once."""
        kind = problem.kind
        report = SourceProblemReport(stage="discover", code=problem.code, detail=problem.detail, kind=kind)
        status: Status = "failed" if kind == "failure" else "skipped"
        return cls(relpath=problem.relpath, origin=problem.relpath, status=status, problems=(report,))

    def advance(self, stage: StageName, **changes: Any) -> SourceRecord:
        """A new record at `stage` (the same one or a later one) with `changes`; this one is left as it was."""
        if _ORDER[stage] < _ORDER[self.stage]:
            raise StageOrderError(f"{self.relpath}: the {stage} stage cannot follow {self.stage}")
        return self._replace(stage=stage, **changes)

    def noted(self, stage: StageName, *problems: SourceProblemReport, **changes: Any) -> SourceRecord:
        """`advance`, with `problems` added after the ones found so far."""
        return self.advance(stage, problems=self.problems + problems, **changes)

    def outcome(self) -> SourceOutcome:
        """What the run reports for this source."""
        if self.status is None:
            raise StageOrderError(f"{self.relpath}: reported before it was registered")
        # Every field from a record whose stages checked them: constructed, not validated again, and sharing one
        # set of the names given (each outcome is kept to the end of the run: its own set was 728 of ~1,400 bytes).
        return SourceOutcome.model_construct(
            _OUTCOME_FIELDS,
            relpath=self.relpath,
            origin=self.origin,
            status=self.status,
            block=None if self.block is None else str(self.block),
            media_type=self.media_type,
            size=self.size,
            proposed=self.proposed,
            validated=self.validated,
            rejected=self.rejected,
            cached=self.cached,
            replaces=tuple(str(b) for b in self.replaces),
            problems=self.problems,
        )


__all__ = ["STAGES", "SourceRecord", "StageName", "StageOrderError"]
