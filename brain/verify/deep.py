"""`--deep`: re-run each recorded normalization pipeline and compare its output with the stored view bytes.

The core does not know the pipelines (they live in `ingest`, which `brain` must not import); the caller
hands in a `Renormalizer`. A pipeline is only re-run at the recorded version: any other installed version
may legitimately produce other bytes, so that is reported as drift instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from brain.errors import BrainError
from brain.verify.facts import BlockFacts
from brain.verify.ledger_checks import LedgerIndex
from brain.verify.report import DeepCounts, Problem


class Renormalizer(Protocol):
    """What `--deep` needs from the installed normalization pipelines."""

    def installed_version(self, pipeline: str) -> str | None:
        """The installed version of `pipeline`, or None when it is not installed."""
        ...

    def normalize(self, pipeline: str, source: Path) -> bytes:
        """The view bytes `pipeline` produces for the file at `source`; raises a `BrainError` on failure."""
        ...


def deep_problems(
    canonical: list[BlockFacts],
    index: LedgerIndex,
    blob_states: Mapping[str, str],
    renormalizer: Renormalizer,
    blob_dir: Path,
    counts: DeepCounts | None = None,
) -> list[Problem]:
    """Drift and mismatch findings for every canonical block whose view and source are sound.

    `counts`, when given, is told how many views were re-normalized, how many of those drifted, and how
    many could not be re-run (pipeline not installed, or installed at another version).
    """
    problems: list[Problem] = []
    counts = counts if counts is not None else DeepCounts()
    for facts in canonical:
        if not facts.ok:
            continue
        roles = {named.role: named for named in facts.blobs}
        source, view = roles.get("source"), roles.get("normalized view")
        if (
            source is None
            or view is None
            or blob_states.get(source.digest) != "ok"
            or blob_states.get(view.digest) != "ok"
        ):
            continue
        pipelines = sorted(
            {(r.pipeline or "", r.pipeline_version or "") for _, r in index.normalizations.get(facts.block_id, [])}
        )
        for pipeline, recorded in pipelines:
            found = _rerun(facts.block_id, source.digest, view.digest, pipeline, recorded, renormalizer, blob_dir)
            codes = {p.code for p in found}
            if codes & {"pipeline-not-installed", "pipeline-version-drift"}:
                counts.not_rerun += 1
            else:
                counts.renormalized += 1
                counts.drifted += bool(codes)
            problems += found
    return problems


def _rerun(
    block_id: str, source: str, view: str, pipeline: str, recorded: str, renormalizer: Renormalizer, blob_dir: Path
) -> list[Problem]:
    installed = renormalizer.installed_version(pipeline)
    if installed is None:
        return [
            Problem.of(
                "pipeline-not-installed",
                f"normalization pipeline {pipeline!r} (recorded version {recorded}) is not installed",
                module="canonical",
                block=block_id,
            )
        ]
    if installed != recorded:
        return [
            Problem.of(
                "pipeline-version-drift",
                f"pipeline {pipeline!r} is installed at version {installed}; the view was made by version {recorded}",
                module="canonical",
                block=block_id,
            )
        ]
    try:
        output = renormalizer.normalize(pipeline, blob_dir / source.removeprefix("sha256:"))
    except BrainError as e:
        detail = f"re-running {pipeline} {recorded} on {source} failed: {e.message}"
        return [Problem.of("normalization-mismatch", detail, module="canonical", block=view)]
    produced = "sha256:" + hashlib.sha256(output).hexdigest()
    if produced != view:
        return [
            Problem.of(
                "normalization-mismatch",
                f"re-running {pipeline} {recorded} on source {source} of block {block_id} gives {produced} "
                f"({len(output)} bytes), not the stored view",
                module="canonical",
                block=view,
            )
        ]
    return []
