"""Credentials: environment, Docker config (inline, helpers), atomic 0600 storage, secrets never shown."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest

from brain.errors import RemoteError, UsageError
from oci.auth import (
    Credentials,
    credentials_from_config,
    docker_config_path,
    resolve_credentials,
    store_credentials,
)

HOST = "registry.example.org:5000"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("BRAIN_REGISTRY_TOKEN", "BRAIN_REGISTRY_USERNAME", "BRAIN_REGISTRY_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker"))


def _write_config(value: dict) -> Path:
    path = docker_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def test_environment_wins_token_first(monkeypatch: pytest.MonkeyPatch) -> None:
    _write_config({"auths": {HOST: {"auth": base64.b64encode(b"cfg:pw").decode()}}})
    monkeypatch.setenv("BRAIN_REGISTRY_USERNAME", "env-user")
    monkeypatch.setenv("BRAIN_REGISTRY_PASSWORD", "env-pass")
    assert resolve_credentials(HOST) == Credentials("env-user", "env-pass", source="BRAIN_REGISTRY_USERNAME")
    monkeypatch.setenv("BRAIN_REGISTRY_TOKEN", "tok")
    creds = resolve_credentials(HOST)
    assert creds is not None and creds.token == "tok" and creds.basic is None


def test_inline_auth_matched_by_bare_host_or_url() -> None:
    _write_config({"auths": {f"https://{HOST}/v1/": {"auth": base64.b64encode(b"alice:s3cr:et").decode()}}})
    creds = credentials_from_config(HOST)
    assert creds is not None and (creds.username, creds.password) == ("alice", "s3cr:et")
    assert credentials_from_config("other.example.org") is None


def test_secret_not_in_repr() -> None:
    creds = Credentials("alice", "hunter2", token="tok-secret")
    assert "hunter2" not in repr(creds) and "tok-secret" not in repr(creds)


def test_malformed_inline_auth_is_a_usage_error() -> None:
    _write_config({"auths": {HOST: {"auth": "not base64!!"}}})
    with pytest.raises(UsageError, match="not base64"):
        credentials_from_config(HOST)


def _helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, script: str) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    helper = bindir / f"docker-credential-{name}"
    helper.write_text("#!/bin/sh\n" + script)
    helper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")


def test_cred_helper_is_run_with_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _helper(
        tmp_path, monkeypatch, "fake", 'read host; echo "{\\"Username\\":\\"bob\\",\\"Secret\\":\\"for-$host\\"}"\n'
    )
    _write_config({"credHelpers": {HOST: "fake"}})
    creds = credentials_from_config(HOST)
    assert creds is not None and (creds.username, creds.password) == ("bob", f"for-{HOST}")


def test_creds_store_not_found_means_anonymous(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _helper(tmp_path, monkeypatch, "store", "echo 'credentials not found in native keychain'; exit 1\n")
    _write_config({"credsStore": "store"})
    assert credentials_from_config(HOST) is None


def test_missing_helper_is_a_remote_error() -> None:
    _write_config({"credsStore": "definitely-not-installed"})
    with pytest.raises(RemoteError, match="not on PATH"):
        credentials_from_config(HOST)


def test_store_credentials_is_0600_and_keeps_other_keys() -> None:
    path = _write_config({"auths": {"other.example.org": {"auth": "eA=="}}, "credHelpers": {"x.io": "y"}})
    store_credentials(HOST, "alice", "pw")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    config = json.loads(path.read_text())
    assert config["credHelpers"] == {"x.io": "y"}
    assert set(config["auths"]) == {"other.example.org", HOST}
    assert credentials_from_config(HOST) == Credentials("alice", "pw", source=str(path))
    assert [p.name for p in path.parent.iterdir()] == ["config.json"]
