"""Files the user names are read only if they are regular files of bounded size (#24 item 9).

A FIFO must not hang, the zero device must not grow memory, a directory must not be skipped silently:
each is exit 3 with one line naming the file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.hostile.conftest import BrainRunner, assert_one_line_error

KINDS = ["fifo", "zero", "directory", "big"]


def _refused(done, path: Path) -> None:  # type: ignore[no-untyped-def]
    assert_one_line_error(done, 3)
    assert str(path) in done.stderr.splitlines()[0], done.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_config_option(guarded: BrainRunner, hostile_files: dict[str, Path], shared_brain: Path, kind: str) -> None:
    path = hostile_files[kind]
    _refused(guarded("--config", str(path), "--brain", str(shared_brain), "status"), path)


@pytest.mark.parametrize("kind", KINDS)
def test_config_from_the_environment(
    guarded: BrainRunner, hostile_files: dict[str, Path], shared_brain: Path, kind: str
) -> None:
    path = hostile_files[kind]
    _refused(guarded("--brain", str(shared_brain), "status", env={"BRAIN_CONFIG": str(path)}), path)


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_discovered_brain_toml_that_is_not_a_file_is_an_error(
    guarded: BrainRunner, tmp_path: Path, shared_brain: Path, kind: str
) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    target = project / "brain.toml"
    if kind == "fifo":
        import os

        os.mkfifo(target)
    else:
        target.mkdir()
    done = guarded("--brain", str(shared_brain), "status", cwd=project / "sub")
    _refused(done, target)


@pytest.mark.parametrize("kind", KINDS)
def test_serve_token_file(guarded: BrainRunner, hostile_files: dict[str, Path], shared_brain: Path, kind: str) -> None:
    path = hostile_files[kind]
    _refused(guarded("--brain", str(shared_brain), "serve", "--http", "127.0.0.1:0", "--token-file", str(path)), path)


@pytest.mark.parametrize("kind", KINDS)
def test_serve_tokens_file(guarded: BrainRunner, hostile_files: dict[str, Path], shared_brain: Path, kind: str) -> None:
    path = hostile_files[kind]
    _refused(guarded("--brain", str(shared_brain), "serve", "--http", "127.0.0.1:0", "--tokens", str(path)), path)


@pytest.mark.parametrize("kind", KINDS)
def test_init_trust_root(guarded: BrainRunner, hostile_files: dict[str, Path], tmp_path: Path, kind: str) -> None:
    path = hostile_files[kind]
    _refused(guarded("--brain", str(tmp_path / "new"), "--actor", "a@example.org", "init", "--trust-root", str(path)),
             path)


@pytest.mark.parametrize("kind", KINDS)
def test_init_trust_key_file(guarded: BrainRunner, hostile_files: dict[str, Path], tmp_path: Path, kind: str) -> None:
    path = hostile_files[kind]
    done = guarded("--brain", str(tmp_path / "new"), "--actor", "a@example.org", "init", "--trust-key", str(path),
                   "--sign-with", str(path))
    _refused(done, path)


@pytest.mark.parametrize("kind", KINDS)
def test_signing_key(guarded: BrainRunner, hostile_files: dict[str, Path], shared_brain: Path, kind: str) -> None:
    path = hostile_files[kind]
    _refused(guarded("--brain", str(shared_brain), "sign", "--sign-with", str(path)), path)


@pytest.mark.parametrize("kind", KINDS)
def test_signed_document_and_plan(
    guarded: BrainRunner, hostile_files: dict[str, Path], shared_brain: Path, kind: str
) -> None:
    path = hostile_files[kind]
    key = Path(__file__).parent / "no-such-key"
    _refused(guarded("--brain", str(shared_brain), "sign", "--document", str(path), "--sign-with", str(key)), path)
    _refused(guarded("--brain", str(shared_brain), "trust", "rotate", "--apply", str(path)), path)


@pytest.mark.parametrize("kind", KINDS)
def test_docker_config(
    guarded: BrainRunner, hostile_files: dict[str, Path], shared_brain: Path, tmp_path: Path, kind: str
) -> None:
    path = hostile_files[kind]
    home = tmp_path / "docker-home"
    home.mkdir()
    config = home / "config.json"
    if kind == "zero":
        config.symlink_to(path)
    elif kind == "directory":
        config.mkdir()
        path = config
    else:
        shutil.move(str(path), config)
        path = config
    done = guarded("--brain", str(shared_brain), "logout", "127.0.0.1:5999", env={"DOCKER_CONFIG": str(home)})
    _refused(done, config if kind == "zero" else path)


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_ignore_files(guarded: BrainRunner, hostile_files: dict[str, Path], tmp_path: Path, kind: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nsome text\n")
    (docs / ".brainignore").symlink_to(hostile_files[kind])
    brain_dir = tmp_path / "b"
    assert guarded("--brain", str(brain_dir), "--actor", "a@example.org", "init").code == 0
    done = guarded("--brain", str(brain_dir), "--actor", "a@example.org", "ingest", str(docs), "--license", "MIT")
    _refused(done, docs / ".brainignore")
