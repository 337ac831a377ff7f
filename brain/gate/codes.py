"""The gate's check codes (§7.6), one failed check (`Issue`), and the verdict rules.

Besides the nine checks of §7.6 the candidate gate runs one of its own, `evidence-not-in-task`: a candidate
may cite only the canonical source its task named. `CHECKS_RUN` (what a validation record's `checks` lists)
therefore names all ten; `SPEC_CHECKS` is the §7.6 default set.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brain.blocks import MemoryType, Verdict

SPEC_CHECKS: tuple[str, ...] = (
    "catalog-declaration-not-allowed",
    "content-mismatch",
    "contradiction",
    "duplicate",
    "evidence-mismatch",
    "evidence-not-found",
    "memory-type-not-allowed",
    "relation-target-not-found",
    "schema",
)
EVIDENCE_NOT_IN_TASK = "evidence-not-in-task"
CHECKS_RUN: tuple[str, ...] = tuple(sorted((*SPEC_CHECKS, EVIDENCE_NOT_IN_TASK)))
CONTRADICTION_CODES = frozenset({"contradiction", "catalog-exclusive-conflict", "catalog-scheme-conflict"})
PENDING_REVIEW = "pending-review"
# Types whose newest schema has an `evidence` member, so the candidate's evidence is inserted (§7.6).
EVIDENCE_TYPES = frozenset({MemoryType.EPISODIC, MemoryType.SEMANTIC, MemoryType.PROCEDURAL})


@dataclass(frozen=True)
class Issue:
    """One failed check: its code and what exactly was wrong."""

    code: str
    detail: str


def verdict_of(codes: Iterable[str]) -> Verdict:
    """§7.6 verdict rules for a block's issue codes."""
    found = set(codes)
    if not found:
        return Verdict.VALIDATED
    if found <= CONTRADICTION_CODES:
        return Verdict.CONTRADICTED
    if found <= CONTRADICTION_CODES | {PENDING_REVIEW}:
        return Verdict.PENDING_REVIEW
    return Verdict.REJECTED
