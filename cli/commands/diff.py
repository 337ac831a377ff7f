"""`brain diff [A] [B]`: what changed between two snapshots, per module, with titles, origins and reasons.

A and B are snapshot digests or prefixes, local tags, `HEAD`, `HEAD~N`, or a registry REF (one manifest, its
config and, when the compositions are not stored here, its history layer). Default: the head's first parent
and the head; one argument: that and the head. Member lists are compared from the compositions; only the
changed blocks (and the provenance records added in between) are decoded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Literal

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import RegistrationRecord
from brain.brain import Brain
from brain.composition import ModuleRef
from brain.errors import BrainError, NotFoundError
from brain.identity import BlockId, OciDigest
from brain.lifecycle.describe import title_of
from brain.lifecycle.diff import (
    ModuleChange,
    apply_records,
    module_changes,
    summary_line,
)
from brain.lifecycle.summary import readable_records
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result
from cli.transfer import PlainHttpFlag

TITLES_PER_LIST = 200
EMPTY = "(empty)"
_HEAD = re.compile(r"HEAD(?:~(\d+)|(\^+))?")


class Change(Result):
    """One changed block."""

    block: BlockId
    title: str | None
    origin: str | None = None
    mechanism: str | None = None
    reason: str | None = None
    winner: BlockId | None = None


class ModuleDiff(Result):
    """One module's changes."""

    added: list[Change]
    removed: list[Change]
    superseded: list[Change]
    demoted: list[Change]
    redacted: list[Change]


class DiffResult(Result):
    """The two snapshots compared, the changes per module, and the counts."""

    a: str
    b: str
    a_snapshot: OciDigest | None
    b_snapshot: OciDigest
    differ: bool
    modules: dict[str, ModuleDiff]
    counts: dict[str, int]
    summary: str


class Side:
    """One side of the comparison: its label, snapshot digest, module references and member lists."""

    def __init__(self, label: str, snapshot: OciDigest | None, refs: Mapping[MemoryType, ModuleRef],
                 members: Callable[[ModuleRef], Sequence[BlockId]]) -> None:
        self.label, self.snapshot, self.refs, self.members = label, snapshot, dict(refs), members


def diff(
    ctx: typer.Context,
    a: Annotated[str | None, typer.Argument(metavar="[A]", help="Snapshot, tag, HEAD~N or REF (default: HEAD~1).",
                                            show_default=False)] = None,
    b: Annotated[str | None, typer.Argument(metavar="[B]", help="Snapshot, tag, HEAD~N or REF (default: HEAD).",
                                            show_default=False)] = None,
    output_format: Annotated[
        Literal["text", "markdown"], typer.Option("--format", metavar="FORMAT", help="text or markdown (a table).")
    ] = "text",
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 when the snapshots differ.")] = False,
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Show what changed between two snapshots (default: the head's parent and the head)."""
    context = cli_context(ctx)
    brain = context.open_brain()
    if a is None and b is None:
        a = "HEAD~1"
        history = brain.history()
        if len(history) == 1 and history[0][1].first_parent is None:
            a = EMPTY  # a first snapshot: everything in it is new
    if a is not None and b is None and "..." in a:
        left, right = three_dot(brain, a)
    else:
        left = Side(EMPTY, None, {}, lambda ref: ()) if a == EMPTY else side_of(brain, a or "HEAD", plain_http)
        right = side_of(brain, b or "HEAD", plain_http)
    result = compare(brain, left, right)
    output = context.output(as_json)
    if output_format == "markdown" and not as_json:
        output.result(result, lambda r: [markdown(r)])
    else:
        output.result(result, lambda r: _render(r, output))
    if exit_code and result.differ:
        raise typer.Exit(1)


def side_of(brain: Brain, text: str, plain_http: bool) -> Side:
    """Resolve A or B (see the module docstring)."""
    local = _local_snapshot(brain, text)
    if local is not None:
        snapshot = brain.snapshot(local)
        assert snapshot is not None
        return Side(text, local, {MemoryType(k): v for k, v in snapshot.modules.items()},
                    lambda ref: brain.composition(ref).block_ids)
    if "/" not in text:
        raise NotFoundError(
            f"{text!r} is not a stored snapshot, a local tag or HEAD~N",
            hint="see `brain log` and `brain tags`; a registry reference looks like host/repository:tag",
        )
    from oci.reference import parse_reference
    from oci.remote_snapshot import remote_state

    state = remote_state(brain, parse_reference(text, plain_http=plain_http))
    return Side(text, state.snapshot, state.refs, lambda ref: state.compositions[ref.composition].block_ids)


def three_dot(brain: Brain, text: str) -> tuple[Side, Side]:
    """`A...B`: what B changed since the merge base of A and B (either side defaults to HEAD)."""
    from brain.reconcile.ancestor import merge_base

    a_text, _, b_text = text.partition("...")
    a_digest, b_digest = (_named_snapshot(brain, t or "HEAD") for t in (a_text, b_text))
    base = merge_base(brain, a_digest, b_digest)
    right = side_of(brain, str(b_digest), False)
    right.label = b_text or "HEAD"
    if base is None:
        return Side(f"{EMPTY} (no common ancestor)", None, {}, lambda ref: ()), right
    left = side_of(brain, str(base), False)
    left.label = f"merge base of {a_text or 'HEAD'} and {b_text or 'HEAD'}"
    return left, right


def _named_snapshot(brain: Brain, text: str) -> OciDigest:
    """A held snapshot, tag or HEAD~N, else a branch name."""
    from brain.branches.names import is_branch_name
    from brain.branches.operations import resolve_branch

    local = None if text != "HEAD" and is_branch_name(text) and not _is_hex(text) else _local_snapshot(brain, text)
    if local is None and is_branch_name(text):
        return resolve_branch(brain, text)
    if local is None:
        raise NotFoundError(f"{text!r} is not a stored snapshot, a local tag, HEAD~N or a branch", hint="see `brain log`")
    return local


def _is_hex(text: str) -> bool:
    return re.fullmatch(r"(sha256:)?[0-9a-f]{4,64}", text) is not None


def _local_snapshot(brain: Brain, text: str) -> OciDigest | None:
    match = _HEAD.fullmatch(text)
    if match is not None:
        steps = int(match.group(1)) if match.group(1) else len(match.group(2) or "")
        history = brain.history()
        if not history:
            raise NotFoundError(f"the brain at {brain.path} is empty: {text} names nothing")
        if steps >= len(history):
            raise NotFoundError(f"{text}: the history stored here has only {len(history)} snapshots",
                                hint="see `brain log`")
        return history[steps][0]
    for tag, descriptor in brain.layout.tags():
        if tag == text:
            return _tagged_snapshot(brain, descriptor.digest, tag)
    if re.fullmatch(r"(sha256:)?[0-9a-f]{4,64}", text):
        return brain.resolve_snapshot_prefix(text)
    return None


def _tagged_snapshot(brain: Brain, manifest_digest: OciDigest, tag: str) -> OciDigest:
    from oci.manifest import Manifest

    manifest = Manifest.decode(brain.blobs.get(manifest_digest), what=f"manifest of tag {tag}")
    source = manifest.source_snapshot if manifest.is_projection else manifest.config.digest
    if source is None or not brain.blobs.has(source):
        raise NotFoundError(f"tag {tag} names a snapshot that is not stored here", hint="pull it, or diff the REF")
    return source


def compare(brain: Brain, left: Side, right: Side) -> DiffResult:
    """The diff of two sides (pure apart from reading the changed blocks' bytes when stored here)."""
    changes = module_changes(left.refs, right.refs, lambda ref: _members(left, right, ref))
    provenance = changes.get(MemoryType.PROVENANCE)
    members = {t: set(right.members(ref)) for t, ref in right.refs.items() if t is not MemoryType.PROVENANCE
               and t in changes}

    def module_of(block: BlockId) -> MemoryType | None:
        return next((t for t, ids in members.items() if block in ids), None)

    records = readable_records(brain, () if provenance is None else (*provenance.added, *provenance.removed))
    apply_records(changes, records, module_of)
    origins = _origins(brain, records)
    modules = {str(t): _module_diff(brain, c, origins) for t, c in changes.items() if not c.empty}
    counts = {
        kind: sum(len(getattr(m, kind)) for m in modules.values())
        for kind in ("added", "removed", "superseded", "demoted", "redacted")
    }
    differ = left.snapshot != right.snapshot and any(counts.values()) or left.refs != right.refs
    return DiffResult(
        a=left.label, b=right.label, a_snapshot=left.snapshot, b_snapshot=_known(right.snapshot), differ=bool(differ),
        modules=modules, counts=counts, summary=summary_line(changes),
    )


def _known(snapshot: OciDigest | None) -> OciDigest:
    if snapshot is None:
        raise NotFoundError("nothing to compare: the second side is empty")
    return snapshot


def _origins(brain: Brain, records: Iterable[object]) -> Mapping[BlockId, str]:
    """Registered origins: the head's lineage (`ingest.lineage_graph`), plus the registrations just read."""
    from ingest.lineage_graph import graph_of

    found: dict[BlockId, str] = {}
    head = brain.snapshot_digest()
    if head is not None:
        for origin, blocks in graph_of(brain, head).lineage.origins.items():
            found.update((BlockId(b), origin) for b in blocks)
    for record in records:
        if isinstance(record, RegistrationRecord) and record.origin:
            found[record.block] = record.origin
    return found


def _members(left: Side, right: Side, ref: ModuleRef) -> Sequence[BlockId]:
    for side in (right, left):
        if any(r.composition == ref.composition for r in side.refs.values()):
            return side.members(ref)
    raise NotFoundError(f"composition {ref.composition} is not available")


def _module_diff(brain: Brain, change: ModuleChange, origins: Mapping[BlockId, str]) -> ModuleDiff:
    removed_by = change.removed_by

    def entries(blocks: Iterable[BlockId]) -> list[Change]:
        rows = []
        for i, block in enumerate(blocks):
            record = removed_by.get(block)
            rows.append(Change(
                block=block,
                title=_title(brain, block) if i < TITLES_PER_LIST else None,
                origin=origins.get(block),
                mechanism=None if record is None else str(record.mechanism),
                reason=None if record is None else record.reason,
            ))
        return rows

    return ModuleDiff(
        added=entries(change.added),
        removed=entries(change.removed),
        superseded=[
            Change(block=loser, title=_title(brain, loser), winner=winner) for loser, winner in change.superseded.items()
        ],
        demoted=[Change(block=b, title=_title(brain, b), reason=reason) for b, reason in change.demoted.items()],
        redacted=[Change(block=b, title=None) for b in change.redacted],
    )


def _title(brain: Brain, block: BlockId) -> str | None:
    try:
        return title_of(brain.resolve(block))
    except BrainError:
        return None


_KINDS = ("added", "removed", "superseded", "demoted", "redacted")


def _rows(result: DiffResult) -> Iterable[tuple[str, str, Change]]:
    for module, changes in result.modules.items():
        for kind in _KINDS:
            for change in getattr(changes, kind):
                yield module, kind, change


def _detail(kind: str, change: Change) -> str:
    if kind == "removed" and change.mechanism:
        return f"{change.mechanism}: {change.reason}"
    if kind == "superseded" and change.winner is not None:
        return f"by {change.winner.short}"
    if kind == "demoted":
        return change.reason or ""
    return ""


def _counts_line(result: DiffResult) -> str:
    counts = ", ".join(f"{n} {kind}" for kind, n in result.counts.items() if n) or "no changes"
    before = f"{result.a} ({result.a_snapshot.short})" if result.a_snapshot is not None else result.a
    return f"{before} → {result.b} ({result.b_snapshot.short}): {counts}"


def _render(result: DiffResult, output: Output) -> list[RenderableType]:
    if not result.differ:
        return [f"{_counts_line(result)}: identical"]
    table = output.table("module", "change", "block", "title", "origin", "detail")
    for module, kind, change in _rows(result):
        table.add_row(module, kind, change.block.short, change.title or "-", change.origin or "-", _detail(kind, change))
    return [table, _counts_line(result), result.summary]


def markdown(result: DiffResult) -> str:
    """A table to paste in a pull-request comment."""

    def cell(text: str | None) -> str:
        return (text or "").replace("|", "\\|").replace("\n", " ")

    lines = [f"**brain diff** `{result.a}` → `{result.b}`: {result.summary}", ""]
    if not result.differ:
        return "\n".join([*lines, "No changes."])
    lines += ["| module | change | block | title | origin | detail |", "|---|---|---|---|---|---|"]
    for module, kind, change in _rows(result):
        lines.append(
            f"| {module} | {kind} | `{change.block.short}` | {cell(change.title)} | {cell(change.origin)} | "
            f"{cell(_detail(kind, change))} |"
        )
    lines += ["", _counts_line(result)]
    return "\n".join(lines)


__all__ = ["DiffResult", "Side", "compare", "diff", "markdown", "side_of"]
