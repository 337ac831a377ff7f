"""The problem codes `brain verify` reports: severity, meaning and fix of each (the README's tables mirror it).

Only `error` problems make a report not ok. A `warning` is worth a look but breaks no protocol rule; an
`info` describes the brain (e.g. a history cut short by a selective pull) without blaming it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class Severity(StrEnum):
    """How bad a problem is; only errors make `ok` false."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class CodeInfo(NamedTuple):
    """One row of the problem-code table."""

    severity: Severity
    meaning: str
    fix: str


_RESTORE = "restore the file from a copy of the brain or pull the artifact again, then re-run `brain verify`"
_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO

PROBLEM_CODES: dict[str, CodeInfo] = {
    # The head pointer and the snapshot history (§5.3, §5.5).
    "head-not-retained": CodeInfo(
        _W, "head.json's `retained` list does not start with the head snapshot",
        "commit once more, or rewrite head.json"
    ),
    "snapshot-missing": CodeInfo(
        _E, "the checked snapshot, or one the head retains, is not stored", _RESTORE
    ),
    "snapshot-corrupt": CodeInfo(_E, "a stored snapshot document does not hash to its digest", _RESTORE),
    "snapshot-invalid": CodeInfo(
        _E, "a stored snapshot document is not a canonical §5.3 snapshot (or is another kind of blob)", _RESTORE
    ),
    "history-partial": CodeInfo(
        _I,
        "the history stops early: the brain came from a selective/shallow pull, or older snapshots were pruned",
        "nothing to do; pull the full history if you need it",
    ),
    "module-not-installed": CodeInfo(
        _I,
        "a partial pull left this module out: the published snapshot has it, the installed one does not, and none of "
        "its blocks are stored",
        "nothing to do; pull again with the module if you need it",
    ),
    # Compositions and module references (§5.1, §5.2).
    "composition-missing": CodeInfo(_E, "a module's composition document is not stored", _RESTORE),
    "composition-corrupt": CodeInfo(_E, "a composition document does not hash to its digest", _RESTORE),
    "composition-invalid": CodeInfo(_E, "a composition document is not a canonical §5.1 document", _RESTORE),
    "proof-invalid": CodeInfo(
        _E,
        "an inclusion proof built from a composition does not verify against its recomputed root (§4.1, §8.6)",
        "a Merkle implementation fault: report it with the composition digest",
    ),
    "root-mismatch": CodeInfo(
        _E, "the Merkle root recomputed from the composition differs from the module reference's `root`", _RESTORE
    ),
    "block-count-mismatch": CodeInfo(
        _E, "the module reference's `block_count` differs from the composition's number of members", _RESTORE
    ),
    "memory-type-mismatch": CodeInfo(
        _E, "the module key, the module reference's and the composition's `memory_type` disagree", _RESTORE
    ),
    "tombstone-not-member": CodeInfo(
        _E, "a module reference lists a tombstone that is not a member of its composition", _RESTORE
    ),
    "redaction-unfinished": CodeInfo(
        _E,
        "a redaction was interrupted before its bytes were destroyed (boltzmann/redaction.json): copies may remain",
        "run `brain redact --resume`",
    ),
    # Member blocks (§1.5).
    "block-missing": CodeInfo(_E, "a member block is not stored and is not a tombstone", _RESTORE),
    "block-corrupt": CodeInfo(_E, "a stored block does not hash to its block id", _RESTORE),
    "block-invalid": CodeInfo(
        _E, "a block hashes correctly but fails a §1.5 check (envelope, schema, canonical form)", _RESTORE
    ),
    "block-wrong-module": CodeInfo(
        _E, "a block's `memory_type` differs from the module it is a member of",
        "drop it (`brain drop ID --reason ...`) and ingest its source again"
    ),
    # Content blobs named by blocks (§5.5).
    "blob-missing": CodeInfo(
        _E, "a source, normalized-view or content blob named by a block is not stored (nor tombstoned)", _RESTORE
    ),
    "blob-corrupt": CodeInfo(_E, "a content blob does not hash to the digest a block names", _RESTORE),
    "blob-size-mismatch": CodeInfo(
        _E, "a content blob's length differs from the `size` the block states",
        "ingest the source again (`brain ingest PATH`)"
    ),
    # The ledger (§3.7, §7).
    "derivation-missing": CodeInfo(
        _E, "a semantic, procedural or episodic member has no derivation record",
        "drop it (`brain drop ID --reason ...`), or ingest its source again to re-derive it"
    ),
    "validation-missing": CodeInfo(
        _W, "a semantic, procedural or episodic member has no validation record",
        "ingest its source again (`brain ingest PATH`), or drop it (`brain drop ID --reason ...`)"
    ),
    "evidence-not-found": CodeInfo(
        _E,
        "a derivation record cites evidence that is not a member of the canonical composition",
        "ingest the source again (`brain ingest PATH`), or drop the derived block (`brain drop ID`)",
    ),
    "evidence-mismatch": CodeInfo(
        _E,
        "a block's payload `evidence` differs from what every derivation record for it cites",
        "drop the block (`brain drop ID --reason ...`) and ingest its source again",
    ),
    "relation-target-not-found": CodeInfo(
        _E, "a semantic relation target is not a member of any module of the snapshot",
        "drop the block (`brain drop ID --reason ...`): its dependents go with it"
    ),
    "step-use-not-found": CodeInfo(
        _E, "a procedural step `uses` a block that is not a member of any module",
        "drop the block (`brain drop ID --reason ...`): its dependents go with it"
    ),
    "registration-missing": CodeInfo(
        _E, "a canonical member has no registration record", "ingest the source again (`brain ingest PATH`)"
    ),
    "normalization-missing": CodeInfo(
        _E, "a canonical block's normalized view has no normalization record",
        "ingest the source again (`brain ingest PATH`)"
    ),
    "precedence-conflict": CodeInfo(
        _W,
        "two supersession records name the same loser with different winners (§7.1): which one stands is unclear",
        "drop the winner that should not stand, or supersede one winner by the other (`brain supersede`)",
    ),
    "record-target-unknown": CodeInfo(
        _E,
        "a supersession, demotion or removal record names a block that never was a member",
        "the ledger was forged or mixed with another brain's: restore it",
    ),
    "model-derived-protected": CodeInfo(
        _E,
        "a derivation record says a model produced a canonical or provenance block",
        "drop the block (`brain drop ID --allow-canonical --reason ...`): only the protocol writes these modules",
    ),
    "episodic-removed": CodeInfo(
        _E,
        "an episodic block left the episodic composition in a later snapshot (episodic memory is append-only)",
        "pull the last good artifact again (`brain pull REF --force`); episodes may only be superseded or demoted "
        "(`brain supersede`, `brain demote`)",
    ),
    "removal-unexplained": CodeInfo(
        _E,
        "a block left a module between a snapshot and its first parent without a removal record (§7.7)",
        "pull the last good artifact again (`brain pull REF --force`); "
        "removals go through `brain drop`, which writes the record",
    ),
    # --deep: re-running normalization pipelines.
    "normalization-mismatch": CodeInfo(
        _E,
        "re-running the recorded normalization pipeline produced different bytes than the stored view",
        "ingest the source again (`brain ingest PATH --no-cache`) to rebuild its view",
    ),
    "pipeline-version-drift": CodeInfo(
        _W,
        "the installed normalization pipeline has another version than the recorded one, so it was not re-run",
        "install the recorded pipeline version to compare bytes",
    ),
    "pipeline-not-installed": CodeInfo(
        _W, "the recorded normalization pipeline is not installed, so it was not re-run", "install the pipeline"
    ),
}


def severity_of(code: str) -> Severity:
    """The severity of a known code; any other code (the artifact checks of `oci`) counts as an error."""
    info = PROBLEM_CODES.get(code)
    return Severity.ERROR if info is None else info.severity
