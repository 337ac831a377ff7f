"""Issue 24 item 4: after a redaction, the remote copies are named, not hinted at.

`redact` and the next `push` list each registry tag and digest known (push log, remotes.json, the
registry's tags) to hold the redacted bytes, with the command that deletes it; the printed command is run
(skopeo against the real registry) and the manifest is then gone.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.brain import Brain
from tests.cli.conftest import BrainRunner
from tests.registry import RegistryServer, require_tool

pytestmark = pytest.mark.registry
ACTOR = "curator@example.org"
SECRET = "The vault passphrase is zebra-quartz-violin.\n"


def _digest_of(ref: str) -> str | None:
    done = subprocess.run([require_tool("skopeo"), "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
                          capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        return None
    from brain.identity import OciDigest

    return str(OciDigest.of(done.stdout))


def test_redact_and_the_next_push_name_each_remote_copy(
    registry: RegistryServer, tmp_path: Path, brain: BrainRunner
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "secret.md").write_text("# Secret\n\n" + SECRET)
    (docs / "other.md").write_text("# Other\n\nA cache is a small fast store.\n")
    path = tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    assert brain("--brain", str(path), "--actor", ACTOR, "ingest", str(docs)).code == 0
    ref = registry.ref("probe/copies:v1")
    assert brain("--brain", str(path), "push", ref).code == 0
    assert brain("--brain", str(path), "push", registry.ref("probe/mirror:v1")).code == 0
    first = _digest_of(ref)
    assert first is not None and _digest_of(registry.ref("probe/mirror:v1")) == first
    secret = next(
        b for b in Brain.open(path).module(MemoryType.CANONICAL).blocks() if b.size == len("# Secret\n\n" + SECRET)
    )
    done = brain(
        "--brain", str(path), "--actor", ACTOR, "redact", str(secret.block_id), "--reason", "leak", "--yes", "--json"
    )
    assert done.code == 0, done
    copies = done.json()["remote_copies"]
    assert {(c["repository"], c["tag"], c["digest"]) for c in copies} == {
        (f"{registry.host}/probe/copies", "v1", first), (f"{registry.host}/probe/mirror", "v1", first)}
    assert all(c["delete"] == f"skopeo delete --tls-verify=false docker://{c['repository']}@{first}" for c in copies)
    human = brain("--brain", str(path), "--actor", ACTOR, "redact", str(secret.block_id), "--reason", "leak", "--yes")
    assert human.code == 0 and f"@{first}" in human.stdout + human.stderr
    # The next push moves the tag to a clean manifest and names the old one, still pullable by digest.
    pushed = brain("--brain", str(path), "push", ref)
    assert pushed.code == 0, pushed
    second = _digest_of(ref)
    assert second is not None and second != first
    warned = [line for line in pushed.stderr.splitlines() if first in line]
    assert warned and all("skopeo delete" in line for line in warned), pushed.stderr
    assert _digest_of(f"{registry.host}/probe/copies@{first}") == first
    # The printed command deletes it (skopeo against the real registry).
    command = next(line.split("not ours to erase: ", 1)[1] for line in warned if "probe/copies@" in line)
    argv = shlex.split(command)
    assert argv[0] == "skopeo"
    assert subprocess.run(
        [require_tool("skopeo"), *argv[1:]], capture_output=True, timeout=60, check=False
    ).returncode == 0
    assert _digest_of(f"{registry.host}/probe/copies@{first}") is None
    assert _digest_of(ref) is None or _digest_of(ref) == second
    log = json.loads((path / "boltzmann" / "pushes.json").read_text())["pushes"]
    assert {(e["repository"], e["digest"]) for e in log} >= {(f"{registry.host}/probe/copies", first),
                                                             (f"{registry.host}/probe/copies", second)}
