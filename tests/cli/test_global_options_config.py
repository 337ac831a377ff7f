"""Global options anywhere on the command line, the project config file, its precedence table, completion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.config import find_config, key_lines, looks_like_secret
from tests.cli.conftest import BrainRunner, assert_one_line_error


def _settings(run_json: dict, command: str = "") -> dict[str, tuple[object, str]]:
    return {row["option"]: (row["value"], row["source"]) for row in run_json["settings"] if row["command"] == command}


def _first_registration(brain: BrainRunner, *options: str) -> dict:
    (canonical,) = brain(*options, "ls", "--type", "canonical", "--json").json()
    return brain(*options, "show", canonical["block_id"], "--json").json()["ledger"]["registration"]


# -- global options anywhere ---------------------------------------------------------------------------


def test_global_options_after_the_command(brain: BrainRunner, tmp_path: Path) -> None:
    done = brain("init", "-q", "--brain", str(tmp_path / "b"), "--actor", "ci@example.org")
    assert done.code == 0, done
    assert done.stderr == ""
    status = brain("status", "--brain", str(tmp_path / "b"), "--json")
    assert status.code == 0, status
    assert status.json()["snapshot"] is None
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Title\n\nThe sky is blue.\n")
    ingested = brain("ingest", str(docs), "--actor", "curator@example.org", "--brain", str(tmp_path / "b"), "--json")
    assert ingested.code == 0, ingested
    assert _first_registration(brain, "--brain", str(tmp_path / "b"))["actor"]["id"] == "curator@example.org"


def test_command_flag_beats_root_flag(brain: BrainRunner, tmp_path: Path) -> None:
    done = brain("--brain", "one", "config", "show", "--brain", "two", "--json")
    assert done.code == 0, done
    assert _settings(done.json())["brain"] == ("two", "flag --brain")


def test_global_option_value_is_checked_after_the_command(brain: BrainRunner) -> None:
    assert_one_line_error(brain("status", "--lock-timeout", "-1"), 3)
    assert_one_line_error(brain("status", "--color", "sometimes"), 3)


# -- the config file ------------------------------------------------------------------------------------


def test_brain_toml_is_found_upwards_and_paths_are_relative_to_it(brain: BrainRunner, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub" / "deeper").mkdir(parents=True)
    (project / "brain.toml").write_text('brain = "store"\nactor = "ci@example.org"\n')
    assert brain("init", cwd=project / "sub" / "deeper").code == 0
    assert (project / "store" / "oci-layout").is_file()
    shown = brain("config", "show", "--json", cwd=project / "sub" / "deeper").json()
    assert shown["file"] == str(project / "brain.toml")
    assert _settings(shown)["brain"] == (str(project / "store"), f"config {project / 'brain.toml'}:1")
    assert _settings(shown)["actor"] == ("ci@example.org", f"config {project / 'brain.toml'}:2")


def test_pyproject_tool_brain_table(brain: BrainRunner, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.brain]\nbrain = "kb"\n\n[tool.brain.status]\njson = true\n'
    )
    assert brain("init", "--actor", "ci@example.org").code == 0
    assert (tmp_path / "kb").is_dir()
    status = brain("status")
    assert status.code == 0, status
    assert json.loads(status.stdout)["snapshot"] is None  # [tool.brain.status] json = true
    shown = brain("config", "show", "--json").json()
    assert _settings(shown)["brain"][1] == f"config {tmp_path / 'pyproject.toml'}:5"


def test_a_pyproject_without_tool_brain_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "brain.toml").write_text("")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(inner) == tmp_path / "brain.toml"


def test_config_option_and_env_override_discovery(brain: BrainRunner, tmp_path: Path) -> None:
    (tmp_path / "brain.toml").write_text('brain = "found"\n')
    other = tmp_path / "elsewhere" / "ci.toml"
    other.parent.mkdir()
    other.write_text('brain = "from-env"\n')
    explicit = tmp_path / "explicit.toml"
    explicit.write_text('brain = "from-flag"\n')
    assert _settings(brain("config", "show", "--json").json())["brain"][0] == str(tmp_path / "found")
    env = {"BRAIN_CONFIG": str(other)}
    assert _settings(brain("config", "show", "--json", env=env).json())["brain"][0] == str(other.parent / "from-env")
    # --config anywhere on the line, even after the command, beats $BRAIN_CONFIG.
    shown = brain("config", "show", "--json", "--config", str(explicit), env=env).json()
    assert shown["file"] == str(explicit)
    assert _settings(shown)["brain"][0] == str(tmp_path / "from-flag")


# flag > environment > config file > built-in default, for a global option with an environment variable.
PRECEDENCE = [
    # (flag, environment, config) -> expected value and source
    ("f", "e", "c", ("f", "flag --brain")),
    (None, "e", "c", ("e", "environment $BRAIN_DIR")),
    (None, None, "c", ("{dir}/c", "config {dir}/brain.toml:1")),
    (None, None, None, ("brain", "default")),
    ("f", None, "c", ("f", "flag --brain")),
    ("f", "e", None, ("f", "flag --brain")),
]


@pytest.mark.parametrize(("flag", "env", "config", "expected"), PRECEDENCE)
def test_precedence_table(
    brain: BrainRunner, tmp_path: Path, flag: str | None, env: str | None, config: str | None, expected: tuple[str, str]
) -> None:
    if config is not None:
        (tmp_path / "brain.toml").write_text(f'brain = "{config}"\n')
    args = ["config", "show", "--json"] + (["--brain", flag] if flag else [])
    shown = brain(*args, env={"BRAIN_DIR": env} if env else None)
    assert shown.code == 0, shown
    value, source = expected
    assert _settings(shown.json())["brain"] == (value.format(dir=tmp_path), source.format(dir=tmp_path))


@pytest.mark.parametrize(
    ("flag", "config", "expected"),
    [("Apache-2.0", "MIT", "Apache-2.0"), (None, "MIT", "MIT"), (None, None, None)],
)
def test_command_option_precedence_end_to_end(
    brain: BrainRunner, tmp_path: Path, flag: str | None, config: str | None, expected: str | None
) -> None:
    """A command's own option: flag > config file > default, observed in what ingest records."""
    text = 'actor = "ci@example.org"\n' + (f'[ingest]\nlicense = "{config}"\n' if config else "")
    (tmp_path / "brain.toml").write_text(text)
    (tmp_path / "doc.md").write_text("# Doc\n\nWater boils at 100 degrees.\n")
    assert brain("init").code == 0
    args = ["ingest", "doc.md"] + (["--license", flag] if flag else [])
    assert brain(*args).code == 0
    assert _first_registration(brain).get("license") == expected


def test_global_option_in_a_command_table_applies_to_that_command_only(brain: BrainRunner, tmp_path: Path) -> None:
    (tmp_path / "brain.toml").write_text("lock-timeout = 5\n[status]\nlock-timeout = 60\n")
    root = _settings(brain("config", "show", "--json").json())
    assert root["lock-timeout"][0] == 5
    by_command = brain("config", "show", "status", "--json").json()
    assert _settings(by_command, "status")["lock-timeout"][0] == 60
    # An explicit root flag beats the command's table.
    flagged = _settings(brain("--lock-timeout", "1", "config", "show", "--json").json())
    assert flagged["lock-timeout"] == (1.0, "flag --lock-timeout")


# -- bad config files: one line, file:line, exit 3, nothing written --------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('brain = "x"\nthis is not toml\n', "brain.toml:2: not valid TOML"),
        ('brain = "x"\n\n[ingest]\nlicence = "MIT"\n', "brain.toml:4: unknown key 'licence' in [ingest]"),
        ("[pussh]\nreference = 'x'\n", "brain.toml:1: unknown command 'pussh'"),
        ('lock-timeout = "soon"\n', "brain.toml:1: lock-timeout: expected a number, got a string"),
        ("[ingest]\nconcurrency = 0\n", "brain.toml:2: concurrency:"),
        ('[ingest]\ninclude = ["*.md", 3]\n', "brain.toml:2: include: expected a string"),
        ("[ingest]\nstrict = \"yes\"\n", "brain.toml:2: strict: expected true or false"),
        ('[login]\npassword = "hunter2"\n', "brain.toml:2: 'password' looks like a secret"),
        ('[ingest]\napi-key = "sk-abc"\n', "brain.toml:2: 'api-key' looks like a secret"),
        ('token = "abc"\n', "brain.toml:1: 'token' looks like a secret"),
        ('[ingest]\nbase-url = "https://user:pw@example.org/v1"\n', "brain.toml:2: 'base-url' looks like a secret"),
        ('config = "other.toml"\n', "brain.toml:1: unknown key 'config'"),
    ],
)
def test_bad_config_is_one_clear_line(brain: BrainRunner, tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "brain.toml").write_text(text)
    done = brain("init", "--brain", "b", "--actor", "ci@example.org")
    assert_one_line_error(done, 3)
    assert message in done.stderr, done.stderr
    assert not (tmp_path / "b").exists()


def test_secret_references_are_fine() -> None:
    assert not looks_like_secret("api-key-env", "OPENAI_API_KEY")
    assert not looks_like_secret("password-stdin", True)
    assert not looks_like_secret("base-url", "https://api.example.org/v1")
    assert looks_like_secret("github_token", "x")


def test_key_lines_follow_tables_dotted_keys_and_skip_multiline_strings() -> None:
    text = 'a = 1\n[ingest]\ninstructions = """\nfake = 2\n"""\nlicense = "MIT"\n[tool.brain.push]\nx.y = 3\n'
    lines = key_lines(text)
    assert lines[("a",)] == 1
    assert lines[("ingest", "license")] == 6
    assert ("ingest", "fake") not in lines
    assert lines[("tool", "brain", "push", "x", "y")] == 8


def test_missing_explicit_config_is_an_error(brain: BrainRunner) -> None:
    done = brain("--config", "nope.toml", "status")
    assert_one_line_error(done, 3)
    assert "nope.toml does not exist" in done.stderr


# -- colour and output formats ---------------------------------------------------------------------------


def test_color_always_colours_a_pipe_and_never_or_no_color_does_not(brain_exe: BrainRunner, tmp_path: Path) -> None:
    env = {k: "" for k in ("NO_COLOR",)}
    coloured = brain_exe("status", "--brain", "nowhere", "--color", "always", env=env)
    assert "\x1b[" in coloured.stderr
    plain = brain_exe("status", "--brain", "nowhere", env=env)
    assert "\x1b[" not in plain.stderr
    assert "\x1b[" not in brain_exe("status", "--brain", "nowhere", "--color", "never", env=env).stderr
    # NO_COLOR is the conftest default: auto stays plain even though FORCE_COLOR-like terminals are absent.
    assert "\x1b[" not in brain_exe("status", "--brain", "nowhere").stderr


def test_output_markdown_and_json(brain: BrainRunner, reference_brain: Path) -> None:
    markdown = brain("--brain", str(reference_brain), "tags", "--output", "markdown")
    assert markdown.code == 0, markdown
    lines = markdown.stdout.splitlines()
    assert lines[0] == "| tag | manifest | size |"
    assert lines[1] == "| --- | --- | --- |"
    assert lines[2].startswith("| v1 | sha256:")
    as_json = brain("--brain", str(reference_brain), "tags", "--output", "json")
    assert as_json.json() == brain("--brain", str(reference_brain), "tags", "--json").json()


# -- shell completion -------------------------------------------------------------------------------------


def test_show_completion_prints_a_script(brain_exe: BrainRunner) -> None:
    done = brain_exe("--show-completion", env={"BRAIN_COMPLETION_SHELL": "zsh"})
    assert done.code == 0, done
    assert "_BRAIN_COMPLETE" in done.stdout and "compdef" in done.stdout
    from_login_shell = brain_exe("--show-completion", env={"SHELL": "/usr/bin/fish"}, cwd=None)
    assert from_login_shell.code == 0, from_login_shell
    assert "complete --command brain" in from_login_shell.stdout or "_BRAIN_COMPLETE" in from_login_shell.stdout
    unknown = brain_exe("--show-completion", env={"BRAIN_COMPLETION_SHELL": "tcsh"})
    assert_one_line_error(unknown, 3)


def test_install_completion_writes_the_shell_rc(brain_exe: BrainRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = brain_exe("--install-completion", env={"HOME": str(home), "BRAIN_COMPLETION_SHELL": "bash"})
    assert done.code == 0, done
    assert (home / ".bash_completions" / "brain.sh").is_file()
    assert "brain.sh" in (home / ".bashrc").read_text()


def test_completion_offers_commands_and_global_options_after_the_command(brain_exe: BrainRunner) -> None:
    commands = brain_exe(env={"_BRAIN_COMPLETE": "complete_bash", "COMP_WORDS": "brain sta", "COMP_CWORD": "1"})
    assert commands.stdout.split() == ["status"]
    options = brain_exe(env={"_BRAIN_COMPLETE": "complete_bash", "COMP_WORDS": "brain status --bra", "COMP_CWORD": "2"})
    assert options.stdout.split() == ["--brain"]



def test_arguments_come_from_the_config_too(brain: BrainRunner, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nOne fact.\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "brain.toml").write_text('brain = "kb"\nactor = "ci@example.org"\n[ingest]\npaths = ["docs"]\n')
    assert brain("init", cwd=tmp_path / "sub").code == 0
    done = brain("ingest", "--json", cwd=tmp_path / "sub")  # PATH from the config, relative to its directory
    assert done.code == 0, done
    assert done.json()["registered"] == 1
    shown = brain("config", "show", "ingest", "--json", cwd=tmp_path / "sub").json()
    assert _settings(shown, "ingest")["paths"] == ([str(tmp_path / "docs")], f"config {tmp_path / 'brain.toml'}:4")
