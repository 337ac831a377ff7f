"""`brain embed` against a real loopback `/v1/embeddings` server through the real `openai` client, the
travelling vector index it records, its checks on pull and in search, and fused `search`/`context`."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.errors import UntrustedArtifactError
from brain.vectors import FORMAT, MAGIC, decode, encode
from oci.install import install_artifact
from oci.pack import pack
from retrieval import fusion, vectors
from retrieval.vectors import dense_of
from tests.embeddings.server import Behaviour, embedding_server
from tests.retrieval.conftest import ACTOR, assert_one_line_error

QUERY = "how do I deploy a release"


def _embed(brain: Any, where: Path, url: str, *extra: str, quiet: bool = False) -> Any:
    flags = ["--quiet"] if quiet else []
    return brain("--brain", str(where), "--actor", ACTOR, *flags, "embed", "--model", "bow", "--base-url", url, *extra)


def test_embed_records_an_index_per_module_incrementally_and_the_brain_verifies(corpus_brain: Path, brain: Any) -> None:
    with embedding_server() as (url, server):
        first = _embed(brain, corpus_brain, url, "--json")
        assert first.code == 0, first
        report = json.loads(first.stdout)
        assert report["model"] == "bow" and report["dimension"] == 64 and report["snapshot"]
        assert {m["memory_type"] for m in report["modules"]} == {"canonical", "episodic", "semantic", "procedural"}
        assert all(m["embedded"] == m["units"] > 0 and m["reused"] == 0 for m in report["modules"])
        sent = server.inputs
        assert sent == sum(m["units"] for m in report["modules"])
        again = _embed(brain, corpus_brain, url, "--json")
        assert again.code == 0, again
        second = json.loads(again.stdout)
        assert second["snapshot"] is None and server.inputs == sent  # nothing re-sent, nothing written
        assert all(m["embedded"] == 0 and m["reused"] == m["units"] for m in second["modules"])
    snapshot = Brain.open(corpus_brain).snapshot()
    assert snapshot is not None
    for module in report["modules"]:
        ref = snapshot.modules[module["memory_type"]]
        assert ref.embedding_model == "bow" and str(ref.index_digest) == module["index_digest"]
    verified = brain("--brain", str(corpus_brain), "verify")
    assert verified.code == 0, verified


def test_new_blocks_only_are_sent_after_an_ingest(corpus_brain: Path, brain: Any, tmp_path: Path) -> None:
    with embedding_server() as (url, server):
        assert _embed(brain, corpus_brain, url).code == 0
        before = server.inputs
        extra = tmp_path / "extra"
        extra.mkdir()
        (extra / "kites.md").write_text("# Kites\n\nA kite flies on a string in the wind.\n")
        done = brain("--brain", str(corpus_brain), "--actor", ACTOR, "--quiet", "ingest", str(extra))
        assert done.code == 0, done
        again = json.loads(_embed(brain, corpus_brain, url, "--json").stdout)
        new = sum(m["embedded"] for m in again["modules"])
        assert 1 <= new <= 10 and server.inputs - before == new
        assert sum(m["reused"] for m in again["modules"]) >= before


def test_429_with_retry_after_is_waited_out(corpus_brain: Path, brain: Any) -> None:
    with embedding_server(Behaviour(fail_429=2, retry_after="1")) as (url, server):
        done = _embed(brain, corpus_brain, url, "--json")
        assert done.code == 0, done
        assert server.requests == 2 + json.loads(done.stdout)["requests"]


def test_a_timeout_fails_in_one_line_with_exit_7_and_writes_no_snapshot(corpus_brain: Path, brain: Any) -> None:
    head = Brain.open(corpus_brain).snapshot_digest()
    with embedding_server(Behaviour(delay=3.0)) as (url, _):
        done = _embed(brain, corpus_brain, url, "--timeout", "0.3", "--max-retries", "1", quiet=True)
    assert_one_line_error(done, 7)
    assert "did not answer within 0.3 s" in done.stderr
    assert Brain.open(corpus_brain).snapshot_digest() == head


def test_a_server_changing_dimension_is_refused(corpus_brain: Path, brain: Any) -> None:
    with embedding_server(Behaviour(dimension_after=1)) as (url, _):
        done = _embed(brain, corpus_brain, url, quiet=True)
    assert_one_line_error(done, 7)
    assert "dimension 7" in done.stderr and "expected 64" in done.stderr


def test_search_and_context_fuse_when_the_query_can_be_embedded(corpus_brain: Path, brain: Any) -> None:
    plain = json.loads(brain("--brain", str(corpus_brain), "search", QUERY, "--json").stdout)
    assert plain["notes"] == []
    with embedding_server() as (url, server):
        assert _embed(brain, corpus_brain, url).code == 0
        env = {"BRAIN_OPENAI_BASE_URL": url}
        asked = server.requests
        fused = brain("--brain", str(corpus_brain), "search", QUERY, "--json", env=env)
        assert fused.code == 0, fused
        answer = json.loads(fused.stdout)
        assert answer["notes"] == [] and answer["matches"] and all(m["verified"] for m in answer["matches"])
        assert server.models[-1] == "bow"  # the query was embedded with the index's own model
        explained = brain("--brain", str(corpus_brain), "search", QUERY, "--explain", env=env)
        assert "reciprocal-rank fusion" in explained.stdout and "vector #1" in explained.stdout
        packed = json.loads(brain("--brain", str(corpus_brain), "context", QUERY, "--json", "-n", "600",
                                  env=env).stdout)
        assert packed["notes"] == [] and packed["tokens"] <= 600 and packed["items"]
        assert server.requests == asked + 1  # one process: the query was embedded once
    # This process still knows the query's vector: fused although the endpoint is gone.
    remembered = json.loads(brain("--brain", str(corpus_brain), "search", QUERY, "--json", env=env).stdout)
    assert remembered["notes"] == [] and remembered["matches"] == answer["matches"]
    # A new process, endpoint gone: lexical ranking, the same matches as before, and one note.
    fusion.forget()
    gone = brain("--brain", str(corpus_brain), "search", QUERY, "--json", env=env)
    assert gone.code == 0, gone
    answer = json.loads(gone.stdout)
    assert len(answer["notes"]) == 1 and "lexical ranking only" in answer["notes"][0]
    assert [m["block"] for m in answer["matches"]] == [m["block"] for m in plain["matches"]]
    people = brain("--brain", str(corpus_brain), "search", QUERY)
    assert people.stderr.count("note: lexical ranking only") == 1


def test_a_query_endpoint_with_another_dimension_falls_back_with_a_note(corpus_brain: Path, brain: Any) -> None:
    with embedding_server() as (url, _):
        assert _embed(brain, corpus_brain, url).code == 0
    with embedding_server(Behaviour(dimension=32)) as (url, _):
        answer = json.loads(brain("--brain", str(corpus_brain), "search", QUERY, "--json",
                                  env={"BRAIN_OPENAI_BASE_URL": url}).stdout)
    assert len(answer["notes"]) == 1 and "dimension 32" in answer["notes"][0] and answer["matches"]


# --- the payload: format and lies -------------------------------------------------------------------------


def _payload(ids: list[str], dimension: int = 4, model: str = "m") -> bytes:
    rows = [(i, "", np.eye(dimension, dtype=np.float32)[n % dimension]) for n, i in enumerate(ids)]
    return encode(model, "semantic", dimension, rows)


def test_the_payload_round_trips_and_starts_with_its_documented_header() -> None:
    ids = ["aa" * 32, "11" * 32]
    data = _payload(ids)
    assert data[:8] == MAGIC
    (size,) = struct.unpack_from("<I", data, 8)
    header = json.loads(data[12 : 12 + size])
    assert header == {"count": 2, "dimension": 4, "format": FORMAT, "memory_type": "semantic", "model": "m"}
    index = decode(data, model="m", memory_type="semantic", members=ids)
    assert [k for k, _ in index.keys] == sorted(ids) and index.vectors.shape == (2, 4)
    assert len(data) == 12 + size + 2 * (32 + 2) + 2 * 4 * 4


@pytest.mark.parametrize(
    ("lie", "message"),
    [
        (lambda d: d[:-1], "wrong length"),
        (lambda d: d + b"\0\0\0\0", "wrong length"),
        (lambda d: d[:-4] + struct.pack("<f", float("nan")), "NaN"),
        (lambda d: d[:12] + d[12:].replace(b'"model":"m"', b'"model":"x"'), "model"),
        (lambda d: b"XXXXXXXX" + d[8:], "bad magic"),
    ],
)
def test_a_payload_that_lies_is_refused(lie: Any, message: str) -> None:
    ids = ["aa" * 32, "11" * 32]
    with pytest.raises(UntrustedArtifactError, match=message):
        decode(lie(_payload(ids)), model="m", memory_type="semantic", members=ids)


def test_ids_that_are_not_members_are_refused() -> None:
    with pytest.raises(UntrustedArtifactError, match="not a member"):
        decode(_payload(["aa" * 32, "11" * 32]), model="m", memory_type="semantic", members=["aa" * 32])


def _record_index(where: Path, memory_type: str, data: bytes, model: str) -> None:
    """A module reference naming `data` as its index (what a hostile publisher can write)."""
    held = Brain.open(where)
    with held.writer(ACTOR) as writer:
        ref = writer.refs[MemoryType(memory_type)]
        digest = writer.put_blob(data)
        writer.adopt(MemoryType(memory_type), ref.model_copy(update={"embedding_model": model, "index_digest": digest}))
        writer.commit()


def _install(source: Path, target: Path) -> Brain:
    held = Brain.open(source)
    packed = pack(held, tag="v1")
    pulled = Brain.init(target)
    install_artifact(pulled, held.blobs.get(packed.digest), lambda d: held.blobs.path(d.digest),
                     reference="localhost:5000/t/b:v1")
    return pulled


def test_pack_publishes_the_index_and_install_brings_it_back(corpus_brain: Path, brain: Any, tmp_path: Path) -> None:
    with embedding_server() as (url, _):
        assert _embed(brain, corpus_brain, url).code == 0
    pulled = _install(corpus_brain, tmp_path / "pulled")
    snapshot = pulled.snapshot()
    assert snapshot is not None and snapshot.modules["semantic"].embedding_model == "bow"
    dense = dense_of(pulled, snapshot)
    assert dense is not None and dense.notes == [] and len(dense.keys) > 40
    assert brain("--brain", str(pulled.path), "verify").code == 0


@pytest.mark.parametrize("how", ["not-a-member", "other-model"])
def test_install_refuses_a_lying_index_and_search_ignores_it_with_a_note(
    corpus_brain: Path, brain: Any, tmp_path: Path, how: str
) -> None:
    held = Brain.open(corpus_brain)
    snapshot = held.snapshot()
    assert snapshot is not None
    members = [i.hex for i in held.composition(snapshot.modules["semantic"]).block_ids]
    ids = [*members[:2], "ab" * 32] if how == "not-a-member" else members[:2]
    data = _payload(ids, model="bow" if how == "not-a-member" else "someone-else")
    _record_index(corpus_brain, "semantic", data, "bow")
    with pytest.raises(UntrustedArtifactError, match="not a member" if how == "not-a-member" else "model"):
        _install(corpus_brain, tmp_path / "pulled")
    assert Brain.open(tmp_path / "pulled").head() is None
    answer = json.loads(brain("--brain", str(corpus_brain), "search", QUERY, "--json").stdout)
    assert any("vector index of semantic ignored" in n for n in answer["notes"]) and answer["matches"]


def test_a_redaction_destroys_every_payload_holding_a_vector_of_a_redacted_block(
    corpus_brain: Path, brain: Any
) -> None:
    # An embedding of a text recovers much of the text: a payload holding one is a copy of the block.
    with embedding_server() as (url, _):
        assert _embed(brain, corpus_brain, url).code == 0
    held = Brain.open(corpus_brain)
    embedded = held.snapshot()
    assert embedded is not None
    payloads = {t: ref.index_digest for t, ref in embedded.modules.items() if ref.index_digest is not None}
    source = next(iter(held.composition(embedded.modules["canonical"]).block_ids))
    done = brain("--brain", str(corpus_brain), "--actor", ACTOR, "redact", source.hex, "--reason", "leak", "--yes",
                 "--json")
    assert done.code == 0, done
    redacted = {str(i).removeprefix("sha256:") for ids in done.json()["tombstoned"].values() for i in ids}
    assert source.hex in redacted
    for memory_type, digest in payloads.items():
        keys = decode(held.blobs.get(digest), model=None, memory_type=memory_type, members=None).keys \
            if held.blobs.has(digest) else ()
        holds = any(h in redacted for h, _ in keys)
        assert not holds, f"the {memory_type} payload still holds a redacted block's vector"
    before = {t for t in payloads if not Brain.open(corpus_brain).blobs.has(payloads[t])}
    assert "canonical" in before  # the source's passages were embedded: that payload is gone
    assert brain("--brain", str(corpus_brain), "verify").code == 0
    with embedding_server() as (url, server):
        again = json.loads(_embed(brain, corpus_brain, url, "--json").stdout)  # the rest is re-used, not re-sent
    lost = sum(m["units"] for m in again["modules"] if m["memory_type"] in before)
    assert again["snapshot"] and server.inputs <= lost


# --- search --at REF -----------------------------------------------------------------------------------------


def test_search_and_context_at_an_older_snapshot_answer_from_it(corpus_brain: Path, brain: Any, tmp_path: Path) -> None:
    old = Brain.open(corpus_brain).snapshot_digest()
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "kites.md").write_text("# Kites\n\nA kite flies on a string in the zephyrwind.\n")
    assert brain("--brain", str(corpus_brain), "--actor", ACTOR, "--quiet", "ingest", str(extra)).code == 0
    now = json.loads(brain("--brain", str(corpus_brain), "search", "zephyrwind", "--json").stdout)
    assert now["matches"] and now["snapshot"] != str(old)
    then = brain("--brain", str(corpus_brain), "search", "zephyrwind", "--at", "HEAD~1", "--json")
    assert then.code == 0, then
    answer = json.loads(then.stdout)
    assert answer["snapshot"] == str(old) and answer["matches"] == []
    packed = json.loads(brain("--brain", str(corpus_brain), "context", QUERY, "--at", str(old)[7:19], "--json").stdout)
    assert packed["snapshot"] == str(old) and packed["items"]
    assert_one_line_error(brain("--brain", str(corpus_brain), "search", "kite", "--at", "HEAD~9"), 4)
    assert_one_line_error(brain("--brain", str(corpus_brain), "search", "kite", "--at", "nosuch"), 4)


# --- a warm process: one client, one check per index, the query vectors remembered; sdk `at=` ---------------


def test_the_sdk_embeds_through_one_client_and_checks_each_index_once(
    corpus_brain: Path, brain: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdk import Brain as Library

    with embedding_server() as (url, server):
        assert _embed(brain, corpus_brain, url).code == 0
        monkeypatch.setenv("BRAIN_OPENAI_BASE_URL", url)
        decoded: list[str] = []
        real = vectors.decode
        monkeypatch.setattr(vectors, "decode", lambda data, **kw: decoded.append(kw["memory_type"]) or real(data, **kw))
        library = Library.open(corpus_brain)
        connections, requests = server.connections, server.requests
        answers = [library.search(q) for q in (QUERY, "rollback a shard", QUERY)]
        packed = library.context("rollback a shard", max_tokens=600)
        assert all(a.notes == [] and a.matches for a in answers) and packed.notes == [] and packed.items
        assert answers[0].matches == answers[2].matches
        assert server.requests - requests == 2  # the repeated queries came from the process's cache
        assert server.connections - connections == 1  # one client for every searcher, its connection kept
        assert sorted(decoded) == ["canonical", "episodic", "procedural", "semantic"]  # each index checked once


def test_sdk_search_and_context_at_an_older_snapshot(
    corpus_brain: Path, brain: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from brain.errors import NotFoundError
    from sdk import Brain as Library

    with embedding_server() as (url, server):
        assert _embed(brain, corpus_brain, url).code == 0
        embedded = Brain.open(corpus_brain).snapshot_digest()
        extra = tmp_path / "extra"
        extra.mkdir()
        (extra / "kites.md").write_text("# Kites\n\nA kite flies on a string in the zephyrwind.\n")
        library = Library.open(corpus_brain, actor=ACTOR)
        library.ingest([extra])
        assert library.search("zephyrwind").matches
        monkeypatch.setenv("BRAIN_OPENAI_BASE_URL", url)
        asked = server.requests
        then = library.search("zephyrwind", at=str(embedded))
        assert then.snapshot == str(embedded) and then.notes == []
        assert server.requests == asked + 1  # the old snapshot's indexes fused with its (empty) lexical answer
        assert then.matches and not any((e.origin or "").endswith("kites.md") for m in then.matches for e in m.evidence)
        fused = library.search(QUERY, at="HEAD~1")
        assert fused.snapshot == str(embedded) and fused.matches and all(m.verified for m in fused.matches)
        packed = library.context(QUERY, max_tokens=600, at=str(embedded)[7:19])
        assert packed.snapshot == str(embedded) and packed.items and packed.tokens <= 600
        head = library.search(QUERY)
        assert head.snapshot == str(library.snapshot_digest()) != str(embedded)
        # The ingest changed modules' membership, which dropped their indexes: said once, fused with the rest.
        assert len(head.notes) == 1 and "does not cover canonical" in head.notes[0]
        assert _embed(brain, corpus_brain, url).code == 0
        assert library.search(QUERY).notes == []
    with pytest.raises(NotFoundError) as missing:
        library.search(QUERY, at="nosuch")
    assert missing.value.exit_code == 4
