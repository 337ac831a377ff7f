"""Issue 12 item 10: `verify --deep` counts, `login` where no login is needed, references without a
repository, and hints that only name commands that exist."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from brain.verify import verify_brain
from cli.app import app
from tests.cli.conftest import (
    BRAIN_EXE,
    BrainRunner,
    Run,
    _environment,
    assert_one_line_error,
)
from tests.registry import RegistryServer

ROOT = Path(__file__).resolve().parents[2]


def test_verify_deep_says_how_many_views_it_renormalized(brain: BrainRunner, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(3):
        (docs / f"note{number}.md").write_text(f"# Note {number}\n\nSome text about item {number}.\n")
    assert brain("init").code == 0
    assert brain("ingest", "docs").code == 0
    deep = brain("verify", "--deep", "--json")
    assert deep.code == 0, deep.stderr
    assert deep.json()["deep"] == {"renormalized": 3, "drifted": 0, "not_rerun": 0}
    shown = brain("verify", "--deep")
    assert "3 view(s) re-normalized, 0 drifted" in shown.stdout
    assert brain("verify", "--json").json()["deep"] is None  # not asked, not claimed


class _Drifting:
    """A pipeline installed at the recorded version whose output changed: every view drifts."""

    def __init__(self, version_of: dict[str, str]) -> None:
        self.version_of = version_of

    def installed_version(self, pipeline: str) -> str | None:
        return self.version_of.get(pipeline)

    def normalize(self, pipeline: str, source: Path) -> bytes:
        return source.read_bytes() + b"\n(changed by a newer build)"


def test_verify_deep_counts_drifted_views(brain: BrainRunner, tmp_path: Path) -> None:
    from brain.brain import Brain

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\ntext\n")
    (docs / "b.md").write_text("# B\n\nmore text\n")
    assert brain("init").code == 0 and brain("ingest", "docs").code == 0
    target = Brain.open(tmp_path / "brain")
    recorded = {r.pipeline: r.pipeline_version for r in target.ledger().normalizations.values() if r.pipeline}
    assert recorded
    report = verify_brain(target, jobs=1, renormalizer=_Drifting(recorded))  # type: ignore[arg-type]
    assert report.deep is not None and report.deep.renormalized == 2 and report.deep.drifted == 2
    assert [p.code for p in report.problems].count("normalization-mismatch") == 2


def _login(host: str, username: str, password: str, config: Path, *extra: str) -> Run:
    done = subprocess.run(
        [str(BRAIN_EXE), "login", host, "--username", username, "--password-stdin", *extra],
        input=password + "\n", env={**_environment(None), "DOCKER_CONFIG": str(config)},
        capture_output=True, text=True, timeout=60, check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def test_login_to_a_registry_that_needs_no_credentials_says_so(registry: RegistryServer, tmp_path: Path) -> None:
    run = _login(registry.host, "someone", "secret", tmp_path / "docker", "--json")
    assert run.code == 0, run.stderr
    assert run.json()["verified"] is False
    people = _login(registry.host, "someone", "secret", tmp_path / "docker")
    assert "needs no credentials" in people.stdout and "Logged in" not in people.stdout


def test_login_to_a_registry_that_checks_credentials_is_logged_in(
    auth_registry: RegistryServer, tmp_path: Path
) -> None:
    assert auth_registry.username is not None and auth_registry.password is not None
    run = _login(auth_registry.host, auth_registry.username, auth_registry.password, tmp_path / "docker", "--json")
    assert run.code == 0, run.stderr
    assert run.json()["verified"] is True
    people = _login(auth_registry.host, auth_registry.username, auth_registry.password, tmp_path / "docker")
    assert people.stdout.startswith("Logged in to")


@pytest.mark.parametrize("reference", ["127.0.0.1:5000", "127.0.0.1:5000/", "ghcr.io", "localhost"])
def test_a_reference_without_a_repository_says_no_repository(brain: BrainRunner, reference: str) -> None:
    run = brain("pull", reference)
    assert_one_line_error(run, 3)
    assert "no repository" in run.stderr and "no registry host" not in run.stderr


def test_a_reference_without_a_host_still_says_no_registry_host(brain: BrainRunner) -> None:
    run = brain("pull", "team-brain:v1")
    assert_one_line_error(run, 3)
    assert "no registry host" in run.stderr


def _registered_commands() -> set[str]:
    import typer

    group = typer.main.get_command(app)
    return set(getattr(group, "commands", {}))


def _hint_texts() -> list[tuple[str, str]]:
    """(file:line, text) of every `hint=` argument in the product code, f-strings included."""
    found: list[tuple[str, str]] = []
    for package in ("brain", "oci", "cli", "ingest"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.keyword) and node.arg == "hint" and node.value is not None:
                    text = "".join(
                        part.value for part in ast.walk(node.value)
                        if isinstance(part, ast.Constant) and isinstance(part.value, str)
                    )
                    found.append((f"{path.relative_to(ROOT)}:{node.value.lineno}", text))
    return found


def test_no_hint_names_a_command_that_does_not_exist() -> None:
    commands = _registered_commands()
    hints = _hint_texts()
    assert len(hints) > 50  # the scan sees the hints
    named = [(where, word) for where, text in hints for word in re.findall(r"`brain ([a-z][a-z-]*)", text)]
    assert named and all(word in commands for _, word in named), [n for n in named if n[1] not in commands]
    # `reconcile` was once named in hints before the command existed; now every hint naming it must spell
    # a real subcommand.
    subcommands = {"status", "resolve", "accept-removals", "continue", "abort"}
    named_reconcile = [w for _, text in hints for w in re.findall(r"`brain reconcile ([a-z-]+)", text)]
    assert all(word in subcommands for word in named_reconcile), named_reconcile
