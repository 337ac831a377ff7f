"""Discovery: order, ignore rules, globs, symlinks and the problems it reports."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from brain.errors import NotFoundError, UsageError
from ingest.sources import SourceFile, SourceProblem, discover
from tests.unprivileged import run_unprivileged

REPO = Path(__file__).resolve().parents[2]


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _found(root: Path, *args: list[str], **kwargs: object) -> list[str]:
    return [x.relpath for x in discover(root, *args, **kwargs) if isinstance(x, SourceFile)]  # type: ignore[arg-type]


def _problems(root: Path) -> dict[str, str]:
    return {x.relpath: x.code for x in discover(root, [], []) if isinstance(x, SourceProblem)}


def test_order_is_sorted_by_relpath_even_where_a_dir_sorts_after_a_sibling_file(tmp_path: Path) -> None:
    # "a-c" < "a/b" in string order although the directory "a" < "a-c" by name.
    _tree(tmp_path, {"a/b": "x", "a-c": "x", "a.d": "x", "b/z/y": "x", "B": "x", "a0": "x"})
    found = _found(tmp_path, [], [])
    assert found == sorted(found)
    assert found == ["B", "a-c", "a.d", "a/b", "a0", "b/z/y"]


def test_source_file_fields(tmp_path: Path) -> None:
    _tree(tmp_path, {"notes/a.md": "# hello\n"})
    os.utime(tmp_path / "notes/a.md", ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    (item,) = discover(tmp_path, [], [])
    assert isinstance(item, SourceFile)
    assert item.relpath == "notes/a.md"
    assert item.path == tmp_path / "notes" / "a.md"
    assert (item.size, item.mtime_ns) == (8, 1_700_000_000_123_456_789)


def test_single_file_root(tmp_path: Path) -> None:
    _tree(tmp_path, {"one.txt": "hi"})
    assert _found(tmp_path / "one.txt", [], []) == ["one.txt"]
    assert _found(tmp_path / "one.txt", [], ["*.txt"]) == []


def test_missing_root_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="does not exist"):
        list(discover(tmp_path / "nope", [], []))


def test_git_dirs_and_ignore_files_are_never_sources(tmp_path: Path) -> None:
    _tree(tmp_path, {".git/config": "x", "sub/.git/HEAD": "x", ".brainignore": "", "keep.md": "x"})
    assert _found(tmp_path, [], []) == ["keep.md"]


def test_brainignore_root_and_nested_with_negation(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            ".brainignore": "*.log\nbuild/\n",
            "a.log": "x",
            "a.md": "x",
            "build/out.md": "x",
            "docs/build": "a file named build is not a directory",
            "docs/.brainignore": "!keep.log\ndraft*\n",
            "docs/keep.log": "x",
            "docs/other.log": "x",
            "docs/draft1.md": "x",
            "draft2.md": "nested rules do not apply above their directory",
        },
    )
    assert _found(tmp_path, [], []) == ["a.md", "docs/build", "docs/keep.log", "draft2.md"]


def test_include_and_exclude_globs(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.md": "x", "b.txt": "x", "deep/c.md": "x", "deep/d.pdf": "x", "skip/e.md": "x"})
    assert _found(tmp_path, ["*.md"], []) == ["a.md", "deep/c.md", "skip/e.md"]
    assert _found(tmp_path, ["*.md"], ["skip/"]) == ["a.md", "deep/c.md"]
    assert _found(tmp_path, [], ["deep", "*.txt"]) == ["a.md", "skip/e.md"]
    assert _found(tmp_path, ["deep/**"], []) == ["deep/c.md", "deep/d.pdf"]


def test_skip_prunes_a_directory(tmp_path: Path) -> None:
    _tree(tmp_path, {"brain/blobs/x": "x", "notes.md": "x"})
    assert _found(tmp_path, [], [], skip=[tmp_path / "brain"]) == ["notes.md"]


def test_empty_files_are_reported_not_registered(tmp_path: Path) -> None:
    _tree(tmp_path, {"empty.md": "", "full.md": "x"})
    items = list(discover(tmp_path, [], []))
    assert [type(x).__name__ for x in items] == ["SourceProblem", "SourceFile"]
    assert items[0].code == "empty" and items[0].kind == "skipped"  # type: ignore[union-attr]


def test_symlink_inside_root_is_followed(tmp_path: Path) -> None:
    _tree(tmp_path, {"real/a.md": "x"})
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    (tmp_path / "link.md").symlink_to(tmp_path / "real" / "a.md")
    assert _found(tmp_path, [], []) == ["alias/a.md", "link.md", "real/a.md"]


def test_symlink_leaving_the_root_is_skipped(tmp_path: Path) -> None:
    _tree(tmp_path, {"outside/secret.md": "x", "root/a.md": "x"})
    (tmp_path / "root" / "out").symlink_to(tmp_path / "outside")
    assert _problems(tmp_path / "root") == {"out": "symlink-outside-root"}
    assert _found(tmp_path / "root", [], []) == ["a.md"]


def test_symlink_loops_are_reported_and_terminate(tmp_path: Path) -> None:
    _tree(tmp_path, {"d/a.md": "x"})
    (tmp_path / "d" / "up").symlink_to(tmp_path)
    (tmp_path / "self").symlink_to(tmp_path / "self")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    assert _problems(tmp_path) == {"d/up": "symlink-loop", "self": "symlink-loop", "dangling": "broken-symlink"}
    problems = [x for x in discover(tmp_path, [], []) if isinstance(x, SourceProblem)]
    assert all(x.kind == "failure" for x in problems)


def test_fifo_is_not_regular(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.txt")
    assert _problems(tmp_path) == {"pipe.txt": "not-regular"}


_PROBLEMS_AS_JSON = (
    "import json, sys; from ingest.sources import SourceProblem, discover; "
    "print(json.dumps({x.relpath: x.code for x in discover(sys.argv[1], [], []) if isinstance(x, SourceProblem)}))"
)


def test_unreadable_file_and_directory(tmp_path: Path) -> None:
    # Discovery runs without root's power over modes (tests/unprivileged.py): root reads every file whatever its mode.
    _tree(tmp_path, {"locked.md": "x", "closed/a.md": "x"})
    (tmp_path / "locked.md").chmod(0)
    (tmp_path / "closed").chmod(0)
    try:
        done = run_unprivileged([sys.executable, "-c", _PROBLEMS_AS_JSON, str(tmp_path)], cwd=tmp_path,
                                env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"closed": "unreadable", "locked.md": "unreadable"}
    finally:
        (tmp_path / "closed").chmod(0o755)


def test_file_vanishing_mid_run_is_reported(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.md": "x", "b/c.md": "x", "d.md": "x"})
    seen = []
    for item in discover(tmp_path, [], []):
        seen.append((item.relpath, getattr(item, "code", "ok")))
        if item.relpath == "a.md":
            (tmp_path / "b" / "c.md").unlink()
            (tmp_path / "b").rmdir()
            (tmp_path / "d.md").unlink()
    assert seen[0] == ("a.md", "ok")
    assert ("d.md", "vanished") in seen
    assert any(code == "vanished" for rel, code in seen if rel.startswith("b"))


def test_non_utf8_file_name_is_reported(tmp_path: Path) -> None:
    name = os.fsdecode(b"bad\xff.md")
    try:
        (tmp_path / name).write_text("x")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this filesystem refuses non-UTF-8 names")
    (problem,) = discover(tmp_path, [], [])
    assert isinstance(problem, SourceProblem) and problem.code == "bad-name"
    assert problem.relpath == "bad\\xff.md"


def test_bad_brainignore_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / ".brainignore").write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(UsageError, match=r"\.brainignore"):
        list(discover(tmp_path, [], []))


def test_an_unreadable_directory_is_one_problem_not_the_end_of_the_run() -> None:
    """Once, probing `closed/.brainignore` raised EACCES and ended the whole ingest as a usage error."""
    import json
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="brain-discover-"))
    try:
        root.chmod(0o755)
        _tree(root, {"closed/a.md": "x", "open/b.md": "x"})
        (root / "open").chmod(0o755)
        (root / "open" / "b.md").chmod(0o644)
        (root / "closed").chmod(0)
        # Root reads everything: walk in a forked child that drops to an unprivileged user.
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through the pipe and leaves with os._exit
            try:
                if os.geteuid() == 0:
                    os.setgid(65534)
                    os.setuid(65534)
                found = [[x.relpath, getattr(x, "code", "ok")] for x in discover(root, [], [])]
                os.write(writer, json.dumps(found).encode())
                os._exit(0)
            except BaseException as e:  # noqa: BLE001 - any failure is the test's answer
                os.write(writer, json.dumps(repr(e)).encode())
                os._exit(1)
        os.close(writer)
        with os.fdopen(reader, "rb") as pipe:
            answer = json.loads(pipe.read() or b'"no answer"')
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, answer
        assert answer == [["closed", "unreadable"], ["open/b.md", "ok"]]
    finally:
        (root / "closed").chmod(0o755)
        shutil.rmtree(root)
