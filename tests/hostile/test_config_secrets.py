"""Credentials in config values (URLs, commands, env-variable keys) are refused and never echoed (#24 item 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.conftest import BrainRunner, assert_one_line_error

SECRET = "Zq8SECRETvalue"

HOSTILE = [
    f'[ingest]\nproposer = "exec:curl -s http://u:{SECRET}@host.example/x"\n',
    f'[ingest]\nproposer = "exec:curl -s -u alice:{SECRET} https://host.example/x"\n',
    f'[ingest]\nproposer = "exec:curl -H \'Authorization: Bearer {SECRET}\' https://host.example/"\n',
    f'[ingest]\nproposer = "exec:tool --api-key={SECRET} --model m"\n',
    f'[ingest]\nproposer = "exec:tool --password {SECRET}"\n',
    f'[ingest]\nproposer = "openai"\nbase-url = "https://api.example/v1?api_key={SECRET}"\n',
    f'[ingest]\nproposer = "openai"\nbase-url = "https://api.example/v1?x=1&access_token={SECRET}"\n',
    f'[ingest]\nproposer = "openai"\nbase-url = "https://user:{SECRET}@api.example/v1"\n',
    f'[ingest]\nproposer = "openai"\napi-key-env = "sk-proj-{SECRET}0123456789"\n',
    f'[ingest]\nproposer = "openai"\napi-key-env = "{SECRET} with spaces"\n',
    f'[ingest]\nexclude = ["ghp_{SECRET}abcdefghijklmnopqrstu"]\n',
    f'[ingest]\ninclude = ["*.md", "sk-{SECRET}0123456789abcdef"]\n',
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_secret_in_a_value_is_refused_without_echo(
    brain: BrainRunner, tmp_path: Path, shared_brain: Path, text: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "brain.toml").write_text(text)
    commands = (
        [["config", "show"], ["config", "show", "ingest"], ["status"]] if text == HOSTILE[0] else [["config", "show"]]
    )
    for command in commands:
        done = brain("--brain", str(shared_brain), *command, cwd=project)
        assert_one_line_error(done, 3)
        assert SECRET not in done.stderr + done.stdout, done
        assert "brain.toml:" in done.stderr


@pytest.mark.parametrize("value", ["https://api.example/v1", "http://localhost:8080/v1?model=x"])
def test_plain_urls_and_commands_still_pass(brain: BrainRunner, tmp_path: Path, shared_brain: Path,
                                            value: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "brain.toml").write_text(
        f'[ingest]\nproposer = "exec:python3 propose.py --timeout 5"\nbase-url = "{value}"\napi-key-env = '
        '"OPENAI_API_KEY"\n'
    )
    done = brain("--brain", str(shared_brain), "config", "show", cwd=project)
    assert done.code == 0, done
    assert value in done.stdout


def test_api_key_env_given_a_key_is_not_echoed(brain: BrainRunner, tmp_path: Path, shared_brain: Path) -> None:
    (tmp_path / "a.md").write_text("# a\n")
    done = brain("--brain", str(shared_brain), "ingest", str(tmp_path / "a.md"), "--proposer", "openai",
                 "--api-key-env", f"sk-{SECRET}0123456789")
    assert_one_line_error(done, 3)
    assert SECRET not in done.stderr


def test_config_show_masks_a_secret_from_the_environment(
    brain: BrainRunner, tmp_path: Path, shared_brain: Path
) -> None:
    done = brain("--brain", str(shared_brain), "config", "show", "sign", "--json",
                 env={"BRAIN_SIGN_WITH": f"https://u:{SECRET}@keys.example/k"})
    assert done.code == 0, done
    assert SECRET not in done.stdout
