"""docs/ci.md runs: its YAML is parsed, its shell steps are run in order against the real (authenticated)
registry, for a pull request and then a push to main, on GitHub Actions' and GitLab CI's recipes."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from cli.app import app
from tests.registry import RegistryServer, require_tool

pytestmark = [pytest.mark.registry, pytest.mark.slow]
DOC = Path(__file__).resolve().parents[2] / "docs" / "ci.md"
BIN = Path(sys.executable).parent
EXAMPLE_REPOSITORY = "registry.example.org/docs/handbook-brain"
EXAMPLE_USER = "ci-bot"
SHA = "0123456789abcdef0123456789abcdef01234567"
DOCS = {
    "docs/install.md": "# Install\n\nThe installer requires Python 3.11 or newer.\n",
    "docs/keys.md": "# Keys\n\n## Rotate the key\n\n1. Generate a new key.\n2. Add it to the trust root.\n",
}


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def _github() -> dict[str, Any]:
    (workflow,) = [yaml.safe_load(b) for b in _blocks("yaml") if "jobs:" in b and "--shard" not in b]
    return workflow


def _gitlab() -> dict[str, Any]:
    (pipeline,) = [yaml.safe_load(b) for b in _blocks("yaml") if "brain:publish:" in b]
    return pipeline


@dataclass(frozen=True)
class Step:
    name: str
    script: str
    env: dict[str, str]


# -- what a CI runner would do, for the parts of the recipes the test runs -------------------------------


def _github_condition(expression: str, event: str, ref: str) -> bool:
    """`a == 'x' && b == 'y'` over github.event_name and github.ref (the forms docs/ci.md uses)."""
    values = {"github.event_name": event, "github.ref": ref}
    result = True
    for clause in expression.split("&&"):
        match = re.fullmatch(r"\s*([\w.]+)\s*==\s*'([^']*)'\s*", clause)
        assert match, f"docs/ci.md: condition the test cannot evaluate: {expression!r}"
        result = result and values[match.group(1)] == match.group(2)
    return result


def _gitlab_condition(expression: str, variables: dict[str, str]) -> bool:
    match = re.fullmatch(r'\s*\$(\w+)\s*==\s*(?:"([^"]*)"|\$(\w+))\s*', expression)
    assert match, f"docs/ci.md: rule the test cannot evaluate: {expression!r}"
    expected = match.group(2) if match.group(2) is not None else variables.get(match.group(3), "")
    return variables.get(match.group(1), "") == expected


def _substitute(text: str, secrets: dict[str, str], github: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name.startswith("secrets."):
            return secrets[name.removeprefix("secrets.")]
        return github[name]

    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", value, text)


def github_steps(event: str, ref: str, secrets: dict[str, str], github: dict[str, str]) -> list[Step]:
    """The run: steps the `brain` job executes for `event` (uses: steps and the install step excepted)."""
    workflow = _github()
    (job,) = workflow["jobs"].values()
    steps = []
    for step in job["steps"]:
        if "uses" in step:
            continue
        assert "run" in step, step
        if "pip install" in step["run"]:
            continue  # the test's environment is the installed package
        if "if" in step and not _github_condition(step["if"], event, ref):
            continue
        env = {
            k: _substitute(str(v), secrets, github)
            for k, v in {**workflow.get("env", {}), **step.get("env", {})}.items()
        }
        steps.append(Step(step.get("name", step["run"][:40]), step["run"], env))
    return steps


def gitlab_steps(job_name: str, variables: dict[str, str]) -> list[Step]:
    """`before_script` (from `extends`) then `script` of a GitLab job, one step per line (API calls excepted)."""
    pipeline = _gitlab()
    job = pipeline[job_name]
    base = pipeline[job["extends"]] if "extends" in job else {}
    rules = job.get("rules", [])
    assert any(_gitlab_condition(rule["if"], variables) for rule in rules), f"{job_name} would not run"
    env = {**pipeline.get("variables", {}), **variables}
    lines = [*base.get("before_script", []), *job["script"]]
    return [Step(line[:60], line, env) for line in lines if "pip install" not in line and "$CI_API_V4_URL" not in line]


# -- running them -------------------------------------------------------------------------------------------


def missing_features(script: str) -> list[str]:
    """`brain` subcommands and options a step uses that this build does not have."""
    root = typer.main.get_command(app)
    missing = []
    for line in script.replace("\\\n", " ").splitlines():
        for segment in re.split(r"\|\||&&|[|;]", line):
            try:
                words = shlex.split(segment)
            except ValueError:
                continue
            if not words or words[0] != "brain":
                continue
            names = [w for w in words[1:] if not w.startswith("-")]
            name = names[0] if names else None
            command = root.commands.get(name or "")  # type: ignore[attr-defined]
            if command is None:
                missing.append(f"brain {name}")
                continue
            for sub in names[1:]:  # a group (`brain reconcile accept-removals`): its subcommand's options
                if not hasattr(command, "commands") or sub not in command.commands:
                    break
                command, name = command.commands[sub], f"{name} {sub}"
            known = {opt for param in command.params for opt in getattr(param, "opts", [])}
            missing += [
                f"brain {name} {w.split('=')[0]}" for w in words if w.startswith("--") and w.split("=")[0] not in known
            ]
    return missing


def run_steps(steps: list[Step], checkout: Path, base_env: dict[str, str]) -> None:
    for step in steps:
        absent = missing_features(step.script)
        assert not absent, f"docs/ci.md step {step.name!r} uses what brain does not have: {absent}"
        env = {**base_env, **step.env}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step.script],
            cwd=checkout, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"step {step.name!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


def skopeo_digest(registry: RegistryServer, reference: str) -> str | None:
    done = subprocess.run(
        [require_tool("skopeo"), "inspect", "--raw", "--tls-verify=false",
         f"--creds={registry.username}:{registry.password}", f"docker://{reference}"],
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    return "sha256:" + hashlib.sha256(done.stdout).hexdigest() if done.returncode == 0 else None


@dataclass
class Setting:
    checkout: Path
    env: dict[str, str]
    ref: str
    key: Path


@pytest.fixture
def ci(tmp_path: Path, auth_registry: RegistryServer) -> Setting:
    """A docs repository checkout with the recipe's brain.toml, a CI key, and a published first brain."""
    checkout = tmp_path / "checkout"
    for name, text in DOCS.items():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_text(text)
    (toml,) = _blocks("toml")
    (checkout / "brain.toml").write_text(toml)
    key = tmp_path / "ci-signing-key"
    subprocess.run(
        [shutil.which("ssh-keygen") or "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", str(key)],
        check=True,
    )
    shutil.copy(key.with_suffix(".pub"), checkout / "ci-signing-key.pub")
    maintainer = tmp_path / "maintainer-key"
    subprocess.run(
        [shutil.which("ssh-keygen") or "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "m", "-f", str(maintainer)],
        check=True,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRAIN_", "GITHUB_", "CI_"))}
    env.update({
        "PATH": f"{BIN}:{env.get('PATH', '')}", "HOME": str(tmp_path / "home"),
        "DOCKER_CONFIG": str(tmp_path / "docker"),
        "NO_COLOR": "1", "RUNNER_TEMP": str(tmp_path / "runner-temp"), "GITHUB_SHA": SHA,
    })  # fmt: skip
    (tmp_path / "runner-temp").mkdir()
    ref = auth_registry.ref(f"docs/handbook-{uuid.uuid4().hex[:8]}:latest")  # a repository per test
    bootstrap_env = {
        **env, "BRAIN_REF": ref, "MAINTAINER_KEY": str(maintainer),
        "BRAIN_REGISTRY_USERNAME": auth_registry.username or "",
        "BRAIN_REGISTRY_PASSWORD": auth_registry.password or "",
    }  # fmt: skip
    (bootstrap,) = [b for b in _blocks("sh") if b.startswith("# ci: bootstrap")]
    run_steps([Step("bootstrap", bootstrap, {})], checkout, bootstrap_env)
    shutil.rmtree(checkout / "brain")  # a CI job starts from a fresh checkout, without the brain directory
    return Setting(checkout, env, ref, key)


def _values(setting: Setting, auth_registry: RegistryServer, text: str) -> str:
    repository = setting.ref.rsplit(":", 1)[0]
    return text.replace(EXAMPLE_REPOSITORY, repository).replace(EXAMPLE_USER, auth_registry.username or "")


def _fresh(setting: Setting) -> None:
    shutil.rmtree(setting.checkout / "brain", ignore_errors=True)
    (setting.checkout / "brain-diff.md").unlink(missing_ok=True)


def test_github_actions_recipe(ci: Setting, auth_registry: RegistryServer) -> None:
    secrets = {"BRAIN_REGISTRY_PASSWORD": auth_registry.password or "", "BRAIN_SIGNING_KEY": ci.key.read_text().strip()}
    published = skopeo_digest(auth_registry, ci.ref)
    assert published is not None

    # A pull request adds a document: the diff names it, nothing is pushed.
    (ci.checkout / "docs" / "faq.md").write_text("# FAQ\n\nThe brain is rebuilt on every push to main.\n")
    steps = github_steps("pull_request", "refs/pull/7/merge", secrets, {})
    for step in steps:
        step.env.update({k: _values(ci, auth_registry, v) for k, v in step.env.items()})
    run_steps(steps, ci.checkout, ci.env)
    comment = (ci.checkout / "brain-diff.md").read_text()
    assert "faq.md" in comment and "|" in comment
    assert skopeo_digest(auth_registry, ci.ref) == published

    # The merge to main: signed and pushed, `latest` moves, the commit's tag is immutable.
    _fresh(ci)
    steps = github_steps("push", "refs/heads/main", secrets, {})
    for step in steps:
        step.env.update({k: _values(ci, auth_registry, v) for k, v in step.env.items()})
    run_steps(steps, ci.checkout, ci.env)
    moved = skopeo_digest(auth_registry, ci.ref)
    assert moved is not None and moved != published
    release = ci.ref.rsplit(":", 1)[0] + ":" + SHA[:12]
    assert skopeo_digest(auth_registry, release) == moved
    _consumer_check(ci, auth_registry, release)


def test_gitlab_ci_recipe(ci: Setting, auth_registry: RegistryServer) -> None:
    variables = {
        "BRAIN_REGISTRY_PASSWORD": auth_registry.password or "", "BRAIN_SIGNING_KEY": str(ci.key),
        "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_SHORT_SHA": SHA[:8],
    }  # fmt: skip
    published = skopeo_digest(auth_registry, ci.ref)
    (ci.checkout / "docs" / "keys.md").unlink()  # a merge request deletes a document: --sync drops it
    check = gitlab_steps("brain:check", {**variables, "CI_PIPELINE_SOURCE": "merge_request_event"})
    run_steps(
        [Step(s.name, s.script, {k: _values(ci, auth_registry, v) for k, v in s.env.items()}) for s in check],
        ci.checkout, ci.env,
    )
    assert "keys.md" in (ci.checkout / "brain-diff.md").read_text()
    assert skopeo_digest(auth_registry, ci.ref) == published

    _fresh(ci)
    publish = gitlab_steps("brain:publish", {**variables, "CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main"})
    run_steps(
        [Step(s.name, s.script, {k: _values(ci, auth_registry, v) for k, v in s.env.items()}) for s in publish],
        ci.checkout, ci.env,
    )
    moved = skopeo_digest(auth_registry, ci.ref)
    assert moved is not None and moved != published
    release = ci.ref.rsplit(":", 1)[0] + ":" + SHA[:8]
    assert skopeo_digest(auth_registry, release) == moved
    _consumer_check(ci, auth_registry, release)


def _consumer_check(ci: Setting, auth_registry: RegistryServer, release: str) -> None:
    """An agent pulls the release into a new directory and verifies it; pushing the same tag again is refused."""
    env = {
        **ci.env, "BRAIN_REGISTRY_USERNAME": auth_registry.username or "",
        "BRAIN_REGISTRY_PASSWORD": auth_registry.password or "",
    }
    consumer = ci.checkout.parent / "consumer"
    consumer.mkdir(exist_ok=True)
    pulled = subprocess.run([str(BIN / "brain"), "--brain", "kb", "pull", release], cwd=consumer, env=env,
                            capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert pulled.returncode == 0, pulled.stderr
    verified = subprocess.run([str(BIN / "brain"), "--brain", "kb", "verify"], cwd=consumer, env=env,
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_the_recipes_parse_and_name_every_step_the_issue_asks_for() -> None:
    workflow = _github()
    (job,) = workflow["jobs"].values()
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    for needed in (
        "brain pull", "brain ingest --sync --strict", "brain verify", "--format markdown", "brain sign", "brain push",
    ):
        assert needed in runs, needed
    assert any("secrets.BRAIN_SIGNING_KEY" in str(step.get("env", {})) for step in job["steps"])
    pipeline = _gitlab()
    scripts = "\n".join(line for job in pipeline.values() if isinstance(job, dict) for line in job.get("script", []))
    for needed in ("brain ingest --sync --strict", "brain verify", "--format markdown", "brain sign", "brain push"):
        assert needed in scripts, needed
