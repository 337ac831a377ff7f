"""`brain merge BRANCH|SNAPSHOT|REF...`: join other histories into the current one (PROTOCOL §10.2-§10.6).

Up to date and fast-forward are reported as such; otherwise the reconciliation is planned (`--plan` stops
there and writes nothing; `--format markdown` renders it as a pull-request comment), and either committed
with the strategy or halted in `boltzmann/reconcile.json` (exit 5) for `brain reconcile`.
"""

from __future__ import annotations

from collections import Counter
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import RenderableType

from brain.errors import RefusedError, UsageError
from brain.identity import BlockId, OciDigest
from cli.context import CliContext, cli_context
from cli.options import JsonFlag
from cli.output import Output, Result
from cli.signing import SigningPlan, SignWithOption, with_signature

from ingest.merge_index import index_of, lineage_hook

if TYPE_CHECKING:
    from brain.brain import Brain
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
    title: str
    verdict: str
    codes: list[str]
    issues: list[str]
    missing: dict[str, str]
    contenders: list[str]
    resolution: str | None


class RegisteredAgainRow(Result):
    """A source more than one side registered: the merge keeps every record, one runner would have one."""

    block: str
    registrations: list[dict[str, str | None]]
    """`{"side", "origin"}` per registration record, ours first."""


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
    validated: int = 0
    """How many incoming blocks were validated (every one is in `verdicts` under `--json`)."""
    cascade: dict[str, list[BlockId]]
    withdrawn: dict[str, list[BlockId]]
    costs: list[CostRow]
    registered_again: list[RegisteredAgainRow] = []
    """Sources registered by more than one side (identical files at two origins in two shards): the merged
    provenance holds a registration record one runner would not have written."""
    names: dict[str, str] = {}
    """What the heads were called: our branch, and each REF as given."""


def merge(
    ctx: typer.Context,
    refs: Annotated[list[str], typer.Argument(metavar="BRANCH|SNAPSHOT|REF...", help="What to merge in.",
                                              show_default=False)],
    reason: Annotated[str, typer.Option("--reason", metavar="TEXT", help="Why (kept in the history log).")] = "",
    strategy: Annotated[
        StrategyChoice, typer.Option("--strategy", help="merge, rebase or squash.")
    ] = StrategyChoice.merge,
    plan: Annotated[bool, typer.Option("--plan", help="Print the review; write nothing.")] = False,
    ff_only: Annotated[bool, typer.Option("--ff-only", help="Refuse unless it is a fast-forward.")] = False,
    no_ff: Annotated[bool, typer.Option("--no-ff", help="Write a merge snapshot even for a fast-forward.")] = False,
    allow_unrelated: Annotated[
        bool, typer.Option("--allow-unrelated", help="Join histories with no common ancestor.")
    ] = False,
    plain_http: Annotated[bool, typer.Option("--plain-http", help="Fetch a registry REF over plain HTTP.")] = False,
    output_format: Annotated[
        FormatChoice, typer.Option("--format", help="table or markdown (a pull-request comment).")
    ] = FormatChoice.table,
    sign_with: SignWithOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Merge branches, snapshots or registry references into the current branch."""
    from brain.branches.operations import current_branch
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
    names = {str(digest): ref for ref, digest in zip(refs, theirs, strict=True)}
    signing = SigningPlan.load(brain, sign_with)
    if not plan:
        signing.require({TrustScope.COMMIT}, "this merge")
    outcome = run_merge(
        brain, context.actor(), theirs, index_of(brain, persist=not plan), strategy=strategy.value,
        reason=reason or "plan", plan_only=plan, fast_forward_mode="only" if ff_only else "never" if no_ff else "auto",
        allow_unrelated=allow_unrelated, lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
        after_commit=lineage_hook(brain),
    )
    result = merge_result(outcome, {str(outcome.plan.ours): current_branch(brain), **names}, every_row=output.as_json)
    if outcome.kind == "halted":
        output.result(result, lambda r: render(r, output, review=False))
        raise RefusedError(halt_line(outcome))
    signed = signing.sign_new_head(context) if outcome.kind == "merged" else None
    output.result(with_signature(result, signed), lambda r: render(r, output, review=plan))
    if outcome.kind == "planned":
        output.message(plan_next_step(outcome, " ".join(refs), strategy.value))
    elif outcome.kind == "up_to_date":
        output.message("already up to date: nothing was written")
    elif outcome.kind == "fast_forward":
        moved = "would move" if plan else "moved"
        output.message(f"fast-forward: the head {moved} to {theirs[0].short}; no snapshot is written")
    elif outcome.kind == "merged":
        shown = ", ".join(d.short for d in outcome.snapshots)
        output.message(f"merged ({outcome.strategy}) in snapshot {shown}")


def plan_next_step(outcome: Outcome, refs: str, strategy: str) -> str:
    """The line after a review: what running the merge would do."""
    from brain.reconcile.operations import questions

    command = f"`brain merge {refs}{'' if strategy == 'merge' else f' --strategy {strategy}'} --reason TEXT`"
    if outcome.plan.needs_answers:
        return (f"{command} would halt on {questions(outcome.plan)}, "
                "answered with `brain reconcile resolve`/`accept-removals`, then `brain reconcile continue`")
    return f"nothing needs answering: {command} commits it"


def _output(context: CliContext, as_json: bool, output_format: FormatChoice) -> Output:
    output = context.output(as_json)
    if output_format is FormatChoice.markdown and not output.as_json:
        return Output(quiet=context.quiet, markdown=True)
    return output


def resolve_target(context: CliContext, brain: Brain, text: str, plain_http: bool, output: Output) -> OciDigest:
    """What `brain merge` takes (`oci.merge_target.resolve_merge_target`), saying what a registry fetch brought."""
    from oci.merge_target import resolve_merge_target

    digest, pulled = resolve_merge_target(brain, text, plain_http=plain_http, lock_timeout=context.lock_timeout,
                                          on_wait=context.wait_note(), on_warning=output.warning)
    if pulled is not None:
        output.message(f"fetched {text}: snapshot {pulled.snapshot.short} ({pulled.blobs_fetched} blobs downloaded)")
    return digest


def merge_result(outcome: Outcome, names: dict[str, str] | None = None, *, every_row: bool = True) -> MergeResult:
    """The result document; without `every_row` (a table or markdown, not `--json`) only the first
    `SHOWN_VALIDATED` validated verdicts are built (`validated` still counts every one)."""
    from brain.blocks import Verdict
    from brain.reconcile.plan import module_report

    plan: MergePlan = outcome.plan
    j = plan.judgement
    every = [] if j is None else j.every_verdict()
    validated = sum(1 for v in every if v.verdict is Verdict.VALIDATED)
    if not every_row:
        # A title reads its block's payload: a merge of shards judges ~10^5 blocks and a table shows 50.
        shown_validated = [v for v in every if v.verdict is Verdict.VALIDATED][:SHOWN_VALIDATED]
        every = [v for v in every if v.verdict is not Verdict.VALIDATED] + shown_validated
    verdicts = [] if j is None else [
        VerdictRow(block=str(v.block), module=v.memory_type.value, title=j.title(v.block), verdict=v.verdict.value,
                   codes=list(v.codes), issues=[i.detail for i in v.issues],
                   missing={str(k): w for k, w in v.missing.items()}, contenders=[str(c) for c in v.contenders],
                   resolution=v.resolution)
        for v in every
    ]
    return MergeResult(
        outcome=outcome.kind, strategy=outcome.strategy, ours=plan.ours, theirs=list(plan.theirs),
        ancestor=plan.ancestor, snapshots=list(outcome.snapshots), modules=module_report(plan),
        judged=0 if j is None else j.judged, verdicts=verdicts, validated=validated,
        cascade={} if j is None else {t.value: list(ids) for t, ids in j.cascade.items()},
        withdrawn={} if j is None else {t.value: list(ids) for t, ids in j.withdrawn.items()},
        costs=[CostRow(strategy=c.strategy, snapshots=c.snapshots, keeps_their_history=c.keeps_their_history,
                       note=c.note) for c in plan.costs()] if plan.join == "reconcile" else [],
        registered_again=[] if j is None else [
            RegisteredAgainRow(block=str(r.block),
                               registrations=[{"side": side, "origin": origin} for side, origin in r.registrations])
            for r in j.registered_again
        ],
        names=names or {},
    )


SHOWN_VALIDATED = 50
"""Validated incoming blocks listed by the table and markdown renderings; `--json` lists every one."""


def render(result: MergeResult, output: Output, *, review: bool = True) -> list[RenderableType]:
    """The review: modules, every verdict (counts, the refused and answered blocks, then the validated ones),
    cascade, withdrawn, strategy costs (markdown when asked). Without `review` (a merge done or halted) the
    validated list and the strategy costs are left out: `--plan` and `--json` carry them."""
    def named(digest: OciDigest) -> str:
        name = result.names.get(str(digest))
        return f"{name} ({digest.short})" if name and not digest.hex.startswith(name.removeprefix("sha256:")) \
            else digest.short

    head = f"{result.outcome.replace('_', ' ')}: {', '.join(named(t) for t in result.theirs)} into {named(result.ours)}"
    shown: list[RenderableType] = [f"## brain merge — {head}" if output.markdown else head]
    if result.ancestor is not None and result.outcome not in ("up_to_date", "fast_forward"):
        counts = Counter(v.verdict for v in result.verdicts if v.verdict != "validated")
        if result.validated:
            counts["validated"] = result.validated
        tally = ", ".join(
            f"{n} {verdict}" for verdict, n in sorted(counts.items(), key=lambda c: (c[0] != "validated", c[0]))
        )
        shown.append(f"ancestor {result.ancestor.short}; {result.judged} incoming blocks judged"
                     + (f": {tally}" if tally else ""))
    if result.modules:
        sides = [
            "ours",
            *(["theirs"] if len(result.theirs) == 1 else [f"theirs {i + 1}" for i in range(len(result.theirs))]),
        ]
        table = output.table("module", "ancestor", *(f"+{s}" for s in sides), *(f"-{s}" for s in sides), "result")
        for row in result.modules:
            table.add_row(row["module"], str(row["ancestor"]), *(str(len(a)) for a in row["added"]),
                          *(str(len(r)) for r in row["removed"]), str(row["result"]))
        shown.append(table)
    shown.extend(_verdict_tables(result.verdicts, result.validated, output, review))
    for title, found in (("cascade", result.cascade), ("withdrawn", result.withdrawn)):
        for module, ids in found.items():
            shown.append(f"{title} {module}: {', '.join(i.short for i in ids)}")
    shown.extend(_registered_again_lines(result.registered_again))
    if result.costs and review:
        table = output.table("strategy", "snapshots", "their history", "attribution")
        for c in result.costs:
            table.add_row(c.strategy, str(c.snapshots), "kept" if c.keeps_their_history else "left out", c.note)
        shown.append(table)
    return shown


REGISTERED_AGAIN_SHOWN = 20
"""Sources registered by several sides listed by the table and markdown renderings; `--json` lists every one."""


def _registered_again_lines(rows: list[RegisteredAgainRow]) -> list[RenderableType]:
    """What makes this merge differ from one runner over the same files: the same bytes registered twice."""
    if not rows:
        return []
    n = len(rows)
    shown: list[RenderableType] = [
        f"registered by more than one side: {n} source{'' if n == 1 else 's'} (the same bytes at several origins, "
        "or one file in two shards built at other times); the merge keeps every registration, so its provenance "
        f"holds {sum(len(r.registrations) - 1 for r in rows)} record(s) one runner would not write (it registers "
        "the bytes once and notes the other origins as duplicates, §3.7)"
    ]
    for row in rows[:REGISTERED_AGAIN_SHOWN]:
        where = "; ".join(f"{r['origin'] or '(no origin)'} by {r['side']}" for r in row.registrations)
        shown.append(f"  {row.block[:19]}…: {where}")
    if n > REGISTERED_AGAIN_SHOWN:
        shown.append(f"  and {n - REGISTERED_AGAIN_SHOWN} more (every one in --json)")
    return shown


def _verdict_tables(verdicts: list[VerdictRow], total: int, output: Output, listed: bool) -> list[RenderableType]:
    """Every refused or answered block (all of them), then the validated ones (at most `SHOWN_VALIDATED`)."""
    shown: list[RenderableType] = []
    refused = [v for v in verdicts if v.verdict != "validated"]
    if refused:
        title = "needs an answer" if any(v.resolution is None for v in refused) else "answered"
        shown.append(f"### {title}" if output.markdown else f"{title}:")
        table = output.table("block", "module", "title", "verdict", "codes", "detail", "answer")
        for v in refused:
            detail = "; ".join([*v.issues, *(f"{k[:19]}…: {w}" for k, w in v.missing.items())])
            table.add_row(v.block[:19] + "…", v.module, v.title, v.verdict, ", ".join(v.codes), detail,
                          v.resolution or "open")
        shown.append(table)
    validated = [v for v in verdicts if v.verdict == "validated"]
    if validated and listed:
        shown.append("### validated" if output.markdown else "validated:")
        table = output.table("block", "module", "title")
        for v in validated[:SHOWN_VALIDATED]:
            table.add_row(v.block[:19] + "…", v.module, v.title)
        shown.append(table)
        if total > SHOWN_VALIDATED:
            shown.append(f"and {total - SHOWN_VALIDATED} more validated blocks (every one in --json)")
    return shown
