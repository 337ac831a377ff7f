"""`ingest.run.ingest` on real brains: bytes, views, records, dedup, fingerprints, cache, dry run, determinism."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.blocks.canonical import CanonicalBlock
from brain.blocks.provenance import DemotionRecord, ProvenanceBlock
from brain.brain import Brain
from brain.errors import IntegrityError, UsageError
from brain.identity import BlockId, OciDigest
from brain.module import Module
from ingest import PROPOSABLE_MEMORY_TYPES
from ingest.cache import task_id_for
from ingest.commit import acting_actor
from ingest.fingerprints import FingerprintIndex
from ingest.lineage import Lineage, LineageLog, read_lineage
from tests.ingest.lineage_oracle import lineage_of_ledger
from ingest.normalize import TextNfc
from ingest.proposers import Task
from ingest.proposers.emit import MAX_CANDIDATES_PER_SOURCE
from ingest.proposers.heuristic import HeuristicProposer
from ingest.run import IngestOptions, ingest, parse_allowed
from ingest.sync import sync_after
from ingest.validate import CHECKS_RUN

ACTOR = "curator@example.org"
NOTE = "# Caches\r\n\r\nA shard is a slice of the cache that one node owns.\r\nCafe\u0301 notes.\r\n"
PLAIN = "# Steps\n\n## How to deploy\n\n1. build the image\n2. push the image\n"


@pytest.fixture(autouse=True)
def _pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")


def _corpus(root: Path, files: dict[str, str | bytes], age: float = 3600) -> Path:
    """Write `files` under `root`, with mtimes in the past (a fresh mtime makes fingerprints racy)."""
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        past = path.stat().st_mtime - age
        os.utime(path, (past, past))
    return root


def _refusing(what: str):  # type: ignore[no-untyped-def]
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(what)

    return refuse


def _run(brain: Brain, root: Path, **options: object):  # type: ignore[no-untyped-def]
    return ingest(brain, [root], IngestOptions(**options), actor=ACTOR)  # type: ignore[arg-type]


def _members(brain: Brain) -> dict[MemoryType, frozenset[BlockId]]:
    return {t: m.members for t, m in brain.modules().items()}


def _records(brain: Brain, record_type: str) -> list:  # type: ignore[type-arg]
    return [r for _, r in brain.ledger().records if r.record_type == record_type]


def test_registers_verbatim_bytes_a_normalized_view_and_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path / "src", {"notes/a.md": NOTE})
    monkeypatch.chdir(root)  # the default origin is relative to the current directory outside a repository
    brain = Brain.init(tmp_path / "brain")
    result = _run(brain, root, license="CC-BY-4.0")
    assert (result.registered, result.failed, result.checkpoints) == (1, 0, 1)
    outcome = result.outcomes[0]
    block = brain.resolve(BlockId.parse(outcome.block))
    assert isinstance(block, CanonicalBlock) and block.media_type == "text/markdown"
    assert brain.blobs.get(block.blob) == NOTE.encode()
    assert block.normalized_view is not None
    view = brain.blobs.get(block.normalized_view.blob).decode()
    assert "\r" not in view and "Caf\u00e9" in view
    (registration,) = _records(brain, "registration")
    assert (registration.block, registration.origin) == (block.block_id, "notes/a.md")
    assert registration.license == "CC-BY-4.0"
    assert registration.actor.id == ACTOR and registration.at == "2026-01-01T00:00:00Z"
    (normalization,) = _records(brain, "normalization")
    assert (normalization.pipeline, normalization.pipeline_version) == ("text-nfc", TextNfc.version)
    derivations, validations = _records(brain, "derivation"), _records(brain, "validation")
    assert result.validated == len(derivations) == len(validations) >= 1
    for record in derivations:
        assert record.derived_from == (block.block_id,) and record.producer.id == "brain/heuristic"
        assert record.locator and record.task == _task_id(block.block_id)  # the question, by SHA-256
    assert {v.checks for v in validations} == {CHECKS_RUN} and {v.task for v in validations} == {record.task}
    assert {d.block for d in derivations} == {v.block for v in validations}


def _task_id(source: BlockId, allowed: tuple[MemoryType, ...] = PROPOSABLE_MEMORY_TYPES) -> str:
    return task_id_for(HeuristicProposer(), Task(source=source, allowed_memory_types=allowed, requirements=()))


def test_same_bytes_again_is_unchanged_and_writes_no_snapshot(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE, "b.md": PLAIN})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)
    head = brain.snapshot_digest()
    again = _run(brain, root)
    assert (again.registered, again.unchanged, again.blocks_added, again.checkpoints) == (0, 2, 0, 0)
    assert brain.snapshot_digest() == head and again.snapshot == str(head)


def test_same_bytes_at_two_paths_are_one_block_and_a_duplicate(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE, "copy/a.md": NOTE})
    brain = Brain.init(tmp_path / "brain")
    result = _run(brain, root)
    assert [o.status for o in result.outcomes] == ["registered", "duplicate"]
    assert result.outcomes[0].block == result.outcomes[1].block
    assert result.outcomes[1].problems[0].detail == "same bytes as a.md"
    assert len(brain.module(MemoryType.CANONICAL)) == 1 and len(_records(brain, "registration")) == 1


def test_fingerprint_hit_reads_nothing_but_still_needs_membership(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)

    refuse = _refusing("an unchanged file was read")
    monkeypatch.setattr("ingest.register.iter_file_chunks", refuse)
    monkeypatch.setattr("ingest.register._read_small", refuse)
    assert _run(brain, root).unchanged == 1
    # A fresh brain with the same index: the entry's block is not a member, so the file is registered.
    other = Brain.init(tmp_path / "other")
    shutil.copy(brain.path / "boltzmann" / "fingerprints.json", other.path / "boltzmann" / "fingerprints.json")
    monkeypatch.undo()
    assert _run(other, root).registered == 1


def test_no_cache_rehashes_and_reproposes_nothing_for_members(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)
    reads: list[object] = []
    module = __import__("ingest.register", fromlist=["iter_file_chunks"])
    for name in ("iter_file_chunks", "_read_small"):  # a large source is streamed, a small one read at once
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda path, real=real: reads.append(path) or real(path))
    result = _run(brain, root, use_cache=False)
    assert reads and (result.unchanged, result.proposed, result.blocks_added) == (1, 0, 0)


def test_touched_file_is_unchanged_and_its_fingerprint_refreshed(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)
    os.utime(root / "a.md", (1_700_000_000, 1_700_000_000))
    assert _run(brain, root).unchanged == 1
    entry = FingerprintIndex.load(brain.path).get(root / "a.md")
    assert entry is not None and entry.mtime_ns == 1_700_000_000 * 10**9


def test_a_cache_hit_writes_the_same_provenance_without_asking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE, "b.md": PLAIN})
    first = Brain.init(tmp_path / "first")
    _run(first, root)
    second = Brain.init(tmp_path / "second")
    shutil.copytree(first.path / "boltzmann" / "cache", second.path / "boltzmann" / "cache")

    def refuse(self: object, task: object, source: object) -> None:
        raise AssertionError("the proposer was asked despite a cached answer")

    monkeypatch.setattr(HeuristicProposer, "propose", refuse)
    result = _run(second, root)
    assert result.cache_hits == 2 and result.validated > 0
    assert _members(second) == _members(first)


def test_dry_run_changes_no_byte_and_reports_the_real_run(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE, "b.md": PLAIN, "c/d.md": NOTE + "more\n"})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, _corpus(tmp_path / "seed", {"s.md": PLAIN + "extra\n"}))
    LineageLog(brain.path).path.unlink()  # the dry run must rebuild the lineage in memory, and not write it

    def tree() -> dict[str, bytes]:
        return {str(p.relative_to(brain.path)): p.read_bytes() for p in sorted(brain.path.rglob("*")) if p.is_file()}

    before = tree()
    dry = _run(brain, root, dry_run=True)
    assert tree() == before
    real = _run(brain, root)
    assert dry.dry_run and (dry.registered, dry.proposed, dry.validated, dry.blocks_added) == (
        real.registered, real.proposed, real.validated, real.blocks_added,
    )  # fmt: skip
    assert [o.block for o in dry.outcomes] == [o.block for o in real.outcomes]


def test_two_fresh_brains_get_byte_identical_snapshots(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {f"n{i:02d}.md": f"# T{i}\n\nA term{i} is a thing.\n" for i in range(12)})
    heads = []
    for name in ("one", "two"):
        brain = Brain.init(tmp_path / name)
        _run(brain, root, checkpoint=5)
        heads.append(brain.snapshot_digest())
        assert len(brain.history()) == 3
    assert heads[0] == heads[1]
    blobs = [sorted(p.name for p in (tmp_path / n / "blobs" / "sha256").iterdir()) for n in ("one", "two")]
    assert blobs[0] == blobs[1]


def test_a_source_that_fails_to_normalize_is_registered_without_a_view(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"bad.txt": b"\x81\x8d\x8f\x90\x9d\x01\x02" * 10, "ok.md": PLAIN})
    brain = Brain.init(tmp_path / "brain")
    result = _run(brain, root, media_type="text/plain")
    bad, ok = result.outcomes
    assert bad.status == "registered" and [(p.stage, p.code, p.kind) for p in bad.problems] == [
        ("normalize", "decode-error", "failure")
    ]
    block = brain.resolve(BlockId.parse(bad.block))
    assert isinstance(block, CanonicalBlock) and block.normalized_view is None
    assert ok.status == "registered" and ok.validated > 0
    assert len(_records(brain, "normalization")) == 1


def test_binary_content_behind_a_text_name_is_registered_as_bytes(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"junk.txt": b"\x00\x01binary\x00" * 50})
    result = _run(Brain.init(tmp_path / "brain"), root)
    (outcome,) = result.outcomes
    assert (outcome.status, outcome.media_type, outcome.proposed) == ("registered", "application/octet-stream", 0)
    assert [(p.code, p.kind) for p in outcome.problems] == [("binary-content", "note"), ("no-candidates", "note")]
    assert result.strict_problems == 0


def test_origin_url_and_single_file_roots(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"dir/a.md": NOTE, "b.md": PLAIN})
    brain = Brain.init(tmp_path / "brain")
    ingest(brain, [root / "dir", root / "b.md"], IngestOptions(origin="https://example.org/x/"), actor=ACTOR)
    origins = sorted(r.origin for r in _records(brain, "registration"))
    assert origins == ["https://example.org/x/", "https://example.org/x/a.md"]


def test_allow_refuses_types_that_are_never_proposed() -> None:
    assert [t.value for t in parse_allowed("semantic, procedural")] == ["procedural", "semantic"]
    for bad in ("canonical", "semantic,provenance", "", "nonsense"):
        with pytest.raises(UsageError):
            parse_allowed(bad)


def test_allowed_types_limit_what_is_proposed(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE + "\n" + PLAIN + "\n2026-03-01 10:00 deployed\n"})
    brain = Brain.init(tmp_path / "brain")
    result = _run(brain, root, allow=parse_allowed("procedural"))
    assert result.validated >= 1 and result.rejected == 0
    assert set(brain.modules()) == {MemoryType.CANONICAL, MemoryType.PROCEDURAL, MemoryType.PROVENANCE}


def test_concurrent_proposals_commit_the_same_blocks_in_source_order(tmp_path: Path) -> None:
    from ingest.proposers.loader import ProposerOptions

    files = {f"n{i:02d}.md": f"# T\n\nA shard is a piece number {i % 3}.\n" for i in range(20)}
    root = _corpus(tmp_path / "src", files)
    results = []
    for name, concurrency in (("serial", 1), ("parallel", 4)):
        brain = Brain.init(tmp_path / name)
        options = ProposerOptions(concurrency=concurrency)
        results.append((_run(brain, root, proposer_options=options), _members(brain)))
    (serial, serial_members), (parallel, parallel_members) = results
    assert serial_members == parallel_members
    # The same label, subject and kind with another statement: later sources are contradicted, in order.
    assert [o.rejected for o in serial.outcomes] == [o.rejected for o in parallel.outcomes]
    assert serial.rejected_by_code.get("contradiction", 0) > 0


def test_a_candidate_set_without_producer_names_the_actor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ingest.proposers.base import ProposalResult
    from ingest.proposers.candidates import Candidate, CandidateSet

    def propose(self: object, task, source):  # type: ignore[no-untyped-def]
        payload = {"summary": "restarted", "occurred_at": "2026-03-01T10:00:00Z"}
        candidate = Candidate(memory_type="episodic", payload=payload, evidence=(str(task.source),))
        return ProposalResult(CandidateSet(candidates=(candidate,)))

    monkeypatch.setattr(HeuristicProposer, "propose", propose)
    brain = Brain.init(tmp_path / "brain")
    _run(brain, _corpus(tmp_path / "src", {"a.md": NOTE}))
    (derivation,) = _records(brain, "derivation")
    assert (derivation.producer.kind, derivation.producer.id, derivation.locator) == ("actor", ACTOR, None)


def test_a_large_source_is_streamed_in_constant_memory(tmp_path: Path) -> None:
    import tracemalloc

    big = tmp_path / "src" / "big.bin"
    big.parent.mkdir()
    with open(big, "wb") as handle:
        for i in range(24):
            handle.write(bytes([i]) * (1 << 20))
    brain = Brain.init(tmp_path / "brain")
    tracemalloc.start()
    try:
        result = _run(brain, big.parent, media_type="application/octet-stream")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.registered == 1 and result.outcomes[0].size == 24 << 20
    assert peak < 8 << 20, f"peak {peak / 2**20:.1f} MiB while registering a 24 MiB file"
    block = brain.resolve(BlockId.parse(result.outcomes[0].block))
    assert isinstance(block, CanonicalBlock) and brain.blobs.verify_file(block.blob)


def test_the_default_checkpoint_interval_grows_with_the_run_and_is_capped() -> None:
    from ingest.run import default_checkpoint_interval

    assert [default_checkpoint_interval(n) for n in (0, 500, 1000, 1500, 3000, 5062, 10**6)] == [
        500, 500, 500, 750, 1500, 2500, 2500,
    ]  # fmt: skip


def _refuse_reading_the_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Brain, "ledger", _refusing("the brain's blocks were read"))
    monkeypatch.setattr("ingest.run.read_lineage", _refusing("the brain's blocks were read"))


def test_new_and_replaced_sources_in_a_known_brain_read_the_lineage_log_not_the_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE})
    brain = Brain.init(tmp_path / "brain")
    first = _run(brain, root)
    _corpus(root, {"b.md": NOTE.replace("shard", "replica")})

    _refuse_reading_the_blocks(monkeypatch)
    assert _run(brain, root).registered == 1  # the log named the head: no block read
    monkeypatch.undo()
    demoted_before = set(brain.ledger().demoted)
    _refuse_reading_the_blocks(monkeypatch)
    _corpus(root, {"a.md": NOTE + "\nA quorum is a majority.\n"}, age=1800)
    replaced = _run(brain, root)
    assert replaced.replaced == 1 and replaced.outcomes[0].replaces == (first.outcomes[0].block,)
    monkeypatch.undo()
    demoted = set(brain.ledger().demoted) - demoted_before
    _refuse_reading_the_blocks(monkeypatch)
    derived = (MemoryType.SEMANTIC, MemoryType.PROCEDURAL, MemoryType.EPISODIC)
    assert demoted and demoted <= set().union(*(m for t, m in _members(brain).items() if t in derived))

    log = LineageLog(brain.path)
    log.path.write_text(log.path.read_text()[:-5])  # a damaged log: rebuilt from the ledger
    _corpus(root, {"c.md": NOTE.replace("shard", "node")})
    with pytest.raises(AssertionError, match="blocks were read"):
        _run(brain, root)
    monkeypatch.undo()
    assert _run(brain, root).registered == 1
    _corpus(root, {"b.md": NOTE.replace("shard", "quorum")}, age=1700)
    _refuse_reading_the_blocks(monkeypatch)
    assert _run(brain, root).replaced == 1  # the rebuilt log is current again


def _lineage_of_brain(brain: Brain) -> Lineage:
    snapshot = brain.snapshot()
    assert snapshot is not None
    return lineage_of_ledger(brain.ledger(snapshot), brain.modules(snapshot)[MemoryType.SEMANTIC].blocks())[0]


def test_the_lineage_log_says_what_the_ledger_and_semantic_module_say_after_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE, "b.md": PLAIN, "c/d.md": NOTE.replace("shard", "node")})
    monkeypatch.chdir(root)
    brain = Brain.init(tmp_path / "brain")
    versions = [NOTE + f"\nA quorum{i} is a majority of {i} nodes.\n" for i in range(3)]
    for step, text in enumerate(versions):
        _run(brain, root, checkpoint=1)  # several commits per run: one append each
        assert LineageLog(brain.path).load(brain.snapshot_digest()) == _lineage_of_brain(brain), step
        _corpus(root, {"a.md": text, f"new{step}.md": NOTE.replace("shard", f"cache{step}")}, age=1800 - step)
    _run(brain, root)
    assert LineageLog(brain.path).load(brain.snapshot_digest()) == _lineage_of_brain(brain)
    assert len(_lineage_of_brain(brain).origins["a.md"]) == 4


def test_a_fact_contradicting_an_earlier_run_is_found_through_the_log_without_reading_the_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path / "src", {"a.md": "# Lumen\n\nA shard is a slice of the keyspace.\n"})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)
    _corpus(root, {"b.md": "# Lumen\n\nA shard is a copy of the data.\n"})
    _refuse_reading_the_blocks(monkeypatch)
    monkeypatch.setattr(Module, "blocks", _refusing("a module was read block by block"))
    result = _run(brain, root)
    assert result.rejected_by_code == {"contradiction": 1}
    assert result.outcomes[1].problems[0].code == "contradiction" and "shard" in result.outcomes[1].problems[0].detail


def test_a_commit_by_another_writer_makes_the_log_stale_and_the_next_replace_rebuilds_it(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)
    semantic = sorted(_members(brain)[MemoryType.SEMANTIC], key=lambda b: b.hex)
    with brain.writer(ACTOR) as writer:  # e.g. a curator demoting a fact by hand
        record = DemotionRecord(actor=acting_actor(ACTOR), at="2026-02-01T00:00:00Z", block=semantic[0], reason="x")
        writer.add(ProvenanceBlock(record=record))
        writer.commit()
    assert LineageLog(brain.path).load(brain.snapshot_digest()) is None  # it describes the previous snapshot
    _corpus(root, {"a.md": NOTE + "\nA quorum is a majority.\n"}, age=1800)
    assert _run(brain, root).replaced == 1
    lineage = LineageLog(brain.path).load(brain.snapshot_digest())
    assert lineage == _lineage_of_brain(brain) and semantic[0].hex in lineage.demoted


def test_a_source_cut_at_the_candidate_cap_reports_a_note_not_a_failure(tmp_path: Path) -> None:
    events = "\n".join(f"2026-01-01 event {i}" for i in range(MAX_CANDIDATES_PER_SOURCE + 5))
    root = _corpus(tmp_path / "src", {"log.txt": events, "small.md": PLAIN})
    result = _run(Brain.init(tmp_path / "brain"), root)
    capped = next(o for o in result.outcomes if o.relpath == "log.txt")
    assert capped.status == "registered" and capped.proposed == MAX_CANDIDATES_PER_SOURCE
    assert [(p.stage, p.code, p.kind) for p in capped.problems] == [("propose", "proposals-capped", "note")]
    assert f"of {MAX_CANDIDATES_PER_SOURCE + 5} candidates" in capped.problems[0].detail
    assert result.problems_by_code == {"proposals-capped": 1} and result.strict_problems == 0 and result.failed == 0
    assert all(not o.problems for o in result.outcomes if o.relpath == "small.md")


def test_a_lineage_log_of_another_format_is_stale(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)
    log = LineageLog(brain.path)
    assert log.load(brain.snapshot_digest()) is not None
    lines = log.path.read_text().splitlines(keepends=True)
    log.path.write_text("".join(lines[1:]))  # e.g. written before the format line existed
    assert log.load(brain.snapshot_digest()) is None


def test_a_brain_without_its_local_caches_asks_no_question_its_records_answered(tmp_path: Path) -> None:
    # CI: `brain pull` brings the brain but not `boltzmann/` (fingerprints, proposal cache, lineage log).
    root = _corpus(tmp_path / "src", {"a.md": NOTE, "b.md": PLAIN, "c.md": NOTE.replace("shard", "node")})
    brain = Brain.init(tmp_path / "brain")
    first = _run(brain, root)
    assert first.validated > 0
    for local in ("cache", "fingerprints.json"):
        path = brain.path / "boltzmann" / local
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    again = _run(brain, root)
    assert (again.unchanged, again.proposed, again.rejected, again.blocks_added) == (3, 0, 0, 0)
    assert again.strict_problems == 0
    asked = _run(brain, root, instructions="only definitions")  # another question: asked again
    assert asked.proposed > 0 and asked.rejected_by_code == {"duplicate": asked.rejected}
    assert _run(brain, root, instructions="only definitions").proposed == 0  # the cache knows it now


@pytest.mark.parametrize("threshold", [1, 10**9])  # forked workers, and in-process
def test_the_lineage_read_from_the_blocks_is_the_ledgers(tmp_path: Path, threshold: int) -> None:
    root = _corpus(tmp_path / "src", {f"n{i}.md": NOTE.replace("shard", f"shard{i}") for i in range(6)})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)
    _corpus(root, {"n1.md": NOTE.replace("shard", "shard1") + "\n1. drain it\n2. restart it\n"}, age=1800)
    assert _run(brain, root).replaced == 1
    modules = brain.modules()
    provenance, semantic = modules[MemoryType.PROVENANCE].block_ids, modules[MemoryType.SEMANTIC].block_ids
    lineage, facts = read_lineage(brain.path, provenance, semantic, threshold=threshold)
    assert lineage == _lineage_of_brain(brain) and lineage.demoted and lineage.answered
    assert facts == lineage_of_ledger(brain.ledger(), modules[MemoryType.SEMANTIC].blocks())[1]


def test_a_damaged_record_stops_the_lineage_rebuild_naming_it(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE})
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)
    victim = sorted(brain.modules()[MemoryType.PROVENANCE].block_ids, key=lambda b: b.hex)[0]
    brain.blobs.path(victim).write_bytes(b"{}")
    LineageLog(brain.path).path.unlink()
    _corpus(root, {"b.md": NOTE.replace("shard", "node")})
    with pytest.raises(IntegrityError, match=victim.hex):
        _run(brain, root)


def test_the_logs_origins_are_its_registered_facts_and_refused_whenever_the_log_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE, "b \u00e9\"q.md": PLAIN})  # JSON escapes, non-ASCII
    monkeypatch.chdir(root)
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root, checkpoint=1)  # several markers
    _corpus(root, {"a.md": NOTE + "\nA quorum is a majority.\n"}, age=1800)
    assert _run(brain, root).replaced == 1  # a second version under a.md
    log, head = LineageLog(brain.path), brain.snapshot_digest()
    assert head is not None
    lineage = log.load(head)
    assert lineage is not None and len(lineage.origins["a.md"]) == 2
    assert sorted(log.origins(head) or []) == sorted(o for o, blocks in lineage.origins.items() for _ in blocks)
    assert log.origins(OciDigest.of(b"another snapshot")) is None
    text = log.path.read_bytes()
    lines = text.splitlines(keepends=True)
    damaged = {
        "torn": text[:-5],
        "a fact lost": b"".join(lines[:1] + lines[2:]),
        "a fact after the last marker": text + lines[1],
        "no format line": b"".join(lines[1:]),
    }
    for what, data in damaged.items():
        log.path.write_bytes(data)
        assert log.load(head) is None and log.origins(head) is None, what


def test_an_unchanged_reingest_finds_nothing_missing_without_decoding_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path / "src", {"a.md": NOTE, "b.md": PLAIN})
    monkeypatch.chdir(root)
    brain = Brain.init(tmp_path / "brain")
    _run(brain, root)
    again = _run(brain, root)
    monkeypatch.setattr(LineageLog, "load", _refusing("the whole log was decoded"))
    monkeypatch.setattr(Module, "blocks", _refusing("a module was read block by block"))
    assert sync_after(brain, [root], None, again, apply=False, dry_run=False, actor=ACTOR).missing == ()
    assert sync_after(brain, [root], None, again, apply=True, dry_run=False, actor=ACTOR) == again
    monkeypatch.undo()
    monkeypatch.chdir(root)
    (root / "b.md").unlink()
    gone = sync_after(brain, [root], None, _run(brain, root), apply=False, dry_run=False, actor=ACTOR)
    assert [(m.origin, m.action) for m in gone.missing] == [("b.md", "missing")]
