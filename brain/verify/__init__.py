"""`brain verify`: integrity, ledger consistency and resolvability of a brain, with exact diagnostics."""

from brain.verify.codes import PROBLEM_CODES, CodeInfo, Severity
from brain.verify.deep import Renormalizer
from brain.verify.engine import verify_brain
from brain.verify.report import Counts, ModuleSummary, Problem, VerifyReport

__all__ = [
    "PROBLEM_CODES",
    "CodeInfo",
    "Counts",
    "ModuleSummary",
    "Problem",
    "Renormalizer",
    "Severity",
    "VerifyReport",
    "verify_brain",
]
