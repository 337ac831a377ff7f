"""The search index on real brains: incremental updates equal a rebuild, damage is detected and rebuilt,
accessibility follows the ledger, and every match is verified by this process (or says it is not)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.identity import BlockId, MerkleRoot, OciDigest
from brain.merkle import InclusionProof
from brain.store.head import Origin, write_head
from brain.blocks import CanonicalBlock
from retrieval.index import SearchIndex
from retrieval.paths import index_path, search_dir
from retrieval.query import Searcher, SearchRequest
from tests.retrieval.conftest import ACTOR, ingest

QUERIES = ["consistent hashing", "deploy release", "warmer object store", "hit ratio", "shard", "eviction LRU",
           "latency alert", "onboarding", "checklist"]


def _search(brain_dir: Path, query: str, **options: Any) -> dict[str, Any]:
    searcher = Searcher(Brain.open(brain_dir))
    try:
        return searcher.search(SearchRequest(query, **options)).model_dump(mode="json")
    finally:
        searcher.close()


def _dump(brain_dir: Path) -> dict[str, Any]:
    """Everything the index holds, independent of keys and row ids (the text table is checked by queries)."""
    db = sqlite3.connect(index_path(brain_dir))
    blocks = db.execute(
        "SELECT hex(k.digest), b.memory_type, b.subject, b.at, b.accessible, hex(s.digest), b.origin, b.media_type, "
        "hex(b.view), b.locator FROM blocks b JOIN keys k ON k.id = b.id LEFT JOIN keys s ON s.id = b.source "
        "ORDER BY 1").fetchall()
    docs = db.execute("SELECT hex(k.digest), d.locator FROM docs d JOIN keys k ON k.id = d.block "
                      "ORDER BY 1, 2").fetchall()
    edges = db.execute("SELECT hex(s.digest), n.name, hex(t.digest) FROM edges e JOIN keys s ON s.id = e.src "
                       "JOIN keys t ON t.id = e.dst JOIN kinds n ON n.id = e.kind ORDER BY 1, 2, 3").fetchall()
    records = db.execute("SELECT hex(r.record), r.type, hex(b.digest), hex(o.digest), r.origin, r.locator, r.at, "
                         "hex(r.evidence) FROM records r JOIN keys b ON b.id = r.block "
                         "LEFT JOIN keys o ON o.id = r.other "
                         "ORDER BY 1").fetchall()
    db.close()
    return {"blocks": blocks, "docs": docs, "edges": edges, "records": records}


def test_every_match_carries_the_documented_shape_and_a_proof_that_checks(corpus_brain: Path) -> None:
    result = _search(corpus_brain, "consistent hashing", limit=5)
    brain = Brain.open(corpus_brain)
    assert list(result) == ["query", "snapshot", "matches", "notes"]
    assert result["notes"] == []  # no vector index: nothing to fall back from
    assert result["snapshot"] == str(brain.snapshot_digest())
    assert result["matches"]
    for match in result["matches"]:
        assert list(match) == ["block", "memory_type", "title", "score", "accessible", "via", "evidence", "proof",
                               "verified"]
        assert list(match["proof"]) == ["root", "leaf_index", "tree_size", "audit_path"]
        assert match["verified"] is True
        ref = brain.snapshot().modules[match["memory_type"]]  # type: ignore[union-attr]
        assert match["proof"]["root"] == str(ref.root)
        proof = InclusionProof(block_id=BlockId.parse(match["block"]), leaf_index=match["proof"]["leaf_index"],
                               tree_size=match["proof"]["tree_size"], audit_path=tuple(match["proof"]["audit_path"]))
        assert proof.verify(MerkleRoot.parse(match["proof"]["root"]))
        for evidence in match["evidence"]:
            assert list(evidence) == ["block", "origin", "media_type", "locator", "excerpt"]
    first = result["matches"][0]
    assert first["title"] == "Consistent hashing" and first["evidence"][0]["origin"] == "papers/cache-design.pdf"
    assert first["evidence"][0]["locator"].startswith("p.2")
    assert "Consistent hashing is a scheme" in first["evidence"][0]["excerpt"]


def test_a_passage_hit_is_the_source_with_the_passage_locator_and_text(corpus_brain: Path) -> None:
    result = _search(corpus_brain, "virtual nodes per shard", types=("canonical",), limit=3)
    match = result["matches"][0]
    assert match["memory_type"] == "canonical"
    [evidence] = match["evidence"]
    assert evidence["block"] == match["block"] and evidence["origin"] == "papers/cache-design.pdf"
    assert evidence["media_type"] == "application/pdf"
    assert evidence["locator"].startswith("p.2 L") and "128 virtual nodes" in evidence["excerpt"]


def test_incremental_update_touches_only_what_changed_and_equals_a_rebuild(
    corpus_brain: Path, corpus_copy: Any, tmp_path: Path
) -> None:
    before = {q: _search(corpus_brain, q) for q in QUERIES}
    corpus = corpus_copy()
    (corpus / "notes" / "glossary.md").write_text(
        "# Glossary\n\n- Hit ratio: the share of requests served from memory.\n- Tombstone: a marker of deletion.\n"
    )
    (corpus / "notes" / "faq.md").write_text("# FAQ\n\nThe zebra shard rebalancer runs nightly at 02:00.\n")
    index = SearchIndex.open(Brain.open(corpus_brain))
    generation, rows = index.meta("generation"), index.db.execute("SELECT count(*) FROM blocks").fetchone()[0]
    index.close()
    ingest(corpus_brain, corpus)  # the ingest brings the index to its new head itself (incrementally)
    searcher = Searcher(Brain.open(corpus_brain))
    stats = searcher.refresh()
    after = searcher.index.db.execute("SELECT count(*) FROM blocks").fetchone()[0]
    assert searcher.index.meta("generation") == generation  # updated in place, not rebuilt
    searcher.close()
    assert not stats.rebuilt and stats.added == 0  # nothing left for the first query
    assert 2 <= after - rows <= 12  # the new and replacing sources and what they yielded
    incremental = {q: _search(corpus_brain, q) for q in [*QUERIES, "zebra rebalancer", "tombstone"]}
    assert incremental["zebra rebalancer"]["matches"][0]["evidence"][0]["origin"] == "notes/faq.md"
    assert incremental["consistent hashing"]["snapshot"] != before["consistent hashing"]["snapshot"]
    dumped = _dump(corpus_brain)
    shutil.rmtree(search_dir(corpus_brain))
    rebuilt = {q: _search(corpus_brain, q) for q in incremental}
    assert rebuilt == incremental
    assert _dump(corpus_brain) == dumped


def test_a_replaced_source_leaves_search_unless_superseded_blocks_are_asked_for(
    corpus_brain: Path, corpus_copy: Any
) -> None:
    assert _search(corpus_brain, "contacting", types=("canonical",))["matches"]
    corpus = corpus_copy()
    (corpus / "notes" / "glossary.md").write_text("# Glossary\n\n- Hit ratio: requests served from memory.\n")
    ingest(corpus_brain, corpus)
    old_text = "without contacting the object store"
    assert not [m for m in _search(corpus_brain, old_text, types=("canonical",))["matches"]
                if m["evidence"][0]["origin"] == "notes/glossary.md"]
    found = [m for m in _search(corpus_brain, old_text, types=("canonical",), include_superseded=True)["matches"]
             if m["evidence"][0]["origin"] == "notes/glossary.md"]
    assert found and all(m["accessible"] is False and m["verified"] for m in found)


def test_reference_brain_accessibility_follows_the_ledger(reference_brain: Path) -> None:
    # §7.2, confirmed on the sample brain: "Fourier" returns only the superseding concept unless the switch
    # is set, and the demoted episode is returned only with the switch.
    semantic = _search(reference_brain, "Fourier", types=("semantic",), expand=False)["matches"]
    assert [m["title"] for m in semantic] == ["Fourier expansion"]
    both = _search(reference_brain, "Fourier", types=("semantic",), include_superseded=True, expand=False)["matches"]
    assert {m["title"]: m["accessible"] for m in both} == {"Fourier expansion": True, "Fourier series": False}
    assert not _search(reference_brain, "seminar heat equation", types=("episodic",))["matches"]
    demoted = _search(reference_brain, "seminar heat equation", types=("episodic",), include_superseded=True)
    assert [m["accessible"] for m in demoted["matches"]] == [False]


def test_expansion_adds_blocks_one_edge_away_and_says_how(reference_brain: Path) -> None:
    plain = _search(reference_brain, "Laplace", expand=False)["matches"]
    assert all(m["via"] is None for m in plain)
    expanded = _search(reference_brain, "Laplace")["matches"]
    added = [m for m in expanded if m["via"] is not None]
    assert added, expanded
    accessible = {m["block"] for m in _search(reference_brain, "Laplace Fourier spectrum signal", limit=50)["matches"]}
    for match in added:
        # Never an inaccessible block, and never reached through one, without --include-superseded.
        assert match["accessible"] is True
        assert match["via"]["from"] in accessible | {m["block"] for m in plain}
    # Laplace's relation targets "Fourier series", which was superseded: only the switch lets it through.
    with_switch = _search(reference_brain, "Laplace", include_superseded=True)["matches"]
    related = [m for m in with_switch if m["via"] and m["via"]["edge"].startswith("relation:")]
    assert [(m["title"], m["accessible"], m["via"]["from"]) for m in related] == [
        ("Fourier series", False, plain[0]["block"])
    ]
    assert "Fourier series" not in {m["title"] for m in expanded}


def test_a_damaged_block_is_reported_unverified_and_left_out_after_a_rebuild(corpus_brain: Path) -> None:
    match = _search(corpus_brain, "warmer", types=("semantic",))["matches"][0]
    assert match["verified"] is True
    blob = Brain.open(corpus_brain).blobs.path(BlockId.parse(match["block"]))
    blob.chmod(0o644)
    blob.write_bytes(blob.read_bytes().replace(b"warmer", b"w4rmer"))
    again = _search(corpus_brain, "warmer", types=("semantic",))["matches"]
    assert [m["verified"] for m in again if m["block"] == match["block"]] == [False]
    shutil.rmtree(search_dir(corpus_brain))
    assert match["block"] not in {m["block"] for m in _search(corpus_brain, "warmer", types=("semantic",))["matches"]}


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign", "not-a-directory"])
def test_a_corrupt_or_foreign_index_file_is_rebuilt(corpus_brain: Path, damage: str) -> None:
    expected = _search(corpus_brain, "deploy release")
    path = index_path(corpus_brain)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    if damage == "not-a-directory":
        shutil.rmtree(search_dir(corpus_brain))
        search_dir(corpus_brain).write_bytes(b"a file where the index directory goes")
    elif damage == "garbage":
        path.write_bytes(b"not a database at all" * 100)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    else:
        path.unlink()
        sqlite3.connect(path).execute("CREATE TABLE something(x)").connection.commit()
    assert _search(corpus_brain, "deploy release") == expected


def test_a_stale_index_is_detected_by_the_snapshot_it_records(
    corpus_brain: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _search(corpus_brain, "shard")
    monkeypatch.setattr("brain.store.head._HEAD_LISTENERS", [])  # no command ran here: no listener either
    index = SearchIndex.open(Brain.open(corpus_brain))
    assert index.is_current() and index.snapshot_digest() == Brain.open(corpus_brain).snapshot_digest()
    brain = Brain.open(corpus_brain)
    with brain.writer(ACTOR) as writer:
        data = b"A quokka note.\n"
        writer.add(CanonicalBlock(blob=writer.put_blob(data), media_type="text/plain", size=len(data)))
        writer.commit()
    assert not index.is_current()
    index.close()
    assert _search(corpus_brain, "quokka")["matches"]


def test_an_in_memory_index_answers_like_the_file(corpus_brain: Path) -> None:
    brain = Brain.open(corpus_brain)
    memory = Searcher(brain, SearchIndex.open(brain, in_memory=True))
    try:
        in_memory = memory.search(SearchRequest("hit ratio latency")).model_dump(mode="json")
    finally:
        memory.close()
    assert not search_dir(corpus_brain).exists()
    assert in_memory == _search(corpus_brain, "hit ratio latency")


def test_a_partial_brain_searches_what_is_stored_and_catches_up_when_the_rest_arrives(
    corpus_brain: Path, tmp_path: Path
) -> None:
    brain = Brain.open(corpus_brain)
    episodes = brain.module(brain.snapshot().modules["episodic"].memory_type)  # type: ignore[union-attr]
    kept = tmp_path / "kept"
    kept.mkdir()
    for block_id in episodes.block_ids:
        shutil.move(brain.blobs.path(block_id), kept / block_id.hex)
    head = brain.head()
    assert head is not None
    origin = Origin(partial=True, reference="localhost/x:v1", snapshot=head.snapshot, tag="v1")
    write_head(corpus_brain, head.model_copy(update={"origin": origin}))
    found = _search(corpus_brain, "warmer paused")["matches"]
    assert found and all(m["memory_type"] != "episodic" for m in found) and all(m["verified"] for m in found)
    for path in kept.iterdir():
        shutil.move(path, brain.blobs.path(BlockId(path.name)))
    write_head(corpus_brain, head.model_copy(update={"origin": origin.model_copy(update={"partial": False})}))
    assert "episodic" in {m["memory_type"] for m in _search(corpus_brain, "warmer paused")["matches"]}


def test_search_json_from_the_cli_is_the_library_answer(corpus_brain: Path, brain: Any) -> None:
    done = brain("--brain", str(corpus_brain), "search", "object store maintenance", "--json", "-k", "4")
    assert done.code == 0, done
    assert json.loads(done.stdout) == _search(corpus_brain, "object store maintenance", limit=4)


def test_members_that_leave_are_deleted_exactly_and_the_scores_equal_a_rebuild(corpus_brain: Path) -> None:
    before = _search(corpus_brain, "shard warmer object store", limit=30)
    gone = [m for m in before["matches"] if m["memory_type"] in ("semantic", "procedural")][:3]
    source = next(m for m in before["matches"] if m["memory_type"] == "canonical")
    brain = Brain.open(corpus_brain)
    with brain.writer("tester@example.org") as writer:
        for match in [*gone, source]:
            writer.remove(MemoryType(match["memory_type"]), [BlockId.parse(match["block"])])
        writer.commit()
    after = _search(corpus_brain, "shard warmer object store", limit=30)
    left = {m["block"] for m in after["matches"]}
    assert not left & {m["block"] for m in [*gone, source]}
    index = SearchIndex.open(Brain.open(corpus_brain))
    assert index.meta("orphans") is None  # every posting was deleted from the text table, none left behind
    index.close()
    dumped = _dump(corpus_brain)
    shutil.rmtree(search_dir(corpus_brain))
    assert _search(corpus_brain, "shard warmer object store", limit=30) == after  # scores included
    assert _dump(corpus_brain) == dumped


def test_a_kill_during_an_update_leaves_a_usable_index(tmp_path: Path) -> None:
    import random
    import signal
    import subprocess
    import time

    from brain.blocks import Block
    from brain.identity import OciDigest
    from tests.cli.conftest import BRAIN_EXE

    rnd = random.Random(5)
    words = [f"w{n}" for n in range(3000)]
    path = tmp_path / "big"
    brain = Brain.init(path)
    with brain.writer("tester@example.org") as writer:
        for _ in range(3000):
            view = "\n".join(" ".join(rnd.choices(words, k=12)) for _ in range(12)).encode()
            digest = writer.put_blob(view)
            blob = {"blob": str(digest), "media_type": "text/plain", "size": len(view)}
            writer.add(Block.from_payload("canonical", {**blob, "normalized_view": blob}))
            assert OciDigest.of(view) == digest
        writer.commit()
    for delay in (0.4, 0.8, 1.2):
        process = subprocess.Popen([str(BRAIN_EXE), "--brain", str(path), "search", "--reindex"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        after = _search(path, "w17 w2041", limit=20)
        assert after["snapshot"] == str(brain.snapshot_digest()) and after["matches"]
    shutil.rmtree(search_dir(path))
    assert _search(path, "w17 w2041", limit=20) == after


def test_a_damaged_composition_of_the_indexed_snapshot_means_a_rebuild(
    corpus_brain: Path, corpus_copy: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orjson

    monkeypatch.setattr("brain.store.head.on_head_moved", lambda listener: None)  # an index left behind its head
    monkeypatch.setattr("brain.store.head._HEAD_LISTENERS", [])

    _search(corpus_brain, "shard")
    index = SearchIndex.open(Brain.open(corpus_brain))
    old_semantic = orjson.loads(index.meta("modules") or "{}")["semantic"][0]
    index.close()
    corpus = corpus_copy()
    (corpus / "notes" / "new.md").write_text("# New\n\nA wombat is a marsupial that digs burrows.\n")
    ingest(corpus_brain, corpus)
    brain = Brain.open(corpus_brain)
    assert brain.snapshot().modules["semantic"].composition.hex != old_semantic  # type: ignore[union-attr]
    old_file = brain.blobs.path(OciDigest(old_semantic))
    old_file.chmod(0o644)
    old_file.write_bytes(b"garbage")
    searcher = Searcher(brain)
    stats = searcher.refresh()
    searcher.close()
    assert stats.rebuilt
    assert _search(corpus_brain, "wombat burrows")["matches"]
