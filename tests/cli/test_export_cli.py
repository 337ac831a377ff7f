"""`brain export` (JSONL, Markdown) and the Python API of `export`, with the docs' framework examples run as written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import export
from brain.errors import NotFoundError
from export.markdown import safe_name
from tests.cli.conftest import BrainRunner, assert_one_line_error

DOCS = Path(__file__).resolve().parents[2] / "docs" / "export.md"
SOURCES = {
    "guide/setup.md": "# Setup\n\n## Install\n\nThe installer requires Python 3.11 or newer.\n\n"
    "## Rotate the key\n\n1. Generate a new key with ssh-keygen.\n2. Add it to the trust root.\n"
    "3. Remove the old key.\n",
    "notes/glossary.md": "# Glossary\n\nA brain is a content-addressed store of typed knowledge blocks.\n",
}


@pytest.fixture
def corpus_brain(brain: BrainRunner, tmp_path: Path) -> Path:
    for name, text in SOURCES.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text)
    assert brain("init", "--actor", "ci@example.org").code == 0
    done = brain("ingest", "docs", "--actor", "ci@example.org", "--json")
    assert done.code == 0, done
    return tmp_path / "brain"


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_jsonl_has_every_accessible_block_with_evidence_origins(brain: BrainRunner, corpus_brain: Path) -> None:
    done = brain("--brain", str(corpus_brain), "export")
    assert done.code == 0, done
    records = _lines(done.stdout)
    members = [
        m for m in brain("--brain", str(corpus_brain), "ls", "--json").json() if m["memory_type"] != "provenance"
    ]
    assert sorted(r["id"] for r in records) == sorted(m["block_id"] for m in members)
    by_type = {r["type"] for r in records}
    assert by_type <= {"canonical", "semantic", "procedural", "episodic"} and {"canonical", "semantic"} <= by_type
    sources = {r["id"]: r for r in records if r["type"] == "canonical"}
    # Origins are as ingest records them (relative to the ingested directory or the repository root).
    texts = {
        name: text for name in SOURCES for r in sources.values() if r["origin"].endswith(name) for text in [r["text"]]
    }
    assert texts == SOURCES
    derived = [r for r in records if r["type"] != "canonical"]
    assert derived
    for record in derived:
        assert record["evidence"], record
        for item in record["evidence"]:
            assert item["origin"] == sources[item["id"]]["origin"]
            assert item["locator"]
        assert record["snapshot"] == records[0]["snapshot"]
        assert record["title"] and record["text"]
    assert "exported" in done.stderr


def test_jsonl_to_a_file_with_provenance(brain: BrainRunner, corpus_brain: Path, tmp_path: Path) -> None:
    plain = brain("--brain", str(corpus_brain), "export", "--to", str(tmp_path / "k.jsonl"), "--json")
    assert plain.code == 0, plain
    with_ledger = brain(
        "--brain", str(corpus_brain), "export", "--provenance", "--to", str(tmp_path / "p.jsonl"), "--json"
    )
    counts = with_ledger.json()["counts"]
    assert counts["provenance"] > 0
    assert sum(counts.values()) == len((tmp_path / "p.jsonl").read_text().splitlines())
    assert sum(plain.json()["counts"].values()) == len((tmp_path / "k.jsonl").read_text().splitlines())
    assert not list(tmp_path.glob(".*.tmp-*"))
    assert_one_line_error(brain("--brain", str(corpus_brain), "export", "--json"), 3)


def test_markdown_one_file_per_source(brain: BrainRunner, corpus_brain: Path, tmp_path: Path) -> None:
    target = tmp_path / "md"
    done = brain("--brain", str(corpus_brain), "export", "--format", "markdown", "--to", str(target), "--json")
    assert done.code == 0, done
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*.md"))
    assert len(files) == len(SOURCES)
    setup = next(target.rglob("setup.md.md")).read_text()
    assert setup.startswith("# ")
    assert "## Source text" in setup and "ssh-keygen" in setup
    records = _lines(brain("--brain", str(corpus_brain), "export").stdout)
    setup_id = next(r["id"] for r in records if r["type"] == "canonical" and r["origin"].endswith("setup.md"))
    cited = [r for r in records if any(e["id"] == setup_id for e in r.get("evidence", []))]
    assert cited and all(r["id"] in setup for r in cited)
    again = brain("--brain", str(corpus_brain), "export", "--format", "markdown", "--to", str(target))
    assert_one_line_error(again, 5)
    assert_one_line_error(brain("--brain", str(corpus_brain), "export", "--format", "markdown"), 3)


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        ("docs/a.md", "docs/a.md.md"),
        ("../../etc/passwd", "etc/passwd.md"),
        ("/abs/path.txt", "abs/path.txt.md"),
        ("https://example.org/x/y?z=1", "example.org/x/y_z=1.md"),
        ("weird\x1bname\n.md", "weird_name_.md.md"),
        ("..", "fallback.md"),
        (None, "fallback.md"),
    ],
)
def test_markdown_names_stay_inside(origin: str | None, expected: str) -> None:
    assert safe_name(origin, "fallback").as_posix() == expected


def test_python_api_open_records_show_evidence(corpus_brain: Path) -> None:
    kb = export.open(corpus_brain)
    records = list(kb.records())
    sources = [r for r in records if r.type.value == "canonical"]
    derived = [r for r in records if r.type.value != "canonical"]
    assert len(sources) == len(SOURCES) and derived
    by_origin = kb.show(sources[0].origin or "")
    assert by_origin.id == sources[0].id
    assert kb.show(str(derived[0].id)[7:19]).id == derived[0].id  # an id prefix
    bundle = kb.evidence(derived[0].id)
    assert bundle.block.id == derived[0].id
    assert [s.id for s in bundle.sources] == [e.id for e in derived[0].evidence]
    assert all(s.text for s in bundle.sources)
    metadata = derived[0].metadata()
    assert "text" not in metadata and metadata["evidence"][0]["origin"]
    with pytest.raises(NotFoundError):
        kb.show("sha256:" + "0" * 64)
    only = list(kb.records(["semantic"]))
    assert only and all(r.type.value == "semantic" for r in only)


def _example(name: str) -> str:
    blocks = re.findall(r"```python\n(# example: [a-z-]+\n.*?)```", DOCS.read_text(), flags=re.DOTALL)
    found = [b for b in blocks if b.startswith(f"# example: {name}\n")]
    assert len(found) == 1, f"docs/export.md has no single example {name!r}"
    return found[0]


def test_langchain_loader_example_runs_on_langchain_core(corpus_brain: Path) -> None:
    namespace: dict[str, Any] = {"BRAIN_PATH": str(corpus_brain)}
    exec(compile(_example("langchain-loader"), "docs/export.md#langchain-loader", "exec"), namespace)  # noqa: S102
    from langchain_core.documents import Document

    documents = namespace["documents"]
    assert documents and all(isinstance(d, Document) for d in documents)
    assert {d.metadata["type"] for d in documents} >= {"canonical", "semantic"}
    assert any("ssh-keygen" in d.page_content for d in documents)


def test_llamaindex_example_runs_on_llama_index_core(corpus_brain: Path) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(_example("llamaindex"), "docs/export.md#llamaindex", "exec"), namespace)  # noqa: S102
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    retriever = namespace["BrainRetriever"]
    assert issubclass(retriever, BaseRetriever)
    nodes = retriever(str(corpus_brain), k=3).retrieve("rotate the key")
    assert nodes and all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in nodes)
    assert "key" in nodes[0].node.get_content().lower()
    assert nodes[0].node.metadata["evidence"][0]["origin"].endswith("setup.md")
    assert [n.score for n in nodes] == sorted((n.score for n in nodes), reverse=True)


def test_python_api_search_returns_records_with_verified_evidence(corpus_brain: Path) -> None:
    kb = export.open(corpus_brain)
    hits = kb.search("rotate key", k=3)
    assert hits, "the search index found nothing"
    assert all(h.verified for h in hits)
    top = hits[0]
    assert "key" in top.record.text.lower()
    assert top.evidence and top.evidence[0]["origin"].endswith("setup.md")
    assert all(h.score >= hits[-1].score for h in hits)
    assert kb.search("rotate key", k=3) == hits  # the index stays open between queries and answers the same


def test_langchain_retriever_example_runs_on_langchain_core(corpus_brain: Path) -> None:
    namespace: dict[str, Any] = {"BRAIN_PATH": str(corpus_brain), "QUERY": "rotate the key"}
    exec(compile(_example("langchain-retriever"), "docs/export.md#langchain-retriever", "exec"), namespace)  # noqa: S102
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    assert issubclass(namespace["BrainRetriever"], BaseRetriever)
    answers = namespace["answers"]
    assert answers and all(isinstance(d, Document) for d in answers)
    assert answers[0].metadata["evidence"][0]["origin"].endswith("setup.md")
    assert "score" in answers[0].metadata
