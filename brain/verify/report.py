"""The result of `brain verify`: problems with exact locations, per-module summaries, resolvability counts.

`VerifyReport.to_json()` is the `--json` document: `ok`, `snapshot`, `modules` (root, block_count, and the
resolvability counts), `problems` (code, module, block, detail, severity), plus `resolvability` (totals),
`partial_history` and `snapshots_checked`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field

from brain.blocks.memory_type import MODULE_ORDER
from brain.frozen import FrozenModel
from brain.verify.codes import Severity, severity_of

MODULE_NAMES = tuple(m.value for m in MODULE_ORDER)


class Problem(FrozenModel):
    """One finding: its code, where it is (module, offending block or blob digest) and what exactly is wrong."""

    code: str
    module: str | None = None
    block: str | None = None
    detail: str
    severity: Severity = Severity.ERROR

    @classmethod
    def of(cls, code: str, detail: str, *, module: object = None, block: object = None) -> Problem:
        """A problem whose severity comes from the code table; `module`/`block` may be enums or digests."""
        return cls(
            code=code,
            module=None if module is None else str(module),
            block=None if block is None else str(block),
            detail=detail,
            severity=severity_of(code),
        )

    @property
    def is_error(self) -> bool:
        """Whether this problem makes the report not ok."""
        return self.severity is Severity.ERROR


class Counts(BaseModel):
    """How many things resolve (stored and sound), are tombstoned (destroyed on purpose) or are missing."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    resolvable: int = 0
    tombstoned: int = 0
    missing: int = 0


class ModuleSummary(BaseModel):
    """One module of the checked snapshot: its reference and how well its blocks and content resolve."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str
    block_count: int
    blocks: Counts = Field(default_factory=Counts)
    content: Counts = Field(default_factory=Counts)


class DeepCounts(BaseModel):
    """What `--deep` did: views re-normalized, how many of them drifted, and how many could not be re-run."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    renormalized: int = 0
    drifted: int = 0
    not_rerun: int = 0


class VerifyReport(BaseModel):
    """Everything `verify_brain` found about one snapshot of a brain."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    snapshot: str | None
    modules: dict[str, ModuleSummary] = Field(default_factory=dict)
    problems: list[Problem] = Field(default_factory=list)
    partial_history: bool = False
    snapshots_checked: int = 0
    deep: DeepCounts | None = None
    _seen: set[Problem] = PrivateAttr(default_factory=set)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        """True iff no problem is an error."""
        return not any(p.is_error for p in self.problems)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def resolvability(self) -> dict[str, Counts]:
        """Totals over all modules: how blocks and the content they name resolve."""
        totals = {"blocks": Counts(), "content": Counts()}
        for summary in self.modules.values():
            for kind, counts in (("blocks", summary.blocks), ("content", summary.content)):
                total = totals[kind]
                total.resolvable += counts.resolvable
                total.tombstoned += counts.tombstoned
                total.missing += counts.missing
        return totals

    def extend(self, problems: Iterable[Problem]) -> None:
        """Add problems, skipping exact repeats (the same finding reached twice)."""
        if len(self._seen) != len(self.problems):  # `problems` was assigned directly
            self._seen = set(self.problems)
        for problem in problems:
            if problem not in self._seen:
                self._seen.add(problem)
                self.problems.append(problem)

    def sort_problems(self) -> None:
        """Order problems brain-wide first, then by module in §6.2 order; detection order within a module."""
        rank = {name: i for i, name in enumerate(MODULE_NAMES, start=1)}
        self.problems.sort(key=lambda p: 0 if p.module is None else rank.get(p.module, len(rank) + 1))

    def count(self, severity: Severity) -> int:
        """How many problems have `severity`."""
        return sum(1 for p in self.problems if p.severity is severity)

    def to_json(self) -> dict[str, Any]:
        """The `--json` document (key order: ok, snapshot, modules, problems, then extras)."""
        data = self.model_dump(mode="json")
        ordered = {key: data.pop(key) for key in ("ok", "snapshot", "modules", "problems")}
        return {**ordered, **data}


__all__ = ["Counts", "ModuleSummary", "Problem", "Severity", "VerifyReport"]
