"""What `brain verify` reports (`cli.commands.verify`): the `--json` document, the authenticity judgement
of the verified snapshot, the `--tag` artifact check, and the rendering for people."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import RenderableType
from rich.text import Text

from brain.authn.decision import Authentication
from brain.authn.outcomes import Stance, State
from brain.brain import Brain
from brain.errors import BrainError, NotFoundError
from brain.identity import OciDigest
from brain.verify import Counts, ModuleSummary, Problem, Severity, VerifyReport
from brain.verify.report import DeepCounts
from cli.output import Output, Result

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


def authenticity_of(brain: Brain, report: VerifyReport, stance: Stance) -> Authentication | None:
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


def check_artifact(brain: Brain, tag: str) -> tuple[str, list[Problem], OciDigest | None]:
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


def render(result: VerifyResult, output: Output) -> Iterable[RenderableType]:
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
