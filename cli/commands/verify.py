"""`brain verify`: integrity, ledger consistency and resolvability, with exact diagnostics (exit 1 on errors).

The core checks are `brain.verify.verify_brain`; `--deep` hands it the installed normalization pipelines
of `ingest`, and `--tag` adds `oci.artifact.verify_artifact` and checks the snapshot the artifact packs.
The result model and its rendering are `cli.verify_report`, imported when the command runs: the checks and
the authentication stack they name are not for every `brain` invocation to load.
"""

from __future__ import annotations

from typing import Annotated

import typer

from brain.authn.outcomes import Stance
from cli.context import cli_context
from cli.options import JsonFlag
from ingest.renormalizer import InstalledPipelines as InstalledPipelines  # `--deep`'s pipelines


def verify(
    ctx: typer.Context,
    deep: Annotated[
        bool, typer.Option("--deep", help="Also re-run each recorded normalization pipeline and compare bytes.")
    ] = False,
    tag: Annotated[
        str | None,
        typer.Option("--tag", metavar="TAG", help="Check the packed artifact a tag (or manifest digest) names.")
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
    from brain.authn.outcomes import State
    from brain.errors import ProblemsFoundError
    from brain.verify import Problem, Severity, VerifyReport, verify_brain
    from cli.verify_report import VerifyResult, authenticity_of, check_artifact, render

    context = cli_context(ctx)
    brain = context.open_brain(unfinished_redaction=True)
    target = None if snapshot is None else brain.resolve_snapshot_prefix(snapshot)
    artifact_problems: list[Problem] = []
    manifest = None
    if tag is not None:
        manifest, artifact_problems, packed = check_artifact(brain, tag)
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
    authenticity = authenticity_of(brain, report, stance)
    fields = set(VerifyResult.model_fields) - {"artifact", "authenticity"}
    result = VerifyResult(artifact=manifest, authenticity=authenticity, **report.model_dump(include=fields))
    output = context.output(as_json)
    output.result(result, lambda r: render(r, output))
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
