"""Brains for the retrieval and serve tests: the fixture corpus ingested once, copied per test."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.main import main
from tests.cli.conftest import (  # noqa: F401
    Run,
    assert_one_line_error,
    brain,
    brain_exe,
    reference_brain,
)

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "fixtures" / "corpus"
ACTOR = "tester@example.org"
PINNED_CLOCK = {"SOURCE_DATE_EPOCH": "1767225600", "NO_COLOR": "1"}


def run_cli(*args: str) -> Run:
    """`brain ARGS` in this process with a pinned clock (for building fixtures outside a test's runner)."""
    saved = {k: os.environ.get(k) for k in PINNED_CLOCK}
    os.environ.update(PINNED_CLOCK)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return Run(code, out.getvalue(), err.getvalue())


def ingest(brain_dir: Path, *paths: Path) -> None:
    """Ingest the directories `paths` into `brain_dir` (creating it), asserting success.

    Each is ingested from inside it, so the default origins (relative to the current directory outside
    a repository) are the paths below it, whichever copy of the corpus is ingested.
    """
    if not brain_dir.exists():
        assert run_cli("--brain", str(brain_dir), "--actor", ACTOR, "init").code == 0
    for path in paths:
        with contextlib.chdir(path):
            done = run_cli("--brain", str(brain_dir.absolute()), "--actor", ACTOR, "--quiet", "ingest", ".")
        assert done.code == 0, done


def copy_brain(source: Path, target: Path) -> Path:
    """A writable copy of a brain directory, without its search index."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("search"))
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target


@pytest.fixture(scope="session")
def corpus_brain_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture corpus ingested with the heuristic proposer (built once per session; do not modify)."""
    work = tmp_path_factory.mktemp("corpus")
    corpus = work / "corpus"  # a copy outside this repository: origins relative to the corpus, as in a copy
    shutil.copytree(CORPUS, corpus)
    ingest(work / "brain", corpus)
    return work / "brain"


@pytest.fixture
def corpus_brain(corpus_brain_master: Path, tmp_path: Path) -> Path:
    """A private copy of the corpus brain."""
    return copy_brain(corpus_brain_master, tmp_path / "brain")


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Callable[[], Path]:
    """Copies the fixture corpus to a fresh directory (for tests that edit sources)."""

    def make() -> Path:
        target = tmp_path / "corpus"
        shutil.copytree(CORPUS, target)
        return target

    return make
