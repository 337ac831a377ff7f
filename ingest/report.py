"""What `brain ingest` reports: one outcome per source, the run's totals, and progress events.

Plain frozen pydantic models, so the CLI prints them as tables for people or `model_dump(mode="json")`
for `--json`. A problem's `kind` decides `--strict`: `failure` and `rejection` fail a strict run,
`skipped` (an empty file, a link leaving the root) and `note` (binary content behind a text name) never do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from brain.frozen import FrozenModel
from ingest.budget import ProposerUsage
from ingest.shard import ShardReport

Stage = Literal["discover", "register", "normalize", "propose", "validate"]
ProblemKind = Literal["failure", "skipped", "note", "rejection"]
Status = Literal["registered", "replaced", "unchanged", "duplicate", "skipped", "failed"]
"""`replaced`: new bytes under an origin that named other bytes; the new block supersedes the old (§3.7)."""
STRICT_KINDS: frozenset[str] = frozenset({"failure", "rejection"})
NOT_STRICT_CODES: frozenset[str] = frozenset({"duplicate"})
"""Rejections `--strict` lets pass: a re-proposed block that is already a member adds nothing and loses
nothing (it is what a new proposer version, or another proposer, says on a brain that already knows it)."""


class _Model(FrozenModel):
    """Frozen; unknown fields refused."""


class SourceProblemReport(_Model):
    """One thing that went wrong (or was decided) for one source."""

    stage: Stage
    code: str
    detail: str
    kind: ProblemKind
    candidate: int | None = None
    """For a rejection: which candidate of the answer (one candidate can fail several checks)."""


class SourceOutcome(_Model):
    """What happened to one source path."""

    relpath: str
    origin: str
    status: Status
    block: str | None = None
    media_type: str | None = None
    size: int | None = None
    proposed: int = 0
    validated: int = 0
    rejected: int = 0
    cached: bool = False
    replaces: tuple[str, ...] = ()
    problems: tuple[SourceProblemReport, ...] = ()


class SyncOutcome(_Model):
    """A registered source whose file is gone from the ingested roots (`ingest.sync`): only reported
    (`missing`), or removed with `--sync` (`dropped` with its cascade; `demoted` when the cascade reaches an
    episode: the source and its episodes demoted, the rest of its cascade dropped)."""

    origin: str
    block: str
    action: Literal["missing", "dropped", "demoted"]
    dropped: dict[str, int] = {}
    demoted: int = 0


class IngestResult(_Model):
    """The whole run: totals first, then every source in processing order."""

    dry_run: bool
    snapshot: str | None
    checkpoints: int
    sources: int
    registered: int
    replaced: int
    unchanged: int
    duplicate: int
    skipped: int
    failed: int
    proposed: int
    validated: int
    rejected: int
    rejected_by_code: dict[str, int]
    problems_by_code: dict[str, int]
    blocks_added: int
    bytes_registered: int
    cache_hits: int
    outcomes: tuple[SourceOutcome, ...]
    missing: tuple[SyncOutcome, ...] = ()
    usage: ProposerUsage | None = None
    """Tokens and cost of a model-backed proposer (`ingest.budget`); None for a local one."""
    shard: ShardReport | None = None
    """`--shard I/N`: how many discovered sources the shard kept and skipped (`ingest.shard`)."""

    @property
    def strict_problems(self) -> int:
        """How many problems would fail a `--strict` run (failures and rejections other than `duplicate`)."""
        return sum(
            1 for o in self.outcomes for p in o.problems if p.kind in STRICT_KINDS and p.code not in NOT_STRICT_CODES
        )


@dataclass(frozen=True)
class IngestProgress:
    """A progress event: sources handled so far (of `total`), bytes read, blocks staged, the last path."""

    files: int
    total: int
    bytes: int
    blocks: int
    relpath: str


def summarize(
    outcomes: Iterable[SourceOutcome],
    *,
    dry_run: bool,
    snapshot: str | None,
    checkpoints: int,
    blocks_added: int,
) -> IngestResult:
    """Totals over `outcomes` (pure)."""
    items = tuple(outcomes)
    status = Counter(o.status for o in items)
    # A candidate is counted once, under the first check it failed, so `rejected` is the sum of the codes.
    rejected = Counter(
        p.code for o in items for p in _first_per_candidate(p for p in o.problems if p.kind == "rejection")
    )
    others = Counter(p.code for o in items for p in o.problems if p.kind != "rejection")
    return IngestResult(
        dry_run=dry_run,
        snapshot=snapshot,
        checkpoints=checkpoints,
        sources=len(items),
        registered=status["registered"],
        replaced=status["replaced"],
        unchanged=status["unchanged"],
        duplicate=status["duplicate"],
        skipped=status["skipped"],
        failed=status["failed"],
        proposed=sum(o.proposed for o in items),
        validated=sum(o.validated for o in items),
        rejected=sum(o.rejected for o in items),
        rejected_by_code=dict(sorted(rejected.items())),
        problems_by_code=dict(sorted(others.items())),
        blocks_added=blocks_added,
        bytes_registered=sum(o.size or 0 for o in items if o.status in ("registered", "replaced")),
        cache_hits=sum(1 for o in items if o.cached),
        outcomes=items,
    )


def _first_per_candidate(rejections: Iterable[SourceProblemReport]) -> Iterator[SourceProblemReport]:
    """Each rejected candidate's first problem (problems without a candidate index count one each)."""
    seen: set[int] = set()
    for problem in rejections:
        if problem.candidate is None or problem.candidate not in seen:
            if problem.candidate is not None:
                seen.add(problem.candidate)
            yield problem
