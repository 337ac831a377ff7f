"""`brain ingest` as a newcomer meets it (issue 12, items 5-7), end to end through the CLI: origins that do
not collide, a project folder ingested without its virtualenv, caches or ignored files, and a report whose
numbers agree with each other and whose default output stays short."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from brain.brain import Brain
from tests.cli.conftest import BrainRunner
from tests.cli.test_ingest_cli_replace import _write

ACTOR = "curator@example.org"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    return _write(root, files)


def _ingest(brain: BrainRunner, brain_dir: Path, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    run = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", *args, "--json", cwd=cwd)
    assert run.code == 0, run
    return run.json()  # type: ignore[no-any-return]


def _origins(brain_dir: Path) -> list[str]:
    ledger = Brain.open(brain_dir).ledger()
    return sorted(r.origin for r in ledger.registrations.values() if r.origin is not None)


@needs_git
def test_two_readmes_keep_their_own_origins_from_any_directory(brain: BrainRunner, tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "repo", {"a/README.md": "# A\n\nAlpha is a letter.\n", "b/README.md": "# B\n\nBeta.\n"})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    _ingest(brain, brain_dir, "a/README.md", cwd=repo)
    second = _ingest(brain, brain_dir, "README.md", cwd=repo / "b")  # from inside b/: still repository-relative
    assert (second["registered"], second["replaced"]) == (1, 0), second
    assert _origins(brain_dir) == ["a/README.md", "b/README.md"]


@needs_git
def test_a_fresh_checkout_elsewhere_names_every_source_the_same(brain: BrainRunner, tmp_path: Path) -> None:
    """CI pulls the brain and re-ingests its own checkout: nothing is new, nothing is replaced."""
    repo = _git_repo(tmp_path / "laptop" / "project", {"docs/guide.md": "# Guide\n\nA shard is a slice.\n"})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    _ingest(brain, brain_dir, "docs", cwd=repo)
    ci = tmp_path / "ci" / "checkout"
    shutil.copytree(repo, ci)
    again = _ingest(brain, brain_dir, str(ci / "docs"), cwd=tmp_path)  # another path, another directory
    assert (again["registered"], again["replaced"], again["unchanged"]) == (0, 0, 1), again
    assert again["outcomes"][0]["origin"] == "docs/guide.md"
    assert _origins(brain_dir) == ["docs/guide.md"]


def test_outside_a_repository_origins_are_relative_to_the_current_directory(
    brain: BrainRunner, tmp_path: Path
) -> None:
    work = _write(tmp_path / "work", {"notes/a.md": "# A\n\nAlpha.\n"})
    elsewhere = _write(tmp_path / "elsewhere", {"b.md": "# B\n\nBeta.\n"})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    _ingest(brain, brain_dir, "notes", str(elsewhere / "b.md"), cwd=work)
    assert _origins(brain_dir) == [str(elsewhere / "b.md"), "notes/a.md"]  # outside the cwd: absolute


def test_the_report_says_when_a_source_replaces_another_files_version(brain: BrainRunner, tmp_path: Path) -> None:
    root = _write(tmp_path / "src", {"a/README.md": "# A\n\nAlpha.\n", "b/README.md": "# B\n\nBeta.\n"})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    _ingest(brain, brain_dir, str(root / "a/README.md"), "--origin", "README.md")
    run = brain(
        "--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root / "b/README.md"), "--origin", "README.md"
    )
    assert run.code == 0, run
    assert f"note: origin README.md was registered from {root / 'a/README.md'}" in run.stdout, run.stdout
    # The same bytes re-ingested from their own path replace nothing and say nothing.
    (root / "b/README.md").write_text("# B\n\nBeta, revised.\n")
    os.utime(root / "b/README.md", (1, 1))
    again = _ingest(brain, brain_dir, str(root / "b/README.md"), "--origin", "README.md")
    assert again["replaced"] == 1 and "replaced-other-path" not in again["problems_by_code"], again


def test_a_file_replacing_its_own_version_gets_no_note_even_with_a_copy_elsewhere(
    brain: BrainRunner, tmp_path: Path
) -> None:
    text = "# A\n\nAlpha is a letter.\n"
    root = _write(tmp_path / "src", {"a.md": text, "copy/a.md": text})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    assert _ingest(brain, brain_dir, str(root))["duplicate"] == 1
    (root / "a.md").write_text(text + "\nAlpha is first.\n")
    os.utime(root / "a.md", (1, 1))
    again = _ingest(brain, brain_dir, str(root))
    assert again["replaced"] == 1 and "replaced-other-path" not in again["problems_by_code"], again


@needs_git
def test_a_project_folder_ingests_its_documents_only(brain: BrainRunner, tmp_path: Path) -> None:
    repo = _git_repo(
        tmp_path / "project",
        {
            ".gitignore": "*.log\n/site/\n",
            "README.md": "# Project\n\nA project is a plan.\n",
            "docs/guide.md": "# Guide\n\nA guide is a text.\n",
            "docs/.gitignore": "drafts/\n",
            "docs/drafts/wip.md": "ignored by the nested .gitignore",
            "debug.log": "ignored",
            "site/index.html": "<p>generated</p>",
            "node_modules/pkg/README.md": "a dependency",
            "src/__pycache__/notes.md": "a cache",
            ".hypothesis/examples/x.md": "a cache",
            "tox-env/pyvenv.cfg": "home = /usr/bin\n",
            "tox-env/lib/README.md": "a virtualenv without the usual name",
        },
    )
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    Brain.init(repo / "vendored-brain")
    brain_dir = repo / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    result = _ingest(brain, brain_dir, ".", "--dry-run", cwd=repo)
    assert [o["origin"] for o in result["outcomes"]] == ["README.md", "docs/guide.md"], result["outcomes"]
    unignored = _ingest(brain, brain_dir, ".", "--dry-run", "--no-ignore", cwd=repo)
    assert [o["origin"] for o in unignored["outcomes"]] == [
        "README.md", "debug.log", "docs/drafts/wip.md", "docs/guide.md", "site/index.html",
    ]  # fmt: skip


# Every source gets one candidate that fails two checks (a type not invited, and a payload no schema takes).
TWO_ISSUES = textwrap.dedent(
    """
    import json, sys
    request = json.load(sys.stdin)
    source = request["task"]["source"]
    bad = {"memory_type": "episodic", "payload": {"summary": 7}, "evidence": [source]}
    json.dump({"schema_version": "boltzmann.candidates/v1", "candidates": [bad]}, sys.stdout)
    """
)


def test_rejected_equals_the_sum_of_rejected_by_code(brain: BrainRunner, tmp_path: Path) -> None:
    root = _write(tmp_path / "src", {f"n{i}.md": f"# N{i}\n\nnote {i}\n" for i in range(3)})
    script = _write(tmp_path, {"two_issues.py": TWO_ISSUES}) / "two_issues.py"
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    proposer = f"exec:{sys.executable} {script}"
    data = _ingest(brain, brain_dir, str(root), "--proposer", proposer, "--allow", "semantic")
    assert data["rejected"] == 3 == sum(data["rejected_by_code"].values()), data["rejected_by_code"]
    issues = [p["code"] for o in data["outcomes"] for p in o["problems"] if p["kind"] == "rejection"]
    assert len(issues) > 3 and {
        p["candidate"] for o in data["outcomes"] for p in o["problems"] if p["kind"] == "rejection"
    } == {0}


def test_identical_copies_count_the_same_whatever_the_checkpoint_interval(brain: BrainRunner, tmp_path: Path) -> None:
    files = {
        "a.md": "# Same\n\nA copy is a copy.\n", "b/a.md": "# Same\n\nA copy is a copy.\n", "c.md": "# C\n\nOther.\n",
    }
    statuses = []
    for interval in ([], ["--checkpoint", "1"]):
        root = _write(tmp_path / f"src{len(interval)}", files)
        brain_dir = tmp_path / f"brain{len(interval)}"
        assert brain("--brain", str(brain_dir), "init").code == 0
        data = _ingest(brain, brain_dir, str(root), *interval)
        statuses.append(([o["status"] for o in data["outcomes"]], data["duplicate"], data["blocks_added"]))
    assert statuses[0] == statuses[1] and statuses[0][:2] == (["registered", "duplicate", "registered"], 1)


def test_the_progress_bar_ends_on_the_blocks_added(brain_exe: BrainRunner, tmp_path: Path) -> None:
    root = _write(tmp_path / "src", {f"n{i}.md": f"# N{i}\n\nA thing{i} is a note.\n" for i in range(5)})
    brain_dir = tmp_path / "brain"
    assert brain_exe("--brain", str(brain_dir), "init").code == 0
    run = brain_exe("--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--checkpoint", "2")
    assert run.code == 0, run
    summary = next(line for line in run.stdout.splitlines() if line.startswith("proposed "))
    added = int(summary.split("; ")[1].split()[0])
    assert added > 5  # the final checkpoint's facts are counted too
    assert run.stderr.splitlines()[-1].endswith(f", {added} blocks added"), run.stderr


def test_default_output_counts_per_code_and_verbose_lists_every_problem(brain: BrainRunner, tmp_path: Path) -> None:
    root = _write(tmp_path / "src", {f"n{i:02}.md": f"# N{i}\n\nnote {i}\n" for i in range(12)})
    script = _write(tmp_path, {"two_issues.py": TWO_ISSUES}) / "two_issues.py"
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    args = ["--actor", ACTOR, "ingest", str(root), "--proposer", f"exec:{sys.executable} {script}"]
    quiet = brain("--brain", str(brain_dir), *args, "--allow", "semantic")
    assert quiet.code == 0, quiet
    lines = quiet.stdout.splitlines()
    assert len(lines) <= 8, quiet.stdout
    assert "rejected by code: memory-type-not-allowed 12" in lines
    assert "  memory-type-not-allowed: src/n00.md, src/n01.md, src/n02.md and 9 more" in lines
    other = tmp_path / "other-brain"
    assert brain("--brain", str(other), "init").code == 0
    verbose = brain("--brain", str(other), *args, "--allow", "semantic", "--verbose")
    rows = [line for line in verbose.stdout.splitlines() if " validate " in line]
    assert len(rows) == 24 and rows[0].startswith("src/n00.md"), verbose.stdout  # two problems per source


@needs_git
def test_sync_of_one_folder_covers_the_origins_below_it_only(brain: BrainRunner, tmp_path: Path) -> None:
    """`ingest docs --sync` in a brain without the local index (CI after a pull) leaves README.md alone."""
    repo = _git_repo(
        tmp_path / "project",
        {"README.md": "# Project\n\nA project is a plan.\n", "docs/guide.md": "# Guide\n\nA guide is a text.\n",
         "docs/old.md": "# Old\n\nAn old page is a page.\n"},
    )  # fmt: skip
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    _ingest(brain, brain_dir, ".", cwd=repo)
    (repo / "docs" / "old.md").unlink()
    (brain_dir / "boltzmann" / "fingerprints.json").unlink()  # as in a fresh CI checkout of a pulled brain
    synced = _ingest(brain, brain_dir, "docs", "--sync", cwd=repo)
    assert [m["origin"] for m in synced["missing"]] == ["docs/old.md"], synced["missing"]
    assert _origins(brain_dir) == ["README.md", "docs/guide.md", "docs/old.md"]  # registrations stay in the ledger
    listed = brain("--brain", str(brain_dir), "ls", "--type", "canonical", "--json").json()
    assert sorted(m["title"].split(" ")[0] for m in listed) == ["README.md", "docs/guide.md"]



def _current_canonical(brain: BrainRunner, brain_dir: Path) -> list[str]:
    listed = brain("--brain", str(brain_dir), "ls", "--type", "canonical", "--json").json()
    return sorted(m["title"].split(" (")[0] for m in listed)


def test_a_changed_file_replaces_its_own_version_when_its_default_origin_moved(
    brain: BrainRunner, tmp_path: Path
) -> None:
    """Outside a repository the default origin follows the current directory; the same file changed and
    ingested from elsewhere replaces its own previous version (the index knows the path), with a note."""
    work = _write(tmp_path / "work", {"notes/a.md": "# A\n\nAlpha is a letter.\n", "notes/b.md": "# B\n\nBeta.\n"})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    _ingest(brain, brain_dir, "notes", cwd=work)
    (work / "notes" / "a.md").write_text("# A\n\nAlpha is the first letter.\n")
    os.utime(work / "notes" / "a.md", (1, 1))
    moved = _ingest(brain, brain_dir, ".", cwd=work / "notes")
    outcome = next(o for o in moved["outcomes"] if o["origin"] == "a.md")
    assert outcome["status"] == "replaced", moved
    (note,) = [p for p in outcome["problems"] if p["kind"] == "note"]
    assert note["code"] == "origin-changed" and "registered as notes/a.md" in note["detail"]
    assert _current_canonical(brain, brain_dir) == ["a.md", "notes/b.md"]  # b.md unchanged keeps its origin


def test_a_changed_duplicate_or_an_explicit_origin_replaces_nothing(brain: BrainRunner, tmp_path: Path) -> None:
    text = "# A\n\nAlpha is a letter.\n"
    work = _write(tmp_path / "work", {"a.md": text, "copy/a.md": text, "c.md": "# C\n\nGamma.\n"})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    _ingest(brain, brain_dir, ".", cwd=work)
    (work / "copy" / "a.md").write_text(text + "\nAlpha is first.\n")
    os.utime(work / "copy" / "a.md", (1, 1))
    again = _ingest(brain, brain_dir, ".", cwd=work)
    copy = next(o for o in again["outcomes"] if o["origin"] == "copy/a.md")
    assert copy["status"] == "registered" and again["replaced"] == 0, again  # a.md still holds the old bytes
    (work / "c.md").write_text("# C\n\nGamma is third.\n")
    os.utime(work / "c.md", (1, 1))
    explicit = _ingest(brain, brain_dir, "c.md", "--origin", "https://example.org/c", cwd=work)
    assert explicit["registered"] == 1 and explicit["replaced"] == 0, explicit
    assert _current_canonical(brain, brain_dir) == ["a.md", "c.md", "copy/a.md", "https://example.org/c"]


@needs_git
def test_a_run_that_finds_nothing_says_why(brain: BrainRunner, tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "repo", {".gitignore": "*\n", "notes/a.md": "# A\n\nAlpha.\n"})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    run = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", "notes", cwd=repo)
    assert run.code == 0 and "warning: no source found under notes" in run.stderr and "--no-ignore" in run.stderr, run
    assert _ingest(brain, brain_dir, "notes", "--no-ignore", cwd=repo)["registered"] == 1
