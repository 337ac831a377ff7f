"""The acting identity: explicit, then git user.email when valid, then $USER@localhost.localdomain."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from brain.brain import Brain
from brain.errors import InvalidInputError, LockTimeoutError, UsageError
from brain.identity import actor_id_problem
from cli.context import CliContext
from sdk.actor import resolve_actor


@pytest.fixture
def no_git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cwd outside any repository and an empty global git config."""
    config = tmp_path / "gitconfig"
    config.write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return config


def _set_git_email(config: Path, email: str) -> None:
    subprocess.run(["git", "config", "--file", str(config), "user.email", email], check=True)


def test_explicit_actor_is_validated_not_lowercased() -> None:
    assert resolve_actor("curator@example.org") == "curator@example.org"
    with pytest.raises(InvalidInputError, match="uppercase"):
        resolve_actor("Curator@example.org")


def test_valid_git_email_is_the_default(no_git_identity: Path) -> None:
    _set_git_email(no_git_identity, "alex@example.org")
    assert resolve_actor(None) == "alex@example.org"


def test_invalid_git_email_falls_back_to_user_at_localdomain(
    no_git_identity: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _set_git_email(no_git_identity, "Alex@Example.org")
    monkeypatch.setenv("USER", "alex")
    actor = resolve_actor(None)
    assert actor == "alex@localhost.localdomain"
    assert actor_id_problem(actor) is None


def test_no_valid_default_asks_for_actor(no_git_identity: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "Alex Smith")
    with pytest.raises(UsageError, match="no valid actor id") as caught:
        resolve_actor(None)
    assert caught.value.hint is not None and "--actor" in caught.value.hint


def test_actor_is_resolved_lazily_once(no_git_identity: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "Alex Smith")
    context = CliContext(actor_option=None)  # an unusable default costs nothing until a command writes
    with pytest.raises(UsageError):
        context.actor()
    assert CliContext(actor_option="org/curator").actor() == "org/curator"


def test_what_commands_hand_the_library_waits_and_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Commands never take the writer lock: they pass the validated actor, --lock-timeout and the wait note
    # to the library use case, which takes it (here the writer, as every use case does).
    brain = Brain.init(tmp_path / "b")
    context = CliContext(actor_option="curator@example.org", lock_timeout=0.2)
    with brain.writer("holder@example.org"):
        with pytest.raises(LockTimeoutError, match="gave up after 0.2s"):
            with brain.writer(context.actor(), context.lock_timeout, context.wait_note()):
                pass
    assert capsys.readouterr().err.startswith("waiting for writer pid")
    with brain.writer(context.actor(), context.lock_timeout, context.wait_note()) as writer:
        assert writer.actor == "curator@example.org"
    with pytest.raises(InvalidInputError):
        CliContext(actor_option="Curator@example.org").actor()
