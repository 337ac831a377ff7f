"""The ingest stages on their own, on real brains: `Stager`, `RunLineage`, `Registrar`, `Deriver` and the
answer sources (`ingest.answers`), each built the way `ingest.run` builds it, without running `ingest`."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from brain.blocks import MemoryType, SemanticBlock
from brain.blocks.canonical import CanonicalBlock
from brain.blocks.provenance import DerivationRecord, Producer, ProducerKind, ProvenanceBlock
from brain.brain import Brain
from brain.identity import BlockId, OciDigest
from brain.store.background import START_AFTER
from brain.writer import Writer
from ingest.answers import Answer, AnswerSource, CachedAnswers, InProcessAnswers, Job, PooledAnswers, answer_source
from ingest.cache import ProposalCache
from ingest.commit import DryRunSink, Members, Sink, Stager, acting_actor
from ingest.derive import DeriveOptions, Deriver, Questions
from ingest.fingerprints import FingerprintIndex
from ingest.lineage import LineageLog, read_lineage
from ingest.proposers import ProposalResult, Proposer, ProposerError, SourceText, Task
from ingest.proposers.heuristic import HeuristicProposer
from ingest.proposers.pool import HeuristicPool
from ingest.record import SourceRecord
from ingest.register import Registered, Registrar, RegisterOptions
from ingest.report import SourceOutcome
from ingest.replace import RunLineage
from ingest.sources import SourceFile

ACTOR = "curator@example.org"
NOTE = "# Caches\n\nA shard is a slice of the cache that one node owns.\n"
ALLOWED = (MemoryType.EPISODIC, MemoryType.PROCEDURAL, MemoryType.SEMANTIC)


@pytest.fixture(autouse=True)
def _pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")


@dataclass
class Parts:
    brain: Brain
    sink: Sink
    members: Members
    lineage: RunLineage
    stager: Stager
    registrar: Registrar
    index: FingerprintIndex


def _read(brain: Brain) -> Any:
    modules = brain.modules()

    def ids(memory_type: MemoryType) -> list[BlockId]:
        module = modules.get(memory_type)
        return [] if module is None else list(module.block_ids)

    return read_lineage(brain.path, ids(MemoryType.PROVENANCE), ids(MemoryType.SEMANTIC))


def _parts(brain: Brain, sink: Sink, *, persist: bool = True) -> Parts:
    members = Members(sink)
    start = brain.snapshot_digest() if brain.snapshot() is not None else None
    lineage = RunLineage(brain.path, start, lambda: _read(brain), members.has, persist=persist)
    blob_size = lambda d: brain.blobs.size(d) if brain.blobs.has(d) else None  # noqa: E731
    stager = Stager(sink, acting_actor(ACTOR), members, lineage, blob_size)
    index = FingerprintIndex.load(brain.path)
    registrar = Registrar(stager, index, RegisterOptions(), brain.blobs.path if persist else None, lineage)
    return Parts(brain, sink, members, lineage, stager, registrar, index)


@pytest.fixture
def brain(tmp_path: Path) -> Brain:
    return Brain.init(tmp_path / "brain")


@pytest.fixture
def writer(brain: Brain) -> Iterator[Writer]:
    with brain.writer(ACTOR) as opened:
        yield opened


def _source(root: Path, relpath: str, content: str | bytes) -> SourceFile:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    past = path.stat().st_mtime - 3600
    os.utime(path, (past, past))
    stat = path.stat()
    return SourceFile(path=path, relpath=relpath, size=stat.st_size, mtime_ns=stat.st_mtime_ns)


def _register(parts: Parts, source: SourceFile, origin: str | None = None) -> Registered:
    return parts.registrar.register(SourceRecord.discovered(source, origin or source.relpath))


def _fact(label: str, statement: str, evidence: BlockId) -> SemanticBlock:
    return SemanticBlock(kind="fact", label=label, statement=statement, subject="caches", evidence=(evidence,))


def _derivation(block: BlockId, source: BlockId, task: str | None = None) -> ProvenanceBlock:
    record = DerivationRecord(
        actor=acting_actor(ACTOR), at="2026-01-01T00:00:00Z", block=block, derived_from=(source,),
        producer=Producer(kind=ProducerKind.MODEL, id="acme/model"), task=task,
    )  # fmt: skip
    return ProvenanceBlock(record=record)


def _stage_derived(stager: Stager, fact: SemanticBlock, source: BlockId) -> None:
    assert stager.add(fact)
    assert stager.add(_derivation(fact.block_id, source))


# --- Stager ---------------------------------------------------------------------------------------------------


def test_stager_registers_a_source_with_its_records_once(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    blob = writer.put_blob(NOTE.encode())
    canonical = CanonicalBlock(blob=blob, media_type="text/markdown", size=len(NOTE))
    assert parts.stager.register(canonical, origin="notes/a.md", license="CC0-1.0", pipeline=("text-nfc", "1"))
    assert not parts.stager.register(canonical, origin="notes/a.md", license=None, pipeline=None)
    provenance = parts.stager.members(MemoryType.PROVENANCE)
    assert parts.stager.is_member(MemoryType.CANONICAL, canonical.block_id)
    assert len(provenance) == 2  # registration + normalization
    assert parts.stager.blocks_added == 3
    # The lineage heard of the registration as it was staged: the origin now names the block.
    assert parts.lineage.current("notes/a.md", BlockId("0" * 64)) == [canonical.block_id]
    snapshot = parts.stager.checkpoint()
    assert snapshot is not None and brain.snapshot_digest() == snapshot
    assert brain.module(MemoryType.PROVENANCE).members == frozenset(provenance)
    kinds = sorted(r.record_type for _, r in brain.ledger().records)
    assert kinds == ["normalization", "registration"]


def test_stager_supersedes_and_demotes(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    old = CanonicalBlock(blob=writer.put_blob(b"v1"), media_type="text/plain", size=2)
    new = CanonicalBlock(blob=writer.put_blob(b"v2"), media_type="text/plain", size=2)
    parts.stager.register(old, origin="a.txt", license=None, pipeline=None)
    fact = _fact("v", "v is one", old.block_id)
    _stage_derived(parts.stager, fact, old.block_id)
    parts.stager.register(new, origin="a.txt", license=None, pipeline=None, supersedes=[old.block_id])
    assert parts.lineage.superseded_by(old.block_id) == [new.block_id]
    assert parts.lineage.current("a.txt", BlockId("0" * 64)) == [new.block_id]
    assert parts.lineage.stale_dependents([old.block_id]) == [fact.block_id]
    assert parts.stager.demote([fact.block_id], "its evidence was replaced") == 1
    assert parts.lineage.stale_dependents([old.block_id]) == []  # demoted: no longer accessible


def test_stager_gate_context_follows_what_is_staged(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    evidence = BlockId.of(b"source")
    first = _fact("shard", "A shard is a slice.", evidence)
    parts.stager.add(first)
    context = parts.stager.gate_context()
    assert first.block_id in context.members[MemoryType.SEMANTIC]
    assert [b for _, b in context.statements[("shard", "caches", "fact")]] == [first.block_id]
    second = _fact("shard", "A shard is a piece.", evidence)
    parts.stager.add(second)  # after the context was built: kept current, not rebuilt
    statements = parts.stager.gate_context().statements[("shard", "caches", "fact")]
    assert [b for _, b in statements] == [first.block_id, second.block_id]


def test_stager_knows_the_size_of_blobs_put_later(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    digest = parts.stager.put_blob_later(b"later bytes")
    assert parts.stager.blob_size(digest) == len(b"later bytes")
    assert parts.stager.blob_size(OciDigest.of(b"never put")) is None
    writer.commit()  # the writer drains its background puts before it syncs
    assert brain.blobs.get(digest) == b"later bytes"


def test_members_share_the_writers_live_sets_and_a_dry_run_keeps_its_own(brain: Brain, writer: Writer) -> None:
    members = Members(writer)
    live = members.of(MemoryType.SEMANTIC)
    assert live is writer.live_members(MemoryType.SEMANTIC)  # one set of every member id, not two
    fact = _fact("shard", "A shard is a slice.", BlockId.of(b"source"))
    assert writer.add(fact)
    assert members.has(MemoryType.SEMANTIC, fact.block_id)  # what the writer staged, the stager sees
    dry = Members(DryRunSink(brain))
    assert dry.of(MemoryType.SEMANTIC) == set() and dry.of(MemoryType.SEMANTIC) is not live


def test_a_run_lets_go_of_what_discovery_found_as_it_goes() -> None:
    from ingest.run import _drained

    found: list[Any] = [("a", True), ("b", True), ("c", False)]
    seen = []
    for item in _drained(found):
        seen.append(item)
        assert len(found) == 3 - len(seen)  # handed out: no longer held by the list
    assert seen == [("a", True), ("b", True), ("c", False)] and found == []


def test_dry_run_sink_inherits_put_blob_later_and_stores_nothing(brain: Brain) -> None:
    sink = DryRunSink(brain)
    parts = _parts(brain, sink, persist=False)
    digest = parts.stager.put_blob_later(b"dry")
    assert digest == OciDigest.of(b"dry") and not brain.blobs.has(digest)
    assert parts.stager.checkpoint() is None


# --- RunLineage -----------------------------------------------------------------------------------------------


def _commit_two_versions(brain: Brain) -> tuple[CanonicalBlock, CanonicalBlock, SemanticBlock]:
    with brain.writer(ACTOR) as writer:
        parts = _parts(brain, writer)
        old = CanonicalBlock(blob=writer.put_blob(b"one"), media_type="text/plain", size=3)
        parts.stager.register(old, origin="doc.txt", license=None, pipeline=None)
        fact = _fact("one", "one is first", old.block_id)
        _stage_derived(parts.stager, fact, old.block_id)
        snapshot = parts.stager.checkpoint()
        assert snapshot is not None
        parts.lineage.save(snapshot)
        new = CanonicalBlock(blob=writer.put_blob(b"two"), media_type="text/plain", size=3)
        parts.stager.register(new, origin="doc.txt", license=None, pipeline=None, supersedes=[old.block_id])
        snapshot = parts.stager.checkpoint()
        assert snapshot is not None
        parts.lineage.save(snapshot)
    return old, new, fact


def test_run_lineage_reads_the_log_the_last_run_saved(brain: Brain) -> None:
    old, new, fact = _commit_two_versions(brain)
    log = LineageLog(brain.path)
    assert log.last_snapshot() == str(brain.snapshot_digest())

    def refuse() -> Any:
        raise AssertionError("the log describes the head: nothing is rebuilt")

    with brain.writer(ACTOR) as writer:
        members = Members(writer)
        lineage = RunLineage(brain.path, brain.snapshot_digest(), refuse, members.has)
        assert lineage.current("doc.txt", BlockId("0" * 64)) == [new.block_id]
        assert lineage.superseded_by(old.block_id) == [new.block_id]
        assert lineage.stale_dependents([old.block_id]) == [fact.block_id]
        assert list(lineage.statements()) == [("one", "caches", "fact")]


def test_run_lineage_rebuilds_a_stale_log_once_and_rewrites_it(brain: Brain) -> None:
    old, new, _ = _commit_two_versions(brain)
    (brain.path / "boltzmann" / "cache" / "lineage.log").write_text("damaged\n")
    rebuilt = []

    def rebuild() -> Any:
        rebuilt.append(1)
        return _read(brain)

    with brain.writer(ACTOR) as writer:
        members = Members(writer)
        lineage = RunLineage(brain.path, brain.snapshot_digest(), rebuild, members.has)
        assert lineage.superseded_by(old.block_id) == [new.block_id]
        assert lineage.current("doc.txt", BlockId("0" * 64)) == [new.block_id]
    assert rebuilt == [1]
    assert LineageLog(brain.path).load(brain.snapshot_digest()) is not None  # type: ignore[arg-type]


def test_run_lineage_of_a_dry_run_writes_no_log(brain: Brain) -> None:
    _commit_two_versions(brain)
    log = brain.path / "boltzmann" / "cache" / "lineage.log"
    log.unlink()
    lineage = RunLineage(brain.path, brain.snapshot_digest(), lambda: _read(brain), Members(DryRunSink(brain)).has,
                         persist=False)
    assert lineage.current("doc.txt", BlockId("0" * 64))
    assert not log.exists()


def test_run_lineage_answered_names_the_task_of_derivations(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    source = BlockId.of(b"the source")
    assert not parts.lineage.answered(source, "task-1")
    parts.stager.add(_derivation(BlockId.of(b"derived"), source, "task-1"))
    assert parts.lineage.answered(source, "task-1") and not parts.lineage.answered(source, "task-2")


# --- Registrar ------------------------------------------------------------------------------------------------


def test_registrar_registers_stores_and_normalizes_once(brain: Brain, writer: Writer, tmp_path: Path) -> None:
    parts = _parts(brain, writer)
    source = _source(tmp_path / "src", "notes/a.md", NOTE)
    reg, view = _register(parts, source, parts.registrar.origin_of(source, True))
    expected = ("registered", "notes/a.md", "text/markdown", len(NOTE))
    assert (reg.status, reg.origin, reg.media_type, reg.size) == expected
    assert reg.newly_added and view == NOTE.encode() and reg.block is not None and reg.stage == "register"
    again, _ = _register(parts, _source(tmp_path / "src", "notes/b.md", NOTE))
    assert (again.status, again.block, [p.code for p in again.problems]) == ("duplicate", reg.block, ["duplicate"])
    writer.commit()
    block = brain.resolve(reg.block)
    assert isinstance(block, CanonicalBlock) and brain.blobs.get(block.blob) == NOTE.encode()


def test_outcomes_equal_validated_ones(brain: Brain, writer: Writer, tmp_path: Path) -> None:
    """A record's outcome is constructed without validating it again: it equals the validated model of the same
    fields (and dumps the same), a registered source's and a duplicate's with its problems alike."""
    parts = _parts(brain, writer)
    first, _ = _register(parts, _source(tmp_path / "src", "notes/a.md", NOTE))
    again, _ = _register(parts, _source(tmp_path / "src", "notes/b.md", NOTE))
    for record in (first, again):
        outcome = record.advance("commit").outcome()
        validated = SourceOutcome.model_validate(outcome.model_dump())
        assert outcome == validated and outcome.model_dump_json() == validated.model_dump_json()
        assert outcome.model_fields_set == validated.model_fields_set == set(SourceOutcome.model_fields)
    assert again.advance("commit").outcome().problems[0].code == "duplicate"


def test_registrar_stores_the_blob_a_file_reading_pipeline_reads(brain: Brain, writer: Writer, tmp_path: Path) -> None:
    # html-text reads the stored blob from disk: the small source's background put must not be relied on.
    page = "<html><body><h1>Caches</h1><p>A shard is a slice.</p></body></html>"
    parts = _parts(brain, writer)
    for n in range(START_AFTER):  # past these, the writer's puts wait in a batch for its helper process
        writer.put_blob_later(f"filler {n}".encode())
    reg, view = _register(parts, _source(tmp_path / "src", "page.html", page))
    assert reg.status == "registered" and reg.problems == ()
    assert view is not None and b"A shard is a slice." in view


def test_registrar_reports_a_vanished_file(brain: Brain, writer: Writer, tmp_path: Path) -> None:
    parts = _parts(brain, writer)
    source = _source(tmp_path / "src", "gone.md", NOTE)
    source.path.unlink()
    reg, _ = _register(parts, source)
    assert reg.status == "failed" and [(p.stage, p.code) for p in reg.problems] == [("register", "vanished")]


def test_registrar_trusts_the_fingerprint_index_for_an_unchanged_file(brain: Brain, tmp_path: Path) -> None:
    source = _source(tmp_path / "src", "a.md", NOTE)
    with brain.writer(ACTOR) as writer:
        parts = _parts(brain, writer)
        reg, _ = _register(parts, source)
        assert reg.fingerprint is not None
        parts.index.remember(reg.fingerprint)
        writer.commit()
        parts.index.save()
    with brain.writer(ACTOR) as writer:
        parts = _parts(brain, writer)
        os.chmod(source.path, 0)  # not read at all: the index vouches for it
        try:
            again, view = _register(parts, source)
        finally:
            os.chmod(source.path, 0o644)
        assert (again.status, again.block, view) == ("unchanged", reg.block, None)


# --- Deriver and the answer sources ---------------------------------------------------------------------------


class _Scripted(Proposer):
    """A proposer whose answers are fixed per source text; it fails for text containing `fail`."""

    id = "test/scripted"
    version = "1"
    model = None

    def __init__(self) -> None:
        self.parameters: dict[str, Any] = {}
        self.asked: list[str] = []

    def propose(self, task: Task, source: SourceText) -> ProposalResult:
        self.asked.append(source.text)
        if "fail" in source.text:
            raise ProposerError("proposer-failed", "asked to fail")
        return HeuristicProposer().propose(task, source)


def _jobs(parts: Parts, proposer: Proposer, texts: Sequence[str], cache: ProposalCache) -> list[Job]:
    questions = Questions(proposer, cache, DeriveOptions(allowed=ALLOWED), lambda b, t: False, lambda b: None)
    jobs = []
    for number, text in enumerate(texts):
        source = _source(parts.brain.path.parent / "src", f"n{number}.md", text)
        job = questions.job_for(*_register(parts, source))
        assert job is not None
        jobs.append(job)
    return jobs


TEXTS = [f"# Topic {n}\n\nA shard{n} is a slice of the cache that node {n} owns.\n" for n in range(5)]


def test_deriver_judges_and_stages_validated_answers_with_their_records(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    cache = ProposalCache(brain.path)
    jobs = _jobs(parts, HeuristicProposer(), TEXTS, cache)
    deriver = Deriver(parts.stager, answer_source(HeuristicProposer(), cache, len(jobs)))
    judged = deriver.run(jobs)
    assert [r.relpath for r in judged] == [job.record.relpath for job in jobs]
    assert all(r.stage == "stage" and r.validated >= 1 and r.rejected == 0 for r in judged)
    semantic = parts.stager.members(MemoryType.SEMANTIC)
    assert len(semantic) == sum(r.validated for r in judged)
    # each validated block has its derivation and validation records
    assert len(parts.stager.members(MemoryType.PROVENANCE)) == 2 * len(jobs) + 2 * len(semantic)
    assert all(parts.lineage.answered(job.task.source, job.task.task_id or "") for job in jobs)


def test_deriver_reports_a_failed_answer_and_keeps_the_source_unfinished(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    proposer = _Scripted()
    jobs = _jobs(parts, proposer, [TEXTS[0], "# Broken\n\nplease fail here\n"], ProposalCache(brain.path))
    good, failed = Deriver(parts.stager, InProcessAnswers(proposer)).run(jobs)
    assert [(p.stage, p.code, p.kind) for p in failed.problems] == [("propose", "proposer-failed", "failure")]
    assert failed.fingerprint is None and failed.stage == "judge"  # the next run proposes again; nothing staged
    assert jobs[1].record.fingerprint is not None  # the job's record is as the ask stage left it
    assert good.validated >= 1 and good.fingerprint is not None


def test_cached_answers_never_ask_for_what_the_cache_holds(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    cache = ProposalCache(brain.path)
    proposer = _Scripted()
    jobs = _jobs(parts, proposer, TEXTS, cache)
    first = CachedAnswers(cache, InProcessAnswers(proposer)).answer(jobs)
    assert len(proposer.asked) == len(TEXTS) and not any(answer.cached for answer in first)
    again = CachedAnswers(cache, InProcessAnswers(proposer)).answer(jobs)
    assert len(proposer.asked) == len(TEXTS)  # nothing new was asked
    assert all(answer.cached for answer in again) and [a.result for a in again] == [a.result for a in first]
    CachedAnswers(cache, InProcessAnswers(proposer), read=False, write=False).answer(jobs)
    assert len(proposer.asked) == 2 * len(TEXTS)


def test_failures_are_never_cached(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    cache = ProposalCache(brain.path)
    jobs = _jobs(parts, _Scripted(), ["# F\n\nfail\n"], cache)
    (answer,) = CachedAnswers(cache, InProcessAnswers(_Scripted())).answer(jobs)
    assert answer.error is not None and not cache.has(jobs[0].key)


def _alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other tests of the session may leave idle threads behind; the thread guard is tested on its own."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)


def _answered(source: AnswerSource, jobs: Sequence[Job]) -> list[Answer]:
    for job in jobs:
        source.offer(job)
    try:
        return source.answer(jobs)
    finally:
        source.close()


def test_pooled_answers_equal_in_process_ones(brain: Brain, writer: Writer, monkeypatch: pytest.MonkeyPatch) -> None:
    _alone(monkeypatch)
    parts = _parts(brain, writer)
    texts = [f"# T{n}\n\nA node{n} is a server that keeps data close.\n" for n in range(70)]  # 2 chunks + a rest
    cache = ProposalCache(brain.path)
    jobs = _jobs(parts, HeuristicProposer(), texts, cache)
    expected = [HeuristicProposer().propose(job.task, job.source) for job in jobs]
    pool = HeuristicPool(workers=2)
    pooled = PooledAnswers(pool, InProcessAnswers(HeuristicProposer()))
    answers = _answered(pooled, jobs)
    assert [a.result for a in answers] == expected
    # Full chunks went to workers (which built each cache entry), the rest was answered in-process.
    assert [a.entry is not None for a in answers] == [True] * 64 + [False] * 6


def test_pooled_answers_fall_back_in_process_when_no_worker_can_start(brain: Brain, writer: Writer) -> None:
    parts = _parts(brain, writer)
    texts = [f"# T{n}\n\nA node{n} is a server that keeps data close.\n" for n in range(40)]
    jobs = _jobs(parts, HeuristicProposer(), texts, ProposalCache(brain.path))
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        pooled = PooledAnswers(HeuristicPool(workers=2), InProcessAnswers(HeuristicProposer()))
        answers = _answered(pooled, jobs)
    finally:
        release.set()
        thread.join()
    assert all(a.entry is None for a in answers)  # no worker answered
    assert [a.result for a in answers] == [HeuristicProposer().propose(job.task, job.source) for job in jobs]


def test_the_pool_is_used_only_for_many_sources_with_the_heuristic(brain: Brain) -> None:
    cache = ProposalCache(brain.path)

    def inner(source: AnswerSource) -> AnswerSource:
        assert isinstance(source, CachedAnswers)
        return source.inner

    assert isinstance(inner(answer_source(HeuristicProposer(), cache, 256)), PooledAnswers)
    assert isinstance(inner(answer_source(HeuristicProposer(), cache, 255)), InProcessAnswers)
    assert isinstance(inner(answer_source(_Scripted(), cache, 10_000)), InProcessAnswers)
    assert answer_source(HeuristicProposer(), cache, 10_000).batch == 128
    assert answer_source(_Scripted(), cache, 10, concurrency=4).batch == 16
