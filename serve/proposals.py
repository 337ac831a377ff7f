"""Agents write back through the gate: the proposal use case behind `propose`/`record_episode` and the POST routes.

*An unauthorized writer can propose, never erase.* Every candidate goes through the §7.6 gate (`brain.gate`,
the one ingest uses); what validates is committed with its `derivation` and `validation` records (§3.7,
producer `{"kind": "actor", "id": <the agent's actor>}`) onto the branch `proposals/<agent>`, created from the
served head by its first commit, never onto the branch being served: a person merges it after review
(`brain merge proposals/<agent> --plan`). Nothing here drops, redacts, supersedes, demotes or prunes.

Safety: a proposal holds the writer lock (`Brain.writer(actor, branch=...)`), so proposals serialize with
each other and with every other writer, while reads never take it; the branch pointer moves last (a SIGKILL
leaves the branch at its previous head); the served snapshot (`head.json`) does not change. In a governed
brain each proposal snapshot is signed with the server's key, which must hold `propose` and neither `ingest`
nor `commit`, so it authenticates as `valid_as_proposal`, never as an authorized head (§9.7, §9.10 item 4).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, StringConstraints, ValidationError

from brain.authenticity import change_of
from brain.authn.signer import Signer, make_record
from brain.authn.trust import entry_for
from brain.blocks import Block, MemoryType, Verdict
from brain.blocks.provenance import (
    Actor,
    ActorKind,
    DerivationRecord,
    Producer,
    ProducerKind,
    ProvenanceBlock,
    ValidationRecord,
)
from brain.brain import Brain
from brain.errors import InvalidInputError, LockTimeoutError, RefusedError
from brain.frozen import FrozenModel
from brain.gate import SPEC_CHECKS, GateContext, RejectedCandidate, ValidatedCandidate, validate_candidates
from brain.identity import BlockId, OciDigest, utc_timestamp
from brain.snapshot import TrustScope
from brain.store.authn_files import store_record
from brain.writer import Writer
from serve.proposals_context import LazyMembers, ServingBrain, StatementCache
from serve.tokens import Principal

MAX_CANDIDATES = 256
BUSY_WAIT = 5.0  # seconds a proposal waits to start (this process's queue, then the writer lock) before 429
PROPOSABLE = (MemoryType.EPISODIC, MemoryType.PROCEDURAL, MemoryType.SEMANTIC)
BRANCH_PREFIX = "proposals/"
SWEEP_EVERY = 60.0  # seconds between sweeps of blobs/sha256 for dead writers' temp files
_Text = Annotated[str, StringConstraints(strict=True, min_length=1, max_length=65536)]
_Short = Annotated[str, StringConstraints(strict=True, min_length=1, max_length=256)]
_Evidence = Annotated[tuple[_Short, ...], Field(min_length=1, max_length=64)]


class ProposalsBusy(LockTimeoutError):
    """Too many proposals, or another writer, held the brain past `BUSY_WAIT`: retry later (HTTP 429)."""


class ProposedCandidate(FrozenModel):
    """One candidate in the answer shape of §7.6 (`confidence` is accepted and never persisted)."""

    memory_type: _Short
    payload: dict[str, Any]
    evidence: _Evidence
    locator: _Short | None = None
    confidence: _Short | None = None


class ProposalRequest(FrozenModel):
    """`POST /v1/proposals` and the `propose` tool: up to 256 candidates, optionally a task id for the records."""

    candidates: Annotated[tuple[ProposedCandidate, ...], Field(min_length=1, max_length=MAX_CANDIDATES)]
    task_id: _Short | None = None


class EpisodeRequest(FrozenModel):
    """`POST /v1/episodes` and the `record_episode` tool: what happened in a session (episodic v1, §3.2)."""

    summary: _Text
    occurred_at: _Short
    evidence: _Evidence
    ended_at: _Short | None = None
    context: _Text | None = None
    participants: tuple[_Short, ...] | None = None
    outcome: _Text | None = None
    tags: tuple[_Short, ...] | None = None
    locator: _Short | None = None

    def candidate(self) -> ProposedCandidate:
        """The episodic candidate this episode is."""
        payload = self.model_dump(mode="json", exclude={"evidence", "locator"}, exclude_none=True)
        return ProposedCandidate(memory_type="episodic", payload=payload, evidence=self.evidence,
                                 locator=self.locator)


class CandidateVerdict(FrozenModel):
    """What the gate said about one candidate."""

    index: int
    verdict: Verdict
    codes: list[str]
    issues: list[dict[str, str]]
    block_id: BlockId | None = None
    committed: bool = False


class ProposalResult(FrozenModel):
    """The answer: each candidate's verdict, and the proposals branch's snapshot if anything was committed."""

    branch: str
    actor: str
    snapshot: OciDigest | None
    base: OciDigest | None
    committed: int
    signed: OciDigest | None = None
    results: list[CandidateVerdict]


@dataclass(frozen=True)
class _AgentTask:
    """The gate's task for an agent: every proposable type, and no single source (`evidence-not-in-task` off)."""

    allowed_memory_types: tuple[MemoryType, ...] = PROPOSABLE
    source: BlockId | None = None


def agent_name(text: str) -> str:
    """A branch segment naming the agent: a token's name, or an actor id's name part (`agents/claude` → claude)."""
    name = text.rsplit("/", 1)[-1].split("@", 1)[0]
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-_")[:64] or "agent"
    return name if name[0].isalnum() else f"a{name}"


def parse_request(model: type[FrozenModel], body: Any) -> Any:
    """`body` checked against `model`; raises `InvalidInputError` (an HTTP 400) naming the first problem."""
    if not isinstance(body, dict):
        raise InvalidInputError("the body must be a JSON object", hint='e.g. {"candidates": [...]}')
    try:
        return model.model_validate(body)
    except ValidationError as e:
        issue = e.errors(include_url=False)[0]
        where = ".".join(str(p) for p in issue["loc"]) or "(top)"
        more = e.error_count() - 1
        raise InvalidInputError(f"{where}: {issue['msg']}" + (f" (and {more} more)" if more else ""),
                                hint=f"see docs/agents.md; at most {MAX_CANDIDATES} candidates per call") from None


class ProposalDesk:
    """Judges proposals and commits what validates onto `proposals/<agent>`; one per server (thread-safe)."""

    def __init__(self, brain_path: Path, signer: Signer | None, lock_timeout: float | None = None) -> None:
        self.brain_path = Path(brain_path)
        self.signer = signer
        self.lock_timeout = lock_timeout
        self._statements = StatementCache()
        # Each agent's branch rewrites its semantic and provenance modules: room for twenty agents' trees.
        self._brain = ServingBrain(self.brain_path, limit=48, trees=True)
        self._lock = threading.Lock()  # one proposal at a time per process; the writer lock does the rest
        self._sweep_due = 0.0  # the first proposal sweeps

    @classmethod
    def open(cls, brain_path: Path, signer: Signer | None, lock_timeout: float | None = None) -> ProposalDesk:
        """A desk for the brain, refusing (before anything listens) a governed brain without a proposal key."""
        brain = Brain.open(brain_path)
        head = brain.snapshot()
        root = None if head is None else head.trust_root
        if head is None:
            raise RefusedError(f"the brain at {brain_path} is empty: proposals need evidence to cite",
                               hint="ingest sources first")
        if root is not None and signer is None:
            raise RefusedError("this brain is governed: proposals must be signed",
                               hint="pass --sign-with KEY, a key the trust root grants propose only")
        if signer is not None:
            _check_proposal_key(root, signer)
        return cls(brain_path, signer, lock_timeout)

    def warm(self) -> None:
        """Read what every agent's first proposal needs of the served head (its canonical members, the
        statements and Merkle trees of its semantic module) before the first one arrives."""
        brain = self._brain
        head = brain.snapshot()
        if head is None:
            return
        refs = {MemoryType(k): v for k, v in head.modules.items()}
        members = LazyMembers(brain, refs)
        members.get(MemoryType.CANONICAL)
        semantic = refs.get(MemoryType.SEMANTIC)
        self._statements.at(brain, semantic, members.get(MemoryType.SEMANTIC, frozenset()))
        for memory_type in (MemoryType.SEMANTIC, MemoryType.PROVENANCE):  # the modules a proposal rewrites
            if memory_type in refs:
                members.get(memory_type)

    # --- the adapters' entry points -----------------------------------------------------------------

    def propose(self, principal: Principal, body: Any) -> dict[str, Any]:
        """`POST /v1/proposals` with a parsed JSON body."""
        request: ProposalRequest = parse_request(ProposalRequest, body)
        return self.submit(principal.name, principal.actor, request.candidates, request.task_id).model_dump(
            mode="json")

    def record_episode(self, principal: Principal, body: Any) -> dict[str, Any]:
        """`POST /v1/episodes` with a parsed JSON body."""
        episode: EpisodeRequest = parse_request(EpisodeRequest, body)
        return self.submit(principal.name, principal.actor, [episode.candidate()]).model_dump(mode="json")

    # --- the use case -------------------------------------------------------------------------------

    def submit(
        self, agent: str, actor: str, candidates: Sequence[ProposedCandidate], task_id: str | None = None
    ) -> ProposalResult:
        """Judge `candidates` on the agent's branch and commit the validated ones there (one snapshot)."""
        if len(candidates) > MAX_CANDIDATES:
            raise InvalidInputError(f"{len(candidates)} candidates in one call: at most {MAX_CANDIDATES}",
                                    hint="split the proposal")
        branch = BRANCH_PREFIX + agent
        brain = self._brain
        # Backpressure: a proposal that cannot start within the wait is refused as busy (HTTP 429), not queued
        # without bound behind the writer lock.
        if not self._lock.acquire(timeout=BUSY_WAIT):
            raise ProposalsBusy("the brain is busy with other proposals", hint="retry in a few seconds")
        try:
            return self._submit(brain, branch, actor, candidates, task_id)
        finally:
            self._lock.release()

    def _submit(self, brain: ServingBrain, branch: str, actor: str, candidates: Sequence[ProposedCandidate],
                task_id: str | None) -> ProposalResult:
        try:
            wait = min(self.lock_timeout or BUSY_WAIT, BUSY_WAIT)
            # Temp files of dead writers are swept when the lock says one died, else once a minute: listing
            # a 100,000-blob directory would be a third of a proposal's time.
            sweep = time.monotonic() >= self._sweep_due
            with brain.writer(actor, lock_timeout=wait, branch=branch, sweep_blobs=sweep) as writer:
                if writer.swept_blobs:
                    self._sweep_due = time.monotonic() + SWEEP_EVERY
                return self._judge_and_commit(brain, writer, branch, actor, candidates, task_id)
        except LockTimeoutError as e:
            raise ProposalsBusy(f"the brain is busy: {e.message}", hint="retry in a few seconds") from None

    def _judge_and_commit(self, brain: ServingBrain, writer: Writer, branch: str, actor: str,
                          candidates: Sequence[ProposedCandidate], task_id: str | None) -> ProposalResult:
        base = None if writer.head is None else writer.head.snapshot
        judged = validate_candidates(list(candidates), _AgentTask(), self._context(brain, writer))
        validated = [j for j in judged if isinstance(j, ValidatedCandidate)]
        _stage(writer, validated, actor, task_id)
        snapshot = writer.commit() if validated else None
        signed = self._sign(brain, snapshot) if snapshot is not None else None
        return ProposalResult(
            branch=branch, actor=actor, snapshot=snapshot, base=base, committed=len(validated) if snapshot else 0,
            signed=signed, results=[_verdict(j, snapshot is not None) for j in judged],
        )

    def _context(self, brain: ServingBrain, writer: Writer) -> GateContext:
        """The gate's view of the branch head: members (a redacted source cannot be cited) and statements."""
        refs = writer.refs
        members = LazyMembers(brain, refs)
        semantic = refs.get(MemoryType.SEMANTIC)
        statements = self._statements.at(brain, semantic, members.get(MemoryType.SEMANTIC, frozenset()))
        return GateContext(members=members, statements=statements, blob_size=_blob_size(brain))

    def _sign(self, brain: Brain, digest: OciDigest) -> OciDigest | None:
        """Sign a proposal snapshot (governed brains), under the lock the commit still holds."""
        if self.signer is None:
            return None
        snapshot = brain.snapshot(digest)
        assert snapshot is not None
        record = make_record(self.signer, snapshot.to_bytes(), change_of(brain, snapshot).scopes)
        store_record(brain.path, brain.blobs, record)
        return record.digest


def _check_proposal_key(root: Any, signer: Signer) -> None:
    """The key must be listed with `propose` and without `ingest`/`commit` (else proposals would be heads)."""
    fingerprint = signer.public_key.fingerprint
    entry = None if root is None else entry_for(root, signer.public_key)
    if entry is None:
        raise RefusedError(f"--sign-with key {fingerprint} is not in the brain's trust root",
                           hint="add it with the propose scope only: `brain trust rotate`")
    scopes = set(entry.scopes)
    if scopes & {TrustScope.INGEST, TrustScope.COMMIT}:
        raise RefusedError(f"--sign-with key {fingerprint} holds ingest or commit: its proposals would "
                           "authenticate as authorized heads", hint="serve with a key that holds propose only")
    if TrustScope.PROPOSE not in scopes:
        raise RefusedError(f"--sign-with key {fingerprint} lacks the propose scope",
                           hint="grant it propose (only) with `brain trust rotate`")


def _stage(
    writer: Writer, validated: Sequence[ValidatedCandidate[ProposedCandidate]], actor_id: str, task: str | None
) -> None:
    """Each validated block with its derivation and validation records (§3.7), one `at` for the whole call."""
    actor = Actor(id=actor_id, kind=ActorKind.HUMAN if "@" in actor_id else ActorKind.AGENT)
    producer = Producer(kind=ProducerKind.ACTOR, id=actor_id)
    at = utc_timestamp()
    for item in validated:
        block = item.block
        writer.add(block)
        evidence = tuple(BlockId.parse(e) for e in dict.fromkeys(item.candidate.evidence))
        writer.add(ProvenanceBlock(record=DerivationRecord(
            actor=actor, at=at, block=block.block_id, derived_from=evidence, producer=producer, task=task,
            locator=item.candidate.locator,
        )))
        writer.add(ProvenanceBlock(record=ValidationRecord(
            actor=actor, at=at, block=block.block_id, verdict=Verdict.VALIDATED, checks=SPEC_CHECKS, task=task,
        )))


def _verdict(judged: ValidatedCandidate[ProposedCandidate] | RejectedCandidate[ProposedCandidate],
             committed: bool) -> CandidateVerdict:
    block: Block | None = judged.block
    if isinstance(judged, ValidatedCandidate):
        return CandidateVerdict(index=judged.index, verdict=Verdict.VALIDATED, codes=[], issues=[],
                                block_id=block.block_id if block else None, committed=committed)
    return CandidateVerdict(
        index=judged.index, verdict=judged.verdict, codes=list(judged.codes),
        issues=[{"code": i.code, "detail": i.detail[:500]} for i in judged.issues],
        block_id=None if block is None else block.block_id,
    )


def _blob_size(brain: Brain) -> Any:
    def size(digest: OciDigest) -> int | None:
        return brain.blobs.size(digest) if brain.blobs.has(digest) else None

    return size


def proposal_branches(names: Mapping[str, Any]) -> list[str]:
    """The branch names that hold proposals."""
    return sorted(name for name in names if name.startswith(BRANCH_PREFIX))
