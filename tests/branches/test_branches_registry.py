"""Branches on a real registry: push defaults to the branch's tag, `branch --remote`, pull into branches, narrowing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.registry import RegistryServer, require_tool

pytestmark = pytest.mark.registry
ACTOR = "tester@example.org"
CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"


def make_brain(brain: BrainRunner, where: Path, *texts: str) -> None:
    assert brain("--brain", str(where), "--actor", ACTOR, "init").code == 0
    for n, text in enumerate(texts):
        source = where.parent / f"{where.name}-{n}.md"
        source.write_text(text)
        assert brain("--brain", str(where), "--actor", ACTOR, "ingest", str(source)).code == 0


def run(brain: BrainRunner, where: Path, *args: str):  # type: ignore[no-untyped-def]
    return brain("--brain", str(where), "--actor", ACTOR, *args)


def remote_tags(registry: RegistryServer, repository: str) -> list[str]:
    require_tool("skopeo")
    done = subprocess.run(
        ["skopeo", "list-tags", "--tls-verify=false", f"docker://{registry.host}/{repository}"],
        capture_output=True, text=True, check=True,
    )
    return sorted(json.loads(done.stdout)["Tags"])


def test_push_pull_and_list_branches(brain: BrainRunner, registry: RegistryServer, tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    make_brain(brain, origin, "# One\n\nThe first source.\n")
    repo = f"{registry.host}/branches/demo"
    assert run(brain, origin, "push", repo).code == 0  # main -> latest
    assert run(brain, origin, "branch", "create", "feature/x").code == 0
    assert run(brain, origin, "checkout", "feature/x").code == 0
    (tmp_path / "two.md").write_text("# Two\n\nOnly on the feature branch.\n")
    assert run(brain, origin, "ingest", str(tmp_path / "two.md")).code == 0
    pushed = run(brain, origin, "push", repo, "--json")
    assert pushed.code == 0, pushed.stderr
    assert pushed.json()["tag"] == "br.feature.x"
    assert remote_tags(registry, "branches/demo") == ["br.feature.x", "latest"]
    # A tag that names no branch is not listed.
    assert run(brain, origin, "push", f"{repo}:v1").code == 0

    listed = run(brain, origin, "branch", "--remote", repo, "--json")
    assert listed.code == 0, listed.stderr
    assert listed.json()["branches"] == [
        {"name": "feature/x", "tag": "br.feature.x"}, {"name": "main", "tag": "latest"},
    ]

    # A pull of main into a new brain, then of the feature tag: it switches to that branch (§10.2).
    clone = tmp_path / "clone"
    assert run(brain, clone, "pull", f"{repo}:latest").code == 0
    assert not (clone / "boltzmann" / "refs.json").exists()
    pulled = run(brain, clone, "pull", f"{repo}:br.feature.x", "--json")
    assert pulled.code == 0, pulled.stderr
    assert pulled.json()["switched_to"] == "feature/x"
    refs = json.loads((clone / "boltzmann" / "refs.json").read_bytes())
    assert refs["current"] == "feature/x" and "switching" not in refs
    entry = refs["branches"]["feature/x"]
    assert entry["tag"] == "br.feature.x" and entry["reference"] == f"{repo}:br.feature.x"
    assert entry["origin"]["tag"] == "br.feature.x"
    assert refs["branches"]["main"]["tag"] == "latest"
    infos = {b["name"]: b for b in run(brain, clone, "branch", "--json").json()["branches"]}
    assert infos["feature/x"]["current"] and infos["main"]["behind"] == 1
    assert run(brain, clone, "verify").code == 0
    # A new branch's entry takes the current branch's reference, and no origin (§10.2).
    assert run(brain, clone, "branch", "create", "topic").code == 0
    topic = json.loads((clone / "boltzmann" / "refs.json").read_bytes())["branches"]["topic"]
    assert topic == {"snapshot": entry["snapshot"], "tag": "br.topic", "reference": f"{repo}:br.feature.x"}

    # --branch installs a remote tag as a local branch of any name.
    release = run(brain, clone, "pull", f"{repo}:v1", "--branch", "release", "--json")
    assert release.code == 0, release.stderr
    refs = json.loads((clone / "boltzmann" / "refs.json").read_bytes())
    assert refs["current"] == "release" and refs["branches"]["release"]["tag"] == "v1"
    assert set(refs["branches"]) == {"feature/x", "main", "release", "topic"}

    # Into an empty brain, a branch tag leaves refs.json holding only that branch.
    lone = tmp_path / "lone"
    assert run(brain, lone, "pull", f"{repo}:br.feature.x").code == 0
    refs = json.loads((lone / "boltzmann" / "refs.json").read_bytes())
    assert set(refs["branches"]) == {"feature/x"} and refs["current"] == "feature/x"
    assert run(brain, lone, "verify").code == 0


def test_push_refuses_to_narrow_a_tag(brain: BrainRunner, registry: RegistryServer, tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    assert run(brain, origin, "init").code == 0
    assert run(brain, origin, "ingest", str(CORPUS)).code == 0  # five modules
    repo = f"{registry.host}/branches/narrow"
    assert run(brain, origin, "push", f"{repo}:full").code == 0
    assert run(brain, origin, "pack", "--tag", "few", "--module", "canonical").code == 0
    narrowed = run(brain, origin, "push", f"{repo}:few", "--packed")
    assert narrowed.code == 0, narrowed.stderr  # a new tag: nothing to narrow
    # Publishing the canonical-only artifact over the full tag.
    assert run(brain, origin, "tag", "few", "full", "--force").code == 0
    refused = run(brain, origin, "push", f"{repo}:full", "--packed")
    assert_one_line_error(refused, 5)
    assert "narrow" in refused.stderr
    assert run(brain, origin, "push", f"{repo}:full", "--packed", "--force").code == 5
    allowed = run(brain, origin, "push", f"{repo}:full", "--packed", "--allow-narrowing")
    assert allowed.code == 0, allowed.stderr


def test_remote_listing_errors(brain: BrainRunner, registry: RegistryServer, tmp_path: Path) -> None:
    missing = run(brain, tmp_path / "x", "branch", "--remote", f"{registry.host}/branches/none")
    assert_one_line_error(missing, 4)
    bad = run(brain, tmp_path / "y", "pull", f"{registry.host}/branches/none:latest", "--branch", "a.b")
    assert_one_line_error(bad, 3)  # refused before any request: the registry has no such repository
    assert not (tmp_path / "y").exists()
