"""`--tag` (issue 21, item 5): only blocks carrying every tag given, from `brain search`, `brain context`, the
HTTP face and the MCP tool; episodes are the blocks that carry tags (§3.2). Real files, ingested by the real CLI
with an `exec:` proposer that proposes tagged episodes."""

from __future__ import annotations

import json
import sqlite3
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import requests

from retrieval.index_file import FORMAT
from retrieval.paths import index_path
from tests.brain.brain_helpers import tree_digest
from tests.retrieval.conftest import ACTOR, assert_one_line_error, run_cli
from tests.retrieval.test_serve import Server, _mcp_calls

# Each `EPISODE: summary | date | tag, tag` line of a source becomes an episode drawn from it, at that line.
PROPOSER = textwrap.dedent(
    """
    import json, sys
    request = json.load(sys.stdin)
    source, candidates = request["task"]["source"], []
    for number, line in enumerate(request["text"].splitlines(), 1):
        if line.startswith("EPISODE: "):
            summary, day, tags = (part.strip() for part in line[9:].split("|"))
            payload = {"summary": summary, "occurred_at": day + "T12:00:00Z"}
            if tags:
                payload["tags"] = [t.strip() for t in tags.split(",")]
            candidates.append({"memory_type": "episodic", "payload": payload, "evidence": [source],
                               "locator": f"L{number}"})
    json.dump({"schema_version": "boltzmann.candidates/v1", "candidates": candidates}, sys.stdout)
    """
)
SOURCES = {
    "ops/deploys.md": (
        "# Deploy log of the harbour service\n\n"
        "EPISODE: deployed the harbour service release 4.2 | 2026-03-01 | release, harbour\n"
        "EPISODE: rolled back the harbour service deploy after errors | 2026-03-02 | Hotfix, Release\n"
        "EPISODE: deployed the harbour dashboard | 2026-03-05 |\n"
    ),
    "ops/incidents.md": (
        "# Incidents\n\n"
        "EPISODE: harbour service deploy paged the on-call engineer | 2026-03-02 | incident, hotfix\n"
        "The harbour service deploy is described in the deploy log.\n"
    ),
}


@pytest.fixture(scope="module")
def tagged_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("tagged")
    for relpath, text in SOURCES.items():
        (work / "docs" / relpath).parent.mkdir(parents=True, exist_ok=True)
        (work / "docs" / relpath).write_text(text)
    script = work / "proposer.py"
    script.write_text(PROPOSER)
    brain_dir = work / "brain"
    assert run_cli("--brain", str(brain_dir), "--actor", ACTOR, "init").code == 0
    done = run_cli("--brain", str(brain_dir), "--actor", ACTOR, "--quiet", "ingest", str(work / "docs"),
                   "--proposer", f"exec:{sys.executable} {script}", "--allow", "episodic")
    assert done.code == 0, done
    return brain_dir


@pytest.fixture
def tagged(tagged_master: Path, tmp_path: Path) -> Path:
    from tests.retrieval.conftest import copy_brain

    return copy_brain(tagged_master, tmp_path / "brain")


def _search(brain_dir: Path, *args: str) -> list[dict[str, Any]]:
    done = run_cli("--brain", str(brain_dir), "search", "harbour service deploy", *args, "--json")
    assert done.code == 0, done
    return list(json.loads(done.stdout)["matches"])


def _summaries(brain_dir: Path, matches: list[dict[str, Any]]) -> set[str]:
    found = set()
    for match in matches:
        shown = run_cli("--brain", str(brain_dir), "show", match["block"], "--json")
        assert shown.code == 0, shown
        found.add(json.loads(shown.stdout)["payload"]["summary"])
    return found


def test_one_tag_keeps_only_the_blocks_that_carry_it_case_ignored(tagged: Path) -> None:
    everything = _search(tagged)
    assert {m["memory_type"] for m in everything} >= {"canonical", "episodic"}  # without --tag: passages too
    release = _search(tagged, "--tag", "release")
    assert {m["memory_type"] for m in release} == {"episodic"}  # expansion never brings an untagged block in
    assert _summaries(tagged, release) == {"deployed the harbour service release 4.2",
                                           "rolled back the harbour service deploy after errors"}
    assert _search(tagged, "--tag", "  RELEASE ") == release  # case and surrounding spaces ignored
    assert _search(tagged, "--tag", "no-such-tag") == []


def test_several_tags_mean_every_one_of_them(tagged: Path) -> None:
    both = _search(tagged, "--tag", "release", "--tag", "hotfix")
    assert _summaries(tagged, both) == {"rolled back the harbour service deploy after errors"}
    hotfix = _search(tagged, "--tag", "hotfix")
    assert _summaries(tagged, hotfix) == {"rolled back the harbour service deploy after errors",
                                          "harbour service deploy paged the on-call engineer"}
    assert _search(tagged, "--tag", "hotfix", "--tag", "harbour") == []


def test_context_packs_only_tagged_items(tagged: Path) -> None:
    done = run_cli("--brain", str(tagged), "context", "harbour service deploy", "--tag", "incident", "--json")
    assert done.code == 0, done
    items = json.loads(done.stdout)["items"]
    assert [i["text"].split("\n")[0] for i in items] == ["harbour service deploy paged the on-call engineer"]
    assert all(i["verified"] for i in items)


@pytest.mark.parametrize("command", ["search", "context"])
def test_an_empty_tag_is_a_usage_error_and_writes_nothing(tagged: Path, command: str) -> None:
    before = tree_digest(tagged)
    done = run_cli("--brain", str(tagged), command, "harbour", "--tag", " ")
    assert_one_line_error(done, 3)
    assert tree_digest(tagged) == before


def test_an_index_of_the_previous_format_is_rebuilt_with_tags(tagged: Path) -> None:
    assert _search(tagged, "--tag", "incident")  # the index exists and knows the tags
    with sqlite3.connect(index_path(tagged)) as db:  # what an older `brain` left: no tags table, older format
        db.execute("DROP TABLE tags")
        db.execute("UPDATE meta SET value='brain-search/3' WHERE key='format'")
    assert FORMAT != "brain-search/3"
    done = run_cli("--brain", str(tagged), "search", "harbour service deploy", "--tag", "incident", "--json")
    assert done.code == 0, done
    assert len(json.loads(done.stdout)["matches"]) == 1
    with sqlite3.connect(index_path(tagged)) as db:
        assert db.execute("SELECT value FROM meta WHERE key='format'").fetchone() == (FORMAT,)
        assert db.execute("SELECT count(*) FROM tags").fetchone() == (6,)  # the distinct (tag, block) pairs


def test_http_and_mcp_take_the_tag_filter_like_the_cli(tagged: Path) -> None:
    cli = _search(tagged, "--tag", "release", "--tag", "hotfix")
    server = Server(tagged)
    try:
        found = requests.get(f"{server.url}/v1/search", timeout=30,
                             params=[("q", "harbour service deploy"), ("tag", "release"), ("tag", "hotfix")])
        assert found.status_code == 200 and found.json()["matches"] == cli
        packed = requests.get(f"{server.url}/v1/context", timeout=30,
                              params={"q": "harbour service deploy", "tag": "incident", "max_tokens": 500})
        assert packed.status_code == 200 and len(packed.json()["items"]) == 1
        empty = requests.get(f"{server.url}/v1/search", params={"q": "harbour", "tag": ""}, timeout=30)
        assert empty.status_code == 400
    finally:
        server.stop()
    _, answers = _mcp_calls(tagged, [("search", {"query": "harbour service deploy", "tags": ["release", "hotfix"]})])
    assert answers[0].structured_content["matches"] == cli
