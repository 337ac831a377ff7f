"""Discovery honours `.gitignore` as git does (checked against `git` itself on real repositories) and never
descends into virtualenvs, other brains or tool caches."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from brain.brain import Brain
from brain.errors import UsageError
from ingest.sources import SourceFile, discover
from ingest.sources.ignore import CACHE_DIRECTORIES
from tests.ingest.test_sources_discover import _tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    # No global or system configuration: a user's core.excludesFile must not change the answer.
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": str(repo)}
    done = subprocess.run(
        ["git", *args], cwd=repo, input=stdin, capture_output=True, text=True, env=env, check=False, timeout=60
    )
    assert done.returncode in (0, 1), done.stderr  # check-ignore exits 1 when nothing is ignored
    return done.stdout


def _repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q")
    return _tree(root, files)


def _found(root: Path, **kwargs: object) -> list[str]:
    return [x.relpath for x in discover(root, **kwargs) if isinstance(x, SourceFile)]  # type: ignore[arg-type]


def _git_sources(repo: Path, under: str = "") -> list[str]:
    """What git calls untracked and not ignored (relative to `under`), minus the ignore files themselves."""
    listed = _git(repo, "ls-files", "--others", "--exclude-standard", "-z", *([under] if under else []))
    paths = [p.removeprefix(under) for p in listed.split("\0") if p]
    return sorted(p for p in paths if p.rpartition("/")[2] != ".gitignore")


def _all_files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    )


def _git_ignored(repo: Path, paths: list[str]) -> set[str]:
    """The paths `git check-ignore` calls ignored (it also applies the rules of their parent directories)."""
    return set(_git(repo, "check-ignore", "--stdin", "-z", stdin="\0".join(paths)).split("\0")) - {""}


NESTED = {
    ".gitignore": "*.log\n/build/\ndocs/**/draft-*\n!important.log\n# a comment\n\\#literal.md\ntrailing.md   \n",
    "a.md": "x",
    "a.log": "x",
    "important.log": "x",
    "#literal.md": "x",
    "trailing.md": "x",
    "build/out.md": "x",
    "src/build/kept.md": "/build/ is anchored to the root",
    "docs/draft-1.md": "x",
    "docs/deep/draft-2.md": "x",
    "docs/guide.md": "x",
    "docs/.gitignore": "!keep.log\n*.tmp\nprivate/\n",
    "docs/keep.log": "re-included by the nested file",
    "docs/note.tmp": "x",
    "docs/private/secret.md": "x",
    "docs/sub/.gitignore": "!*.tmp\n",
    "docs/sub/kept.tmp": "a deeper negation wins",
    "notes/x.tmp": "docs/.gitignore does not apply here",
    "vendor/lib/readme.md": "x",
    "vendor/.gitignore": "*\n!*/\n!*.md\n",
    "vendor/lib/code.c": "x",
}


def test_nested_gitignores_and_negations_agree_with_git(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", NESTED)
    found = _found(repo)
    assert found == _git_sources(repo)
    candidates = [p for p in _all_files(repo) if not p.endswith(".gitignore")]
    assert set(candidates) - set(found) == _git_ignored(repo, candidates)
    assert "docs/keep.log" in found and "docs/sub/kept.tmp" in found and "src/build/kept.md" in found
    assert "a.log" not in found and "build/out.md" not in found and "docs/deep/draft-2.md" not in found


def test_a_root_below_the_repository_applies_the_gitignores_above_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", NESTED)
    assert _found(repo / "docs") == _git_sources(repo, "docs/")
    assert _found(repo / "docs" / "sub") == _git_sources(repo, "docs/sub/")


def test_info_exclude_counts_and_a_gitignore_negation_overrides_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", {"a.md": "x", "b.md": "x", "c.md": "x", ".gitignore": "!c.md\n"})
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("b.md\nc.md\n")
    assert _found(repo) == _git_sources(repo) == ["a.md", "c.md"]


def test_no_ignore_turns_git_rules_off_but_not_brainignore(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", {".gitignore": "*.log\n", ".brainignore": "*.tmp\n", "a.log": "x", "b.tmp": "x"})
    assert _found(repo) == []
    assert _found(repo, vcs_ignore=False) == ["a.log"]


def test_brainignore_negation_reincludes_what_git_ignores(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path / "repo", {".gitignore": "generated/\n", ".brainignore": "!generated/\n", "generated/api.md": "x"}
    )
    assert _found(repo) == ["generated/api.md"]


def test_gitignore_outside_a_repository_is_not_read(tmp_path: Path) -> None:
    # ripgrep's default: .gitignore rules belong to git work trees.
    root = _tree(tmp_path / "plain", {".gitignore": "*.log\n", "a.log": "x"})
    assert _found(root) == ["a.log"]


def test_a_nested_repository_does_not_inherit_the_outer_rules(tmp_path: Path) -> None:
    outer = _repo(tmp_path / "outer", {".gitignore": "*.log\n", "a.log": "x"})
    inner = _repo(
        outer / "inner", {"b.log": "the outer *.log stops at inner/.git", ".gitignore": "*.tmp\n", "c.tmp": "x"}
    )
    assert _found(outer) == ["inner/b.log"]
    assert _found(inner) == _git_sources(inner) == ["b.log"]


def test_an_ignored_root_named_explicitly_is_walked_with_the_rules_for_its_files(tmp_path: Path) -> None:
    # As ripgrep: `build/` keeps git from entering build, but the user named it; `*.log` still applies inside.
    repo = _repo(tmp_path / "repo", {".gitignore": "build/\n*.log\n", "build/a.md": "x", "build/b.log": "x"})
    assert _found(repo) == []
    assert _found(repo / "build") == ["a.md"]
    assert _found(repo / "build" / "b.log") == ["b.log"]  # a file named explicitly is always a source


def test_a_linked_worktree_reads_the_common_info_exclude(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main", {"a.md": "x"})
    _git(main, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x")
    _git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("*.secret\n")
    worktree = _tree(tmp_path / "wt", {"x.secret": "x", "y.md": "x"})
    assert (worktree / ".git").is_file()
    assert _found(worktree) == _git_sources(worktree) == ["y.md"]


def test_virtualenvs_brains_and_tool_caches_are_never_entered(tmp_path: Path) -> None:
    root = _tree(
        tmp_path / "project",
        {
            "README.md": "x",
            "env/pyvenv.cfg": "home = /usr/bin\n",
            "env/lib/site.md": "x",
            "conda/conda-meta/history": "x",
            "node_modules/pkg/README.md": "x",
            "src/__pycache__/m.md": "x",
            ".hypothesis/examples/x": "x",
            ".venv/README.md": "no pyvenv.cfg, skipped by name",
            "docs/.mypy_cache/x.md": "x",
            "docs/guide.md": "x",
        },
    )
    Brain.init(root / "other-brain")
    assert _found(root) == ["README.md", "docs/guide.md"]
    # Named explicitly, a directory is walked (its own caches are still skipped).
    assert _found(root / "env") == ["lib/site.md", "pyvenv.cfg"]
    assert {".venv", "__pycache__", "node_modules", ".hypothesis", ".tox", ".mypy_cache"} <= CACHE_DIRECTORIES


# Random rule sets over a fixed tree, each compared with git: the rules git users write, mixed.
_TREE = [
    "a.md", "a.log", "b.txt", "doc/a.md", "doc/b.log", "doc/x/a.md", "doc/x/c.tmp", "doc/x/y/z.md",
    "src/a.md", "src/doc/b.md", "src/doc/c.log", "build/a.md", "build/x/b.md", "x/doc/a.tmp",
]  # fmt: skip
_PATTERNS = [
    "*.log", "!*.log", "*.tmp", "!c.tmp", "doc/", "/doc/", "!doc/", "doc/*", "doc/**", "!doc/x/",
    "**/x/", "x/", "/build", "build/*", "!build/x/", "a.md", "!a.md", "/a.md", "doc/**/*.md", "!doc/x/y/",
    "*.md", "!*/", "src/doc", "**/a.*", "z.md", "!**/z.md", "[ab].md", "?.log", "doc/**/z.md", "*/a.md",
    "!src/**", "x/*/", "b.*", "!/build/a.md",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(32))
def test_random_rule_sets_agree_with_git(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    directories = sorted({p.rpartition("/")[0] for p in _TREE if "/" in p} | {""})
    files: dict[str, str] = {p: "x" for p in _TREE}
    for directory in rng.sample(directories, k=rng.randint(1, 3)):
        lines = rng.sample(_PATTERNS, k=rng.randint(1, 4))
        files[f"{directory}/.gitignore".lstrip("/")] = "\n".join(lines) + "\n"
    repo = _repo(tmp_path / "repo", files)
    assert _found(repo) == _git_sources(repo), {k: v for k, v in files.items() if k.endswith(".gitignore")}


def test_a_broken_gitignore_line_is_skipped_as_git_does_but_a_broken_brainignore_is_an_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", {"a.log": "x", "b.md": "x", "c.tmp": "x"})
    (repo / ".gitignore").write_bytes(b"[z-a]\n!\n*.log\n\xff\xfe.tmp\n")  # two non-patterns, one non-UTF-8 line
    assert _found(repo) == _git_sources(repo) == ["b.md", "c.tmp"]
    (repo / ".brainignore").write_text("[z-a]\n")
    with pytest.raises(UsageError, match=r"\.brainignore"):
        _found(repo)


def test_another_brain_named_as_the_root_is_refused(tmp_path: Path) -> None:
    Brain.init(tmp_path / "other")
    with pytest.raises(UsageError, match="is a brain directory"):
        _found(tmp_path / "other")

