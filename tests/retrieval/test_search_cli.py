"""`brain search` and `brain cat` from the command line: output, bad input, and nothing written on a refusal."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from retrieval.paths import search_dir
from tests.brain.brain_helpers import tree_digest
from tests.retrieval.conftest import CORPUS, assert_one_line_error


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["search", ""], 3),
        (["search", "   "], 3),
        (["search", "?!.,;:-*\"'()"], 3),
        (["search", "x" * 102_400], 3),
        (["search", "shard", "--type", "bogus"], 3),
        (["search", "shard", "--type", "provenance"], 3),
        (["search", "shard", "--limit", "0"], 3),
        (["search", "shard", "--since", "yesterday"], 3),
        (["cat", "notes/glossary.md", "--locator", "L9-L3"], 3),
        (["cat", "notes/glossary.md", "--original", "--json"], 3),
        (["cat", "no/such/origin.md"], 4),
        (["cat", "zzzz"], 4),
    ],
)
def test_bad_requests_fail_in_one_line_and_write_nothing(
    corpus_brain: Path, brain: Any, args: list[str], code: int
) -> None:
    before = tree_digest(corpus_brain)
    done = brain("--brain", str(corpus_brain), *args)
    assert_one_line_error(done, code)
    if args[0] == "search":
        assert tree_digest(corpus_brain) == before
        assert not search_dir(corpus_brain).exists()


def test_fts_syntax_in_a_query_is_just_words(corpus_brain: Path, brain: Any) -> None:
    for query in ['"shard', "shard*", "NEAR(shard warmer)", "-shard", "shard AND OR NOT", "shard:title"]:
        done = brain("--brain", str(corpus_brain), "search", "--json", "--", query)  # `--`: -shard is no option
        assert done.code == 0, (query, done)
        assert json.loads(done.stdout)["query"] == query


def test_an_empty_brain_has_nothing_to_search(tmp_path: Path, brain: Any) -> None:
    assert brain("--brain", str(tmp_path / "b"), "init").code == 0
    before = tree_digest(tmp_path / "b")
    assert_one_line_error(brain("--brain", str(tmp_path / "b"), "search", "anything"), 4)
    assert_one_line_error(brain("--brain", str(tmp_path / "b"), "cat", "notes/x.md"), 4)
    assert tree_digest(tmp_path / "b") == before


def test_human_output_shows_title_origin_locator_and_excerpt(corpus_brain: Path, brain: Any) -> None:
    done = brain("--brain", str(corpus_brain), "search", "consistent hashing", "-k", "3")
    assert done.code == 0, done
    assert "== papers/cache-design.pdf" in done.stdout
    assert "Consistent hashing" in done.stdout and "papers/cache-design.pdf:p.2 L" in done.stdout
    assert "\x1b[" not in done.stdout  # no styles in a pipe
    coloured = brain("--brain", str(corpus_brain), "--color", "always", "search", "consistent hashing", "-k", "1")
    excerpt = next(line for line in coloured.stdout.splitlines() if "is a scheme" in line)
    assert re.search(r"\x1b\[[0-9;]*mhashing\x1b\[0m is a scheme", excerpt), excerpt  # matched words highlighted
    assert "search index built" in done.stderr
    assert brain("--brain", str(corpus_brain), "search", "qwzxv").stderr.strip() == "no matches"


def test_reindex_rebuilds_and_subsequent_queries_agree(corpus_brain: Path, brain: Any) -> None:
    first = brain("--brain", str(corpus_brain), "search", "warmer", "--json")
    rebuilt = brain("--brain", str(corpus_brain), "search", "warmer", "--json", "--reindex")
    assert "search index rebuilt" in rebuilt.stderr
    assert json.loads(first.stdout) == json.loads(rebuilt.stdout)
    only = brain("--brain", str(corpus_brain), "search", "--reindex")
    assert only.code == 0 and only.stdout == ""
    stats = brain("--brain", str(corpus_brain), "search", "--reindex", "--json").json()
    assert stats["snapshot"] == json.loads(first.stdout)["snapshot"] and stats["blocks"] > 40


def test_filters_by_type_subject_and_date(corpus_brain: Path, brain: Any) -> None:
    def matches(*options: str) -> list[dict[str, Any]]:
        done = brain("--brain", str(corpus_brain), "search", *options, "--json", "--no-expand", "-k", "50")
        assert done.code == 0, done
        return json.loads(done.stdout)["matches"]

    episodic = matches("deploy release", "-t", "episodic")
    assert episodic and {m["memory_type"] for m in episodic} == {"episodic"}
    day = {m["block"] for m in matches("deploy release", "-t", "episodic", "--since", "2026-03-14", "--until",
                                       "2026-03-14")}
    before = {m["block"] for m in matches("deploy release", "-t", "episodic", "--until", "2026-03-13")}
    after = {m["block"] for m in matches("deploy release", "-t", "episodic", "--since", "2026-03-15")}
    assert day and before and after and not (day & before) and not (day & after) and not (before & after)
    assert matches("deploy release", "-t", "episodic", "--since", "2027-01-01") == []
    assert all(m["memory_type"] in {"semantic", "procedural"}
               for m in matches("shard", "--subject", "Lumen architecture > Components"))
    assert matches("shard", "--subject", "Lumen architecture > Components")
    assert matches("shard", "--subject", "no such subject") == []


def test_cat_reads_views_by_origin_prefix_and_locator(corpus_brain: Path, brain: Any) -> None:
    whole = brain("--brain", str(corpus_brain), "cat", "notes/glossary.md")
    assert whole.code == 0 and whole.stdout.startswith("# Glossary")
    part = json.loads(brain("--brain", str(corpus_brain), "cat", "notes/glossary.md", "-l", "L3", "--json").stdout)
    assert part["origin"] == "notes/glossary.md" and part["locator"] == "L3"
    assert part["text"] == whole.stdout.splitlines()[2]
    by_prefix = brain("--brain", str(corpus_brain), "cat", part["block"][7:19], "-l", "L3", "--json")
    assert json.loads(by_prefix.stdout) == part
    page = json.loads(brain("--brain", str(corpus_brain), "cat", "papers/cache-design.pdf", "-l", "p.2",
                            "--json").stdout)
    assert page["text"].startswith("2. Sharding") and "\f" not in page["text"]
    assert "--- page 3 ---" in brain("--brain", str(corpus_brain), "cat", "papers/cache-design.pdf").stdout


def test_cat_original_is_the_source_bytes(corpus_brain: Path, brain_exe: Any) -> None:
    import subprocess

    from tests.cli.conftest import BRAIN_EXE

    done = subprocess.run([str(BRAIN_EXE), "--brain", str(corpus_brain), "cat", "papers/cache-design.pdf",
                           "--original"], capture_output=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (CORPUS / "papers" / "cache-design.pdf").read_bytes()


def test_search_and_cat_are_registered_with_help(brain: Any) -> None:
    for command in ("search", "cat", "serve"):
        done = brain(command, "--help")
        assert done.code == 0 and "--json" in done.stdout or command == "serve"
