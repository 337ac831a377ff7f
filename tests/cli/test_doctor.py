"""`brain doctor` against real things: the test registry (anonymous and authenticated), a loopback
OpenAI-compatible endpoint through the real `openai` client, ssh-keygen keys, the real file system."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import BrainRunner
from tests.registry import RegistryServer
from tests.loopback import LoopbackServer


def _statuses(done: Any) -> dict[str, str]:
    return {c["check"]: c["status"] for c in done.json()["checks"]}


@pytest.fixture
def models_endpoint() -> Iterator[str]:
    """`GET /v1/models` on 127.0.0.1 listing one model; 401 without the right key."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.headers.get("Authorization") != "Bearer sk-doctor":
                status, body = 401, {"error": {"message": "bad key"}}
            else:
                status, body = (
                    200, {"object": "list", "data": [{"id": "tiny", "object": "model", "created": 0, "owned_by": "x"}]},
                )
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = LoopbackServer(Handler).start()
    yield f"http://127.0.0.1:{server.port}/v1"
    server.close()


@pytest.mark.registry
def test_doctor_all_green_from_the_config_file(
    brain: BrainRunner, tmp_path: Path, registry: RegistryServer, models_endpoint: str
) -> None:
    key = tmp_path / "signing"
    subprocess.run(
        [shutil.which("ssh-keygen") or "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True
    )
    (tmp_path / "brain.toml").write_text(
        f'actor = "ci@example.org"\n[push]\nreference = "{registry.ref("doctor/brain:v1")}"\n'
        f'[ingest]\nproposer = "openai"\nmodel = "tiny"\nbase-url = "{models_endpoint}"\napi-key-env = "DOCTOR_KEY"\n'
    )
    assert brain("init").code == 0
    env = {"DOCTOR_KEY": "sk-doctor", "DOCKER_CONFIG": str(tmp_path / "docker")}
    done = brain("doctor", "--sign-with", str(key), "--json", env=env)
    assert done.code == 0, done
    assert _statuses(done) == {
        "brain": "ok", "disk": "ok", "actor": "ok", "registry": "ok", "proposer": "ok", "signing key": "ok",
    }  # fmt: skip
    assert "sk-doctor" not in done.stdout + done.stderr


@pytest.mark.registry
def test_doctor_says_what_to_fix(
    brain: BrainRunner, tmp_path: Path, auth_registry: RegistryServer, models_endpoint: str
) -> None:
    bad_key = tmp_path / "not-a-key"
    bad_key.write_text("hello\n")
    bad_key.chmod(0o600)
    env = {"DOCTOR_KEY": "sk-wrong", "DOCKER_CONFIG": str(tmp_path / "docker")}
    (tmp_path / "brain.toml").write_text(
        f'[ingest]\nproposer = "openai"\nbase-url = "{models_endpoint}"\napi-key-env = "DOCTOR_KEY"\n'
    )
    done = brain(
        "doctor", "--registry", auth_registry.ref("doctor/brain"), "--sign-with", str(bad_key), "--json", env=env
    )
    assert done.code == 1, done
    statuses = _statuses(done)
    assert statuses["registry"] == "fail" and statuses["proposer"] == "fail" and statuses["signing key"] == "fail"
    assert statuses["brain"] == "warn"  # no brain yet: a warning with the command that makes one
    fixes = {c["check"]: c["fix"] for c in done.json()["checks"]}
    assert "brain login" in fixes["registry"]
    assert fixes["proposer"] and fixes["signing key"]
    unset = brain("doctor", "--json", env={"DOCKER_CONFIG": str(tmp_path / "docker")})
    assert {c["check"]: c["detail"] for c in unset.json()["checks"]}["proposer"] == "DOCTOR_KEY is not set"


def test_doctor_signs_with_the_key_and_reads_its_scopes_from_the_trust_root(brain: BrainRunner, tmp_path: Path) -> None:
    keygen = shutil.which("ssh-keygen") or "ssh-keygen"
    for name in ("ci", "stranger"):
        subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(tmp_path / name)], check=True)
    init = brain("init", "--actor", "ci@example.org", "--trust-key", f"{tmp_path / 'ci'}.pub=ingest,commit,govern",
                 "--sign-with", str(tmp_path / "ci"))  # fmt: skip
    assert init.code == 0, init
    checks = {c["check"]: c for c in brain("doctor", "--sign-with", str(tmp_path / "ci"), "--json").json()["checks"]}
    assert checks["signing key"]["status"] == "ok"
    assert "the trust root grants ingest, commit, govern" in checks["signing key"]["detail"]
    other = {
        c["check"]: c for c in brain("doctor", "--sign-with", str(tmp_path / "stranger"), "--json").json()["checks"]
    }
    assert "does not list it" in other["signing key"]["detail"]
