"""`brain verify`: integrity, ledger consistency and resolvability, with exact diagnostics (exit 1 on errors).

The core checks are `brain.verify.verify_brain`; `--deep` hands it the installed normalization pipelines
of `ingest`, and `--tag` adds `oci.artifact.verify_artifact` and checks the snapshot the artifact packs.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import RenderableType
from rich.text import Text

from brain.authn.decision import Authentication
from brain.authn.outcomes import Stance, State
from brain.errors import BrainError, NotFoundError, ProblemsFoundError
from brain.identity import OciDigest
from brain.verify import (
    Counts,
    ModuleSummary,
    Problem,
    Severity,
    VerifyReport,
    verify_brain,
)
from brain.verify.report import DeepCounts
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result

if TYPE_CHECKING:
    from brain.brain import Brain

_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


class VerifyResult(Result):
    """The `--json` document: ok, snapshot, modules, problems, then history and artifact details."""

    ok: bool
    snapshot: str | None
    modules: dict[str, ModuleSummary]
    problems: list[Problem]
    resolvability: dict[str, Counts]
    partial_history: bool
    snapshots_checked: int
    artifact: str | None = None
    authenticity: Authentication | None = None
    # With --deep: views re-normalized, how many drifted, how many could not be re-run.
    deep: DeepCounts | None = None


class InstalledPipelines:
    """The `--deep` renormalizer: the normalization pipelines `ingest` installs."""

    def installed_version(self, pipeline: str) -> str | None:
        """The installed version of `pipeline`, or None."""
        from ingest.normalize import installed_pipelines

        return installed_pipelines().get(pipeline)

    def normalize(self, pipeline: str, source: Path) -> bytes:
        """The view bytes of the file at `source`."""
        from ingest.normalize import get_pipeline

        return get_pipeline(pipeline).normalize(source).data


def verify(
    ctx: typer.Context,
    deep: Annotated[
        bool, typer.Option("--deep", help="Also re-run each recorded normalization pipeline and compare bytes.")
    ] = False,
    tag: Annotated[
        str | None, typer.Option("--tag", metavar="TAG", help="Check the packed artifact a tag (or manifest digest) names.")
    ] = None,
    snapshot: Annotated[
        str | None,
        typer.Option(
            "--snapshot", metavar="DIGEST",
            help="Check this snapshot (its digest, or a unique prefix as `brain log` prints it) instead of the head.",
        ),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, metavar="N", help="Worker processes (default: all cores).")
    ] = None,
    stance: Annotated[
        Stance, typer.Option("--stance", help="Judge the snapshot as a head, or as an offered proposal.")
    ] = Stance.HEAD,
    as_json: JsonFlag = False,
) -> None:
    """Check integrity, ledger consistency and resolvability, and authenticity; exit 1 if problems are found."""
    context = cli_context(ctx)
    brain = context.open_brain()
    target = None if snapshot is None else brain.resolve_snapshot_prefix(snapshot)
    artifact_problems: list[Problem] = []
    manifest = None
    if tag is not None:
        manifest, artifact_problems, packed = _check_artifact(brain, tag)
        if target is None:
            target = packed
    if tag is not None and target is None:
        # The artifact's snapshot is unreadable or not stored here: only the artifact findings count.
        report = VerifyReport(snapshot=None)
    else:
        renormalizer = InstalledPipelines() if deep else None
        report = verify_brain(brain, snapshot=target, jobs=jobs, renormalizer=renormalizer)
    report.extend(artifact_problems)
    report.sort_problems()
    authenticity = _authenticity(brain, report, stance)
    fields = set(VerifyResult.model_fields) - {"artifact", "authenticity"}
    result = VerifyResult(artifact=manifest, authenticity=authenticity, **report.model_dump(include=fields))
    output = context.output(as_json)
    output.result(result, lambda r: _render(r, output))
    if authenticity is not None and authenticity.state is State.UNAUTHORIZED and result.ok:
        codes = ", ".join(f.code for f in authenticity.blocking) or "no valid signature"
        raise ProblemsFoundError(
            f"snapshot {authenticity.snapshot.short} is unauthorized ({codes}); integrity is ok",
            hint="see the authenticity section: `brain signatures` lists each record's verdict",
        )
    if not result.ok:
        errors = report.count(Severity.ERROR)
        raise ProblemsFoundError(
            f"{errors} problem{'s' if errors != 1 else ''} found in {brain.path}",
            hint="the README's 'Problem codes' section says what each code means and what to do",
        )


def _authenticity(brain: Brain, report: VerifyReport, stance: Stance) -> Authentication | None:
    """§9.7 for the verified snapshot, apart from integrity; None when there is no stored snapshot to judge."""
    from brain.authenticity import judge

    if report.snapshot is None:
        return None
    digest = OciDigest.parse(report.snapshot)
    if not brain.blobs.has(digest):
        return None
    try:
        return judge(brain, digest, stance=stance)
    except NotFoundError:
        return None  # the snapshot is unreadable: integrity already says why


def _check_artifact(brain: Brain, tag: str) -> tuple[str, list[Problem], OciDigest | None]:
    """The manifest digest, the artifact's problems, and the snapshot it packs when that is stored here."""
    from oci.artifact import resolve_manifest, verify_artifact
    from oci.manifest import Manifest

    digest = resolve_manifest(brain, tag)
    problems = verify_artifact(brain, tag)
    try:
        manifest = Manifest.decode(brain.blobs.get(digest))
    except BrainError:
        return str(digest), problems, None  # verify_artifact already says why
    packed = manifest.source_snapshot if manifest.is_projection else manifest.config.digest
    if packed is None or not brain.blobs.has(OciDigest.parse(str(packed))):
        return str(digest), problems, None
    return str(digest), problems, OciDigest.parse(str(packed))


def _render(result: VerifyResult, output: Output) -> Iterable[RenderableType]:
    if result.artifact is not None:
        yield f"artifact  {result.artifact}"
    if result.snapshot is None and result.artifact is None:
        yield "snapshot  none (empty brain)"
    elif result.snapshot is not None:
        history = " (partial history)" if result.partial_history else ""
        yield f"snapshot  {result.snapshot}  ({result.snapshots_checked} in history checked){history}"
    if result.modules:
        table = output.table("module", "blocks", "resolvable", "tombstoned", "missing", "content ok/tomb/miss", "root")
        for name, module in result.modules.items():
            b, c = module.blocks, module.content
            table.add_row(
                name, str(module.block_count), str(b.resolvable), str(b.tombstoned), str(b.missing),
                f"{c.resolvable}/{c.tombstoned}/{c.missing}", module.root,
            )
        yield table
    if result.deep is not None:
        d = result.deep
        yield (f"deep      {d.renormalized} view(s) re-normalized, {d.drifted} drifted"
               + (f", {d.not_rerun} not re-run (pipeline missing or at another version)" if d.not_rerun else ""))
    groups: dict[str | None, list[Problem]] = {}
    for problem in result.problems:
        groups.setdefault(problem.module, []).append(problem)
    for where, problems in groups.items():
        yield Text(f"{where or 'brain'}:", style="bold")
        for p in problems:
            yield Text.assemble("  ", (f"{p.severity.value:<7}", _STYLES[p.severity]), f" {p.code}  {p.block or '-'}")
            yield Text(f"           {p.detail}")
    if result.authenticity is not None:
        from cli.authenticity import render_authenticity

        yield from render_authenticity(result.authenticity, output)
    unauthorized = result.authenticity is not None and result.authenticity.state is State.UNAUTHORIZED
    if not result.ok:
        yield Text("problems found", style="bold red")
    else:
        yield Text("integrity ok, but unauthorized" if unauthorized else "ok",
                   style="bold red" if unauthorized else "bold green")
