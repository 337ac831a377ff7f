"""Shards joined by the real n-way `brain merge` (PROTOCOL §10.7): module roots equal one runner's, from the
empty brain and from a base; overlapping shards (facts contradicting across shards) give a plan that says so
and nothing is written; a shard of another base is refused. Every `brain` run is a real process forked from a
pre-warmed `brain` (tests/prewarmed.py); one runner's build of fixtures/ is made once for the module."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.prewarmed import ModuleBrain

ROOT = Path(__file__).resolve().parents[2]
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "SOURCE_DATE_EPOCH": "1767225600",
       "NO_COLOR": "1", "BRAIN_ACTOR": "ci@example.org"}  # fmt: skip
BRAIN = ModuleBrain(ENV, "init", "ingest", "merge", "verify")


def brain(directory: Path, *args: str, cwd: Path, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = BRAIN.server.run("--brain", str(directory), *args, cwd=cwd, timeout=300)
    assert done.returncode == code, f"brain {' '.join(args)}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def single_fixtures_roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The module roots of one runner's `brain ingest fixtures/` from the empty brain."""
    work = tmp_path_factory.mktemp("single")
    brain(work / "single", "init", cwd=work)
    brain(work / "single", "ingest", "fixtures", cwd=ROOT)
    return roots(work / "single")


def head(directory: Path) -> str:
    return str(json.loads((directory / "boltzmann" / "head.json").read_bytes())["snapshot"])


def roots(directory: Path) -> dict[str, str]:
    document = json.loads((directory / "blobs" / "sha256" / head(directory).removeprefix("sha256:")).read_bytes())
    return {name: ref["root"] for name, ref in document["modules"].items()}


def fetch_into(target: Path, *sources: Path) -> None:
    """What `brain fetch` of each source's head leaves in `target`: its blobs (linked here, no network)."""
    into = target / "blobs" / "sha256"
    for source in sources:
        for entry in os.scandir(source / "blobs" / "sha256"):
            if not entry.name.startswith(".") and not (into / entry.name).exists():
                os.link(entry.path, into / entry.name)


def here(corpus: Path) -> str:
    """A corpus of this checkout as a path relative to it, ingested from it: the origins are then the same
    (`fixtures/...`) in a git checkout and in a copy outside one (`git archive`), so each file keeps its shard."""
    return corpus.relative_to(ROOT).as_posix()


def shards(tmp_path: Path, corpus: Path, count: int, base: Path | None) -> list[Path]:
    made = []
    for i in range(1, count + 1):
        shard = tmp_path / f"shard{i}"
        if base is None:
            brain(shard, "init", cwd=tmp_path)
            brain(shard, "ingest", here(corpus), "--shard", f"{i}/{count}", "--base", "empty", cwd=ROOT)
        else:
            shutil.copytree(base, shard)  # `brain pull BASE` on a fresh runner
            brain(shard, "ingest", here(corpus), "--shard", f"{i}/{count}", "--base", head(base), cwd=ROOT)
        made.append(shard)
    return made


def test_fixtures_in_three_shards_from_empty_merge_to_the_single_runs_roots(
    tmp_path: Path, single_fixtures_roots: dict[str, str]
) -> None:
    corpus = ROOT / "fixtures"
    parts = shards(tmp_path, corpus, 3, None)
    target = tmp_path / "merged"
    shutil.copytree(parts[0], target)
    fetch_into(target, *parts[1:])
    plan = json.loads(brain(target, "merge", "--plan", *map(head, parts[1:]), "--allow-unrelated", "--json",
                            cwd=tmp_path).stdout)
    assert plan["verdicts"] == [] or all(v["verdict"] == "validated" for v in plan["verdicts"])
    assert plan["withdrawn"] == {}
    brain(target, "merge", *map(head, parts[1:]), "--allow-unrelated", "--reason", "3 shards", cwd=tmp_path)
    snapshot = json.loads((target / "blobs" / "sha256" / head(target).removeprefix("sha256:")).read_bytes())
    assert snapshot["parents"] == [head(p) for p in parts]  # one n-way merge: the first shard, then the others
    assert roots(target) == single_fixtures_roots  # all five modules
    brain(target, "verify", cwd=tmp_path)


def test_shards_from_a_base_merge_to_the_single_runs_roots(tmp_path: Path) -> None:
    corpus = ROOT / "fixtures" / "eval"
    base = tmp_path / "base"
    brain(base, "init", cwd=tmp_path)
    brain(base, "ingest", here(corpus / "docs" / "readme-lumen.md"), here(corpus / "docs" / "faq-gannet.rst"),
          cwd=ROOT)
    single = tmp_path / "single"
    shutil.copytree(base, single)
    brain(single, "ingest", here(corpus), cwd=ROOT)
    parts = shards(tmp_path, corpus, 3, base)
    target = tmp_path / "merged"
    shutil.copytree(base, target)  # the merge job pulls the base
    fetch_into(target, *parts)
    plan = json.loads(brain(target, "merge", "--plan", *map(head, parts), "--json", cwd=tmp_path).stdout)
    assert plan["ancestor"] == plan["ours"] == head(base)  # the recipe's check: every shard descends from it
    brain(target, "merge", *map(head, parts), "--reason", "3 shards", cwd=tmp_path)
    assert roots(target) == roots(single)
    brain(target, "verify", cwd=tmp_path)


def _note(root: Path, name: str, text: str) -> Path:
    path = root / "docs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_facts_contradicting_across_shards_give_a_plan_that_says_so(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _note(one, "a.md", "# Widget\n\nA widget is a gadget that holds state.\n")
    _note(two, "b.md", "# Widget\n\nA widget is a sprocket that loses state.\n")
    for work in (one, two):
        brain(work / "brain", "init", cwd=work)
        brain(work / "brain", "ingest", "docs", cwd=work)
    target = tmp_path / "merged"
    shutil.copytree(one / "brain", target)
    fetch_into(target, two / "brain")
    before = head(target)
    plan = json.loads(brain(target, "merge", "--plan", head(two / "brain"), "--allow-unrelated", "--json",
                            cwd=tmp_path).stdout)
    # The plan lists every incoming block's verdict; the one that needs an answer is the contradicting fact.
    assert [(v["module"], v["verdict"]) for v in plan["verdicts"] if v["verdict"] != "validated"] == [
        ("semantic", "contradicted")
    ]
    assert {v["module"] for v in plan["verdicts"] if v["verdict"] == "validated"} == {"canonical", "provenance"}
    refused = brain(target, "merge", head(two / "brain"), "--allow-unrelated", "--reason", "shards",
                    cwd=tmp_path, code=5)
    assert "nothing was written" in refused.stderr
    assert head(target) == before and not (target / "boltzmann" / "reconcile.json").exists()


def test_a_shard_of_another_base_is_refused(tmp_path: Path) -> None:
    docs = tmp_path / "work"
    for i in range(4):
        _note(docs, f"n{i}.md", f"# Note {i}\n\nA part{i} is a piece number {i}.\n")
    published = tmp_path / "published"
    brain(published, "init", cwd=docs)
    brain(published, "ingest", "docs/n0.md", cwd=docs)
    old_base = tmp_path / "old-base"
    shutil.copytree(published, old_base)
    brain(published, "ingest", "docs/n1.md", cwd=docs)  # the next published head
    stale, fresh = tmp_path / "stale", tmp_path / "fresh"
    shutil.copytree(old_base, stale)
    brain(stale, "ingest", "docs/n2.md", "--base", head(old_base), cwd=docs)
    shutil.copytree(published, fresh)
    brain(fresh, "ingest", "docs/n3.md", "--base", head(published), cwd=docs)
    # A shard job that pulled the old head cannot claim the new one as its base.
    refused = brain(stale, "ingest", "docs", "--shard", "1/2", "--base", head(published), cwd=docs, code=4)
    assert "--base" in refused.stderr
    target = tmp_path / "merged"
    shutil.copytree(published, target)
    fetch_into(target, stale, fresh)
    # merge refuses heads that do not share one ancestor ...
    mixed = brain(target, "merge", "--plan", head(stale), head(fresh), "--json", cwd=docs, code=5)
    assert "do not share one ancestor" in mixed.stderr
    # ... and the recipe's check refuses a stale shard on its own: its ancestor is not the pulled head.
    alone = json.loads(brain(target, "merge", "--plan", head(stale), "--json", cwd=docs).stdout)
    assert alone["ancestor"] == head(old_base) != alone["ours"]
    ok = json.loads(brain(target, "merge", "--plan", head(fresh), "--json", cwd=docs).stdout)
    assert ok["ancestor"] == ok["ours"] == head(published)


@pytest.mark.parametrize("count", [2, 5])
def test_merges_of_n_shards_verify_and_hold_every_source(
    tmp_path: Path, count: int, single_fixtures_roots: dict[str, str]
) -> None:
    corpus = ROOT / "fixtures"
    parts = shards(tmp_path, corpus, count, None)
    target = tmp_path / "merged"
    shutil.copytree(parts[0], target)
    fetch_into(target, *parts[1:])
    brain(target, "merge", *map(head, parts[1:]), "--allow-unrelated", "--reason", f"{count} shards", cwd=tmp_path)
    brain(target, "verify", cwd=tmp_path)
    assert roots(target) == single_fixtures_roots


def test_identical_files_at_two_origins_in_two_shards_are_named_by_the_plan(tmp_path: Path) -> None:
    """One runner registers the bytes once (the second file is a `duplicate`); two shards each register their
    own, so the merged provenance holds one record more. The plan says so; the other modules equal one runner's."""
    from ingest.shard import shard_of

    work = tmp_path / "work"
    text = "# Gizmo\n\nA gizmo is a device that stores charge.\n"
    _note(work, "a.md", text)
    _note(work, "b.md", text)  # the same bytes at another origin
    _note(work, "c.md", "# Sprocket\n\nA sprocket is a wheel with teeth.\n")
    assert (shard_of("docs/a.md", 2), shard_of("docs/b.md", 2)) == (1, 2)  # they land in two shards
    single = tmp_path / "single"
    brain(single, "init", cwd=work)
    brain(single, "ingest", "docs", cwd=work)
    parts = []
    for i in (1, 2):
        part = tmp_path / f"shard{i}"
        brain(part, "init", cwd=work)
        brain(part, "ingest", "docs", "--shard", f"{i}/2", "--base", "empty", cwd=work)
        parts.append(part)
    target = tmp_path / "merged"
    shutil.copytree(parts[0], target)
    fetch_into(target, parts[1])
    plan = json.loads(brain(target, "merge", "--plan", head(parts[1]), "--allow-unrelated", "--json",
                            cwd=work).stdout)
    [again] = plan["registered_again"]
    assert again["registrations"] == [{"side": "ours", "origin": "docs/a.md"},
                                      {"side": "theirs", "origin": "docs/b.md"}]
    done = brain(target, "merge", head(parts[1]), "--allow-unrelated", "--reason", "2 shards", cwd=work)
    assert "registered by more than one side: 1 source" in done.stdout
    assert "docs/b.md by theirs" in done.stdout
    merged, one = roots(target), roots(single)
    assert {k: v for k, v in merged.items() if k != "provenance"} == {k: v for k, v in one.items() if k != "provenance"}
    assert merged["provenance"] != one["provenance"]
    assert members(target, "provenance") == members(single, "provenance") + 1
    brain(target, "verify", cwd=work)


def members(directory: Path, module: str) -> int:
    document = json.loads((directory / "blobs" / "sha256" / head(directory).removeprefix("sha256:")).read_bytes())
    return int(document["modules"][module]["block_count"])
