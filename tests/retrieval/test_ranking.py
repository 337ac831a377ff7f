"""Ranking on documents: a source's own name, its whole text, change logs only when asked, identical texts as one
result (issue 21). Built from small documents ingested by the real CLI."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from brain.brain import Brain
from retrieval.documents import names_of_origin, whole_of
from retrieval.query import Searcher, SearchRequest
from tests.retrieval.conftest import ingest

FILLER = "\n\n".join(f"Paragraph {i} talks about nothing in particular, words and more words." for i in range(12))


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _origins(path: Path, query: str, **options: object) -> list[str]:
    searcher = Searcher(Brain.open(path))
    try:
        result = searcher.search(SearchRequest(query, limit=10, **options))  # type: ignore[arg-type]
    finally:
        searcher.close()
    return list(dict.fromkeys(e.origin for m in result.matches for e in m.evidence[:1]))


def test_names_come_from_the_file_the_directory_and_the_man_name_section() -> None:
    assert names_of_origin("man1/tar.1.gz") == ["tar"]
    assert names_of_origin("doc/jq/README") == ["jq"]
    assert names_of_origin("pypi/orjson/METADATA") == ["orjson"]
    assert names_of_origin("openssl/README-ENGINES.md.gz") == ["readme-engines", "openssl"]
    assert names_of_origin(None) == []
    whole = whole_of("man1/gzip.1.gz", "# GZIP(1)\n\n## NAME\n\n- gzip, gunzip, zcat — compress or expand files\n")
    assert whole is not None
    assert whole.names == ("gzip", "gunzip", "zcat")
    assert "compress or expand files" in whole.headings and "GZIP(1)" in whole.headings
    metadata = whole_of("x/METADATA", "Metadata-Version: 2.1\nName: Frob-Nicate\nSummary: Frobs things\n\nBody\n")
    assert metadata is not None and "frob-nicate" in metadata.names and "Frobs things" in metadata.headings


@pytest.fixture
def docs_brain(tmp_path: Path) -> Path:
    files = {
        # The page about the question's subject, whose words are spread over the whole text.
        "tools/frobnicate/README": "# frobnicate\n\nA tool to compress images.\n\n" + FILLER
        + "\n\nIt writes the output next to the input.\n",
        # A page whose one passage says the query's words densely, about something else.
        "tools/other/README": "# other\n\n" + FILLER + "\n\nTo compress images and output them, see frobnicate.\n",
        "tools/zlorp/changelog": "zlorp (1.2) unstable; urgency=low\n\n"
        "  * Compress images faster when writing output.\n"
        "\n -- Someone <someone@example.org>  Mon, 01 Jan 2024 00:00:00 +0000\n",
    }
    root = _write(tmp_path / "docs", files)
    # One text shipped by two packages, compressed at different times: two sources, one normalized view.
    shared = b"Shared notes\n\nThe quintessential wibble procedure frobs the widget.\n"
    for name, mtime in (("a", 1_600_000_000), ("b", 1_700_000_000)):
        (root / "copies" / name).mkdir(parents=True)
        (root / "copies" / name / "NOTES.gz").write_bytes(gzip.compress(shared, mtime=mtime))
    ingest(tmp_path / "brain", root)
    return tmp_path / "brain"


def test_a_source_named_in_the_query_comes_first(docs_brain: Path) -> None:
    assert _origins(docs_brain, "frobnicate output")[0] == "tools/frobnicate/README"


def test_change_logs_are_quiet_unless_the_query_asks_about_versions(docs_brain: Path) -> None:
    plain = _origins(docs_brain, "compress images output", types=("canonical",), expand=False)
    assert plain.index("tools/zlorp/changelog") > plain.index("tools/frobnicate/README")
    asked = _origins(docs_brain, "which version made zlorp compress images faster", types=("canonical",))
    assert asked[0] == "tools/zlorp/changelog"


def test_identical_text_in_two_sources_is_one_result_listing_both(docs_brain: Path) -> None:
    searcher = Searcher(Brain.open(docs_brain))
    try:
        result = searcher.search(SearchRequest("quintessential wibble", types=("canonical",), expand=False))
    finally:
        searcher.close()
    assert len(result.matches) == 1, [m.title for m in result.matches]
    match = result.matches[0]
    assert sorted(e.origin for e in match.evidence) == ["copies/a/NOTES.gz", "copies/b/NOTES.gz"]
    assert len({e.block for e in match.evidence}) == 2
    assert match.verified


def test_evidence_keeps_one_source_and_what_was_drawn_from_it(corpus_brain: Path) -> None:
    from tests.retrieval.conftest import run_cli

    done = run_cli("--brain", str(corpus_brain), "search", "shard", "--evidence", "notes/glossary.md", "--json")
    assert done.code == 0, done
    matches = json.loads(done.stdout)["matches"]
    assert matches and {e["origin"] for m in matches for e in m["evidence"]} == {"notes/glossary.md"}
    assert {m["memory_type"] for m in matches} >= {"canonical", "semantic"}
    everything = json.loads(run_cli("--brain", str(corpus_brain), "search", "shard", "--json").stdout)["matches"]
    assert {e["origin"] for m in everything for e in m["evidence"]} != {"notes/glossary.md"}
    missing = run_cli("--brain", str(corpus_brain), "search", "shard", "--evidence", "no/such.md")
    assert missing.code == 4 and "no/such.md" in missing.stderr


def test_explain_says_why_each_match_ranked(corpus_brain: Path) -> None:
    from tests.retrieval.conftest import run_cli

    done = run_cli("--brain", str(corpus_brain), "search", "lumenctl drain", "--explain", "-k", "3")
    assert done.code == 0, done
    whys = [line for line in done.stdout.splitlines() if line.strip().startswith("why:")]
    assert len(whys) == 3 and all("relative to the best" in w for w in whys)
    assert "passage" in whys[0] and "source as a whole" in whys[0]
    plain = run_cli("--brain", str(corpus_brain), "search", "lumenctl drain", "--explain", "-k", "3", "--json")
    assert plain.stdout == run_cli("--brain", str(corpus_brain), "search", "lumenctl drain", "-k", "3", "--json").stdout
