"""`brain merge BRANCH|SNAPSHOT|REF...`: join other histories into the current one (PROTOCOL §10.2-§10.6).

Up to date and fast-forward are reported as such; otherwise the reconciliation is planned (`--plan` stops
there and writes nothing; `--format markdown` renders it as a pull-request comment), and either committed
with the strategy or halted in `boltzmann/reconcile.json` (exit 5) for `brain reconcile`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import RenderableType

from brain.errors import BrainError, NotFoundError, RefusedError, UsageError
from brain.identity import BlockId, OciDigest
from cli.context import CliContext, cli_context
from cli.options import JsonFlag
from cli.output import Output, Result
from cli.signing import SigningPlan, SignWithOption, with_signature

if TYPE_CHECKING:
    from brain.blocks import Block
    from brain.brain import Brain
    from ingest.lineage_graph import LineageGraph
    from brain.gate import ContradictionKey
    from brain.reconcile.index import OurIndex
    from brain.reconcile.operations import Outcome
    from brain.reconcile.plan import MergePlan


class StrategyChoice(str, Enum):
    merge = "merge"
    rebase = "rebase"
    squash = "squash"


class FormatChoice(str, Enum):
    table = "table"
    markdown = "markdown"


class VerdictRow(Result):
    block: str
    module: str
    verdict: str
    codes: list[str]
    issues: list[str]
    missing: dict[str, str]
    contenders: list[str]
    resolution: str | None


class CostRow(Result):
    strategy: str
    snapshots: int
    keeps_their_history: bool
    note: str


class MergeResult(Result):
    """What `brain merge` (or `reconcile continue`/`status`) found or did."""

    outcome: str
    strategy: str
    ours: OciDigest
    theirs: list[OciDigest]
    ancestor: OciDigest | None
    snapshots: list[OciDigest]
    modules: list[dict[str, Any]]
    judged: int
    verdicts: list[VerdictRow]
    cascade: dict[str, list[BlockId]]
    withdrawn: dict[str, list[BlockId]]
    costs: list[CostRow]


def merge(
    ctx: typer.Context,
    refs: Annotated[list[str], typer.Argument(metavar="BRANCH|SNAPSHOT|REF...", help="What to merge in.",
                                              show_default=False)],
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why (kept in the history log).")] = "",
    strategy: Annotated[StrategyChoice, typer.Option("--strategy", help="merge, rebase or squash.")] = StrategyChoice.merge,
    plan: Annotated[bool, typer.Option("--plan", help="Print the review; write nothing.")] = False,
    ff_only: Annotated[bool, typer.Option("--ff-only", help="Refuse unless it is a fast-forward.")] = False,
    no_ff: Annotated[bool, typer.Option("--no-ff", help="Write a merge snapshot even for a fast-forward.")] = False,
    allow_unrelated: Annotated[bool, typer.Option("--allow-unrelated", help="Join histories with no common ancestor.")] = False,
    plain_http: Annotated[bool, typer.Option("--plain-http", help="Fetch a registry REF over plain HTTP.")] = False,
    output_format: Annotated[FormatChoice, typer.Option("--format", help="table or markdown (a pull-request comment).")] = FormatChoice.table,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Merge branches, snapshots or registry references into the current branch."""
    from brain.reconcile.operations import halt_line
    from brain.reconcile.operations import merge as run_merge
    from brain.snapshot import TrustScope

    context = cli_context(ctx)
    if ff_only and no_ff:
        raise UsageError("--ff-only and --no-ff contradict each other: pass one")
    if not plan and not reason.strip():
        raise UsageError("a merge needs --reason TEXT (it is kept in the history log)")
    brain = context.open_brain()
    output = _output(context, as_json, output_format)
    theirs = [resolve_target(context, brain, ref, plain_http, output) for ref in refs]
    signing = SigningPlan.load(brain, sign_with)
    if not plan:
        signing.require({TrustScope.COMMIT}, "this merge")
    outcome = run_merge(
        brain, context.actor(), theirs, index_of(brain, persist=not plan), strategy=strategy.value,
        reason=reason or "plan", plan_only=plan, fast_forward_mode="only" if ff_only else "never" if no_ff else "auto",
        allow_unrelated=allow_unrelated, lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
        after_commit=lineage_hook(brain),
    )
    result = merge_result(outcome)
    if outcome.kind == "halted":
        output.result(result, lambda r: render(r, output))
        raise RefusedError(halt_line(outcome))
    signed = signing.sign_new_head(context) if outcome.kind == "merged" else None
    output.result(with_signature(result, signed), lambda r: render(r, output))
    if outcome.kind == "up_to_date":
        output.message("already up to date: nothing was written")
    elif outcome.kind == "fast_forward":
        moved = "would move" if plan else "moved"
        output.message(f"fast-forward: the head {moved} to {theirs[0].short}; no snapshot is written")
    elif outcome.kind == "merged":
        shown = ", ".join(d.short for d in outcome.snapshots)
        output.message(f"merged ({outcome.strategy}) in snapshot {shown}")


def _output(context: CliContext, as_json: bool, output_format: FormatChoice) -> Output:
    output = context.output(as_json)
    if output_format is FormatChoice.markdown and not output.as_json:
        return Output(quiet=context.quiet, markdown=True)
    return output


def resolve_target(context: CliContext, brain: Brain, text: str, plain_http: bool, output: Output) -> OciDigest:
    """A branch name, a held snapshot (digest or prefix), else a registry reference fetched first."""
    branch = _branch_head(brain, text)
    if branch is not None:
        return branch
    bare = text.removeprefix("sha256:")
    if bare and all(c in "0123456789abcdef" for c in bare) and len(bare) >= 4:
        return brain.resolve_snapshot_prefix(text)
    if "/" in text and ("." in text.split("/")[0] or ":" in text.split("/")[0]):
        return _fetch(context, brain, text, plain_http, output)
    raise NotFoundError(f"{text!r} names no branch, held snapshot or registry reference",
                        hint="see `brain branch` and `brain log`; a reference is HOST[:PORT]/REPOSITORY[:TAG]")


def _branch_head(brain: Brain, name: str) -> OciDigest | None:
    from brain.branches.names import is_branch_name
    from brain.branches.operations import resolve_branch

    if not is_branch_name(name):
        return None
    try:
        return resolve_branch(brain, name)
    except NotFoundError:
        return None


def _fetch(context: CliContext, brain: Brain, text: str, plain_http: bool, output: Output) -> OciDigest:
    from oci.pull import pull
    from oci.reference import parse_reference

    ref = parse_reference(text, plain_http=plain_http)
    pulled = pull(brain, ref, fetch_only=True, lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
                  on_warning=output.warning)
    output.message(f"fetched {text}: snapshot {pulled.snapshot.short} ({pulled.blobs_fetched} blobs downloaded)")
    return pulled.snapshot


class LineageIndex:
    """`brain.reconcile.index.OurIndex` over the lineage log (no decode of every provenance block)."""

    def __init__(self, brain: Brain, snapshot: OciDigest, persist: bool) -> None:
        self.brain, self.snapshot, self.persist = brain, snapshot, persist
        self._graph: LineageGraph | None = None

    @property
    def graph(self) -> LineageGraph:
        """Loaded on the first question: a merge that only adds sources never reads the lineage log."""
        if self._graph is None:
            from ingest.lineage_graph import graph_of

            self._graph = graph_of(self.brain, self.snapshot, persist=self.persist)
        return self._graph

    def evidence_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return self.graph.evidence_dependents(block)

    def structural_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return self.graph.structural_dependents(block)

    def winners(self, loser: BlockId) -> tuple[BlockId, ...]:
        return self.graph.winners(loser)

    def evidence(self, block: BlockId) -> tuple[BlockId, ...]:
        return self.graph.evidence(block)

    def statements(self, key: ContradictionKey) -> Iterable[tuple[str, BlockId]]:
        return [(s, BlockId(h)) for h, s in self.graph.lineage.statements.get(key, {}).items()]

    def removed(self, block: BlockId) -> bool:
        from brain.blocks.provenance import RemovalRecord
        from brain.ledger import record_of

        for record_hex in self.graph.lineage.records_about.get(block.hex, ()):
            try:
                record = record_of(self.brain.resolve(BlockId(record_hex)))
            except BrainError:
                continue
            if isinstance(record, RemovalRecord) and block in record.blocks:
                return True
        return False


def lineage_hook(brain: Brain) -> Callable[[OciDigest, OciDigest, list[Block]], None]:
    """What keeps the lineage log current after a reconciliation commits (called under the writer lock)."""
    def after(parent: OciDigest, snapshot: OciDigest, added: list[Block]) -> None:
        from ingest.lineage_graph import log_commit

        log_commit(brain, parent, snapshot, added)
    return after


def index_of(brain: Brain, *, persist: bool) -> Any:
    """The index factory the reconciliation asks when it has incoming blocks to judge."""
    def make(snapshot: OciDigest) -> OurIndex:
        return LineageIndex(brain, snapshot, persist)
    return make


def merge_result(outcome: Outcome) -> MergeResult:
    from brain.reconcile.plan import module_report

    plan: MergePlan = outcome.plan
    j = plan.judgement
    verdicts = [] if j is None else [
        VerdictRow(block=str(v.block), module=v.memory_type.value, verdict=v.verdict.value, codes=list(v.codes),
                   issues=[i.detail for i in v.issues], missing={str(k): w for k, w in v.missing.items()},
                   contenders=[str(c) for c in v.contenders], resolution=v.resolution)
        for v in j.verdicts.values()
    ]
    return MergeResult(
        outcome=outcome.kind, strategy=outcome.strategy, ours=plan.ours, theirs=list(plan.theirs),
        ancestor=plan.ancestor, snapshots=list(outcome.snapshots), modules=module_report(plan),
        judged=0 if j is None else j.judged, verdicts=verdicts,
        cascade={} if j is None else {t.value: list(ids) for t, ids in j.cascade.items()},
        withdrawn={} if j is None else {t.value: list(ids) for t, ids in j.withdrawn.items()},
        costs=[CostRow(strategy=c.strategy, snapshots=c.snapshots, keeps_their_history=c.keeps_their_history,
                       note=c.note) for c in plan.costs()] if plan.join == "reconcile" else [],
    )


def render(result: MergeResult, output: Output) -> list[RenderableType]:
    """The review: modules, verdicts, cascade, withdrawn, strategy costs (markdown when asked)."""
    head = f"{result.outcome.replace('_', ' ')}: {', '.join(t.short for t in result.theirs)} into {result.ours.short}"
    shown: list[RenderableType] = [f"## brain merge — {head}" if output.markdown else head]
    if result.ancestor is not None and result.outcome not in ("up_to_date", "fast_forward"):
        refused = sum(1 for v in result.verdicts if v.verdict != "validated")
        shown.append(f"ancestor {result.ancestor.short}; {result.judged} incoming blocks judged: "
                     f"{result.judged - refused} validated (the +theirs columns), {refused} listed below")
    if result.modules:
        sides = ["ours", *(["theirs"] if len(result.theirs) == 1 else [f"theirs {i + 1}" for i in range(len(result.theirs))])]
        table = output.table("module", "ancestor", *(f"+{s}" for s in sides), *(f"-{s}" for s in sides), "result")
        for row in result.modules:
            table.add_row(row["module"], str(row["ancestor"]), *(str(len(a)) for a in row["added"]),
                          *(str(len(r)) for r in row["removed"]), str(row["result"]))
        shown.append(table)
    if result.verdicts:
        table = output.table("block", "module", "verdict", "codes", "detail", "answer")
        for v in result.verdicts:
            detail = "; ".join([*v.issues, *(f"{k[:19]}…: {w}" for k, w in v.missing.items())])
            table.add_row(v.block[:19] + "…", v.module, v.verdict, ", ".join(v.codes), detail, v.resolution or "open")
        shown.append(table)
    for title, found in (("cascade", result.cascade), ("withdrawn", result.withdrawn)):
        for module, ids in found.items():
            shown.append(f"{title} {module}: {', '.join(i.short for i in ids)}")
    if result.costs:
        table = output.table("strategy", "snapshots", "their history", "attribution")
        for c in result.costs:
            table.add_row(c.strategy, str(c.snapshots), "kept" if c.keeps_their_history else "left out", c.note)
        shown.append(table)
    return shown
