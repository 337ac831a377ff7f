"""Issue 24 item 1: the brain's identity decides, not the spelling of the registry reference.

Once a brain is governed or has been seen signed, a head that does not authenticate against its trust root
is refused (exit 6, head unchanged) whatever the REF: another spelling of the host (`localhost` for
`127.0.0.1`), another repository, `--force`. A different trust root is a foreign chain unless the user runs
`pull --re-root`, which is logged. Run against the real registry; manifests checked with skopeo.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from brain.brain import Brain
from oci.reference import parse_reference
from tests.authn.keys import write_key
from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.registry import RegistryServer, require_tool

pytestmark = pytest.mark.registry
ACTOR = "publisher@example.org"


def _alias(registry: RegistryServer, name: str) -> str:
    port = registry.host.rsplit(":", 1)[1]
    return f"localhost:{port}/{name}"


def _ingest(tmp_path: Path, brain: BrainRunner, source: Path, key: Path | None, text: str) -> None:
    docs = tmp_path / f"docs-{source.name}"
    docs.mkdir(exist_ok=True)
    (docs / f"{len(list(docs.iterdir()))}.txt").write_text(text)
    args = ["--brain", str(source), "--actor", ACTOR, "ingest", str(docs)] + (["--sign-with", str(key)] if key else [])
    done = brain(*args)
    assert done.code == 0, done


def _governed(tmp_path: Path, brain: BrainRunner, name: str, text: str) -> tuple[Path, Path]:
    key = write_key(tmp_path, name)
    source = tmp_path / f"{name}-brain"
    assert brain("--brain", str(source), "init", "--trust-key", f"{key}.pub@{ACTOR}", "--sign-with", str(key)).code == 0
    _ingest(tmp_path, brain, source, key, text)
    return source, key


def _push(brain: BrainRunner, source: Path, ref: str) -> None:
    done = brain("--brain", str(source), "push", ref)
    assert done.code == 0, done
    skopeo = subprocess.run([require_tool("skopeo"), "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
                            capture_output=True, check=True, timeout=60)
    assert json.loads(skopeo.stdout)["config"]["digest"] == str(Brain.open(source).snapshot_digest())


def _head(path: Path) -> str:
    return str(Brain.open(path).snapshot_digest())


def test_an_alias_or_another_repository_cannot_install_an_unsigned_head(
    registry: RegistryServer, tmp_path: Path, brain: BrainRunner
) -> None:
    source, _key = _governed(tmp_path, brain, "publisher", "signed release\n")
    _push(brain, source, registry.ref("probe/alias:v1"))
    consumer = tmp_path / "consumer"
    assert brain("--brain", str(consumer), "pull", registry.ref("probe/alias:v1")).code == 0
    before = _head(consumer)
    _ingest(tmp_path, brain, source, None, "an unsigned follow-up\n")  # a head nobody signed
    _push(brain, source, registry.ref("probe/alias:v2"))
    _push(brain, source, registry.ref("probe/other:v1"))
    for ref in (
        _alias(registry, "probe/alias:v2"), _alias(registry, "probe/alias:v2").replace("localhost", "LOCALHOST"),
        registry.ref("probe/other:v1"), _alias(registry, "probe/other:v1"),
    ):
        for extra in ((), ("--force",)):
            done = brain("--brain", str(consumer), "pull", ref, *extra)
            assert_one_line_error(done, 6)
            assert _head(consumer) == before, (ref, extra)
    memory = json.loads((consumer / "boltzmann" / "remotes.json").read_text())["seen_signed"]
    assert list(memory) == [f"{registry.host}/probe/alias"]


def test_an_alias_cannot_roll_back_with_force(registry: RegistryServer, tmp_path: Path, brain: BrainRunner) -> None:
    source, key = _governed(tmp_path, brain, "publisher", "release one\n")
    _push(brain, source, registry.ref("probe/rollback:v1"))
    _ingest(tmp_path, brain, source, key, "release two\n")
    _push(brain, source, registry.ref("probe/rollback:v2"))
    _push(brain, source, registry.ref("probe/mirror:v2"))
    consumer = tmp_path / "consumer"
    assert brain("--brain", str(consumer), "pull", registry.ref("probe/rollback:v2")).code == 0
    before = _head(consumer)
    for ref in (_alias(registry, "probe/rollback:v1"), registry.ref("probe/rollback:v1")):
        done = brain("--brain", str(consumer), "pull", ref, "--force")
        assert_one_line_error(done, 6)
        assert "does not descend" in done.stderr and _head(consumer) == before
    # The same brain from a mirror, at the same head: nothing to refuse.
    assert brain("--brain", str(consumer), "pull", _alias(registry, "probe/mirror:v2")).code == 0
    assert _head(consumer) == before


def test_a_rogue_trust_root_is_a_foreign_chain_until_an_explicit_logged_re_root(
    registry: RegistryServer, tmp_path: Path, brain: BrainRunner
) -> None:
    source, _key = _governed(tmp_path, brain, "publisher", "genuine release\n")
    _push(brain, source, registry.ref("probe/genuine:v1"))
    consumer = tmp_path / "consumer"
    assert brain("--brain", str(consumer), "pull", registry.ref("probe/genuine:v1")).code == 0
    before = _head(consumer)
    genuine_keys = brain("--brain", str(consumer), "trust", "show", "--json").json()["keys"]
    rogue, _rogue_key = _governed(tmp_path, brain, "rogue", "planted release\n")
    _push(brain, rogue, _alias(registry, "probe/genuine:v2"))
    for ref in (_alias(registry, "probe/genuine:v2"), registry.ref("probe/genuine:v2")):
        done = brain("--brain", str(consumer), "pull", ref, "--force")
        assert_one_line_error(done, 6)
        assert "--re-root" in done.stderr and _head(consumer) == before
        done = brain("--brain", str(consumer), "pull", ref, "--force", "--allow-unauthorized")
        assert_one_line_error(done, 6)
    assert brain("--brain", str(consumer), "trust", "show", "--json").json()["keys"] == genuine_keys
    # The explicit re-root adopts the other root, and says so in the trust log.
    done = brain(
        "--brain", str(consumer), "pull", _alias(registry, "probe/genuine:v2"), "--force", "--re-root", "--json"
    )
    assert done.code == 0, done
    assert _head(consumer) == _head(rogue)
    log = [json.loads(line) for line in (consumer / "boltzmann" / "trust-log.jsonl").read_text().splitlines()]
    assert [e["event"] for e in log] == ["re-root"]
    assert log[0]["reference"] == f"{registry.host}/probe/genuine" and log[0]["previous"] and log[0]["trust_root"]
    shown = brain("--brain", str(consumer), "trust", "show", "--json").json()["keys"]
    assert shown != genuine_keys
    # From now on the genuine root is the foreign one.
    done = brain("--brain", str(consumer), "pull", registry.ref("probe/genuine:v1"), "--force")
    assert_one_line_error(done, 6)


def test_a_governed_producer_refuses_an_unsigned_head_of_another_brain(
    registry: RegistryServer, tmp_path: Path, brain: BrainRunner
) -> None:
    mine, _key = _governed(tmp_path, brain, "producer", "my own brain\n")
    other = tmp_path / "other"
    assert brain("--brain", str(other), "init").code == 0
    _ingest(tmp_path, brain, other, None, "an unsigned stranger\n")
    _push(brain, other, registry.ref("probe/stranger:v1"))
    before = _head(mine)
    done = brain("--brain", str(mine), "pull", _alias(registry, "probe/stranger:v1"), "--force")
    assert_one_line_error(done, 6)
    assert _head(mine) == before


@pytest.mark.parametrize(("spelled", "key"), [
    ("LOCALHOST:5000/a/b:v1", "127.0.0.1:5000/a/b"),
    ("127.0.0.1:5000/a/b", "127.0.0.1:5000/a/b"),
    ("[::1]:5000/a/b@sha256:" + "a" * 64, "127.0.0.1:5000/a/b"),
    ("Registry.Example.org:443/team/brain:v2", "registry.example.org/team/brain"),
    ("docker.io/ubuntu:22.04", "docker.io/library/ubuntu"),
    ("index.docker.io/library/ubuntu", "docker.io/library/ubuntu"),
    ("registry-1.docker.io/library/ubuntu", "docker.io/library/ubuntu"),
    ("ghcr.io/o/r", "ghcr.io/o/r"),
])
def test_repository_keys_are_normalized(spelled: str, key: str) -> None:
    assert parse_reference(spelled).repository_key == key
