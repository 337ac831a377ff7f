"""Issue 12 item 3 end to end through the CLI and a real registry: `pull --module semantic` installs exactly
semantic + provenance, and every command then describes what is installed; item 16's lying annotations
are refused by `pull` (exit 6) exactly as `verify --tag` rejects them.

The reference fixture is copied to the registry by skopeo (digests preserved); what `push` publishes from
the partial brain is read back with skopeo too.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.identity import OciDigest
from oci import media_types as mt
from oci.reference import parse_reference
from oci.retry import RetryPolicy
from oci.transport import RegistryClient
from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.oci.test_push_pull_registry import reference_on_registry  # noqa: F401 - the fixture
from tests.registry import RegistryServer, skopeo_raw_manifest
from tests.shared_paths import REFERENCE_BRAIN

pytestmark = pytest.mark.registry
V2_SNAPSHOT = "sha256:095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904"
SEMANTIC_BLOCK = "1a0b3a6e9602"  # "Fourier expansion", citing canonical evidence


@pytest.fixture
def published(reference_on_registry: str) -> str:  # noqa: F811 - the imported fixture
    """The reference fixture's v2 on the registry (copied there by skopeo, digests preserved)."""
    return f"{reference_on_registry}/ref:v2"


def test_pull_one_module_then_every_command_describes_what_is_installed(
    brain: BrainRunner, published: str, registry: RegistryServer, tmp_path: Path
) -> None:
    at = ("--brain", "part")
    pulled = brain(*at, "pull", published, "--module", "semantic", "--json")
    assert pulled.code == 0, pulled.stderr
    result = pulled.json()
    assert result["modules"] == ["semantic", "provenance"]
    assert result["left_out"] == ["canonical", "episodic", "procedural"]
    assert result["snapshot"] == V2_SNAPSHOT and result["head"] != V2_SNAPSHOT
    head = json.loads((tmp_path / "part" / "boltzmann" / "head.json").read_bytes())
    assert head["origin"] == {"partial": True, "reference": published, "snapshot": V2_SNAPSHOT, "tag": "v2"}
    local = json.loads((tmp_path / "part" / "blobs" / "sha256" / head["snapshot"][7:]).read_bytes())
    assert local["parent"] == V2_SNAPSHOT and sorted(local["modules"]) == ["provenance", "semantic"]

    status = brain(*at, "status", "--json")
    assert status.code == 0 and list(status.json()["modules"]) == ["semantic", "provenance"]
    assert status.json()["snapshot"] == head["snapshot"]
    assert "not installed (selective pull): canonical, episodic, procedural" in status.stderr
    listed = brain(*at, "ls", "--json")
    assert listed.code == 0 and {row["memory_type"] for row in listed.json()} == {"semantic", "provenance"}
    shown = brain(*at, "show", SEMANTIC_BLOCK, "--json")
    assert shown.code == 0, shown.stderr
    assert shown.json()["ledger"]["evidence"] and "left out the canonical module" in shown.stderr
    assert brain(*at, "prove", SEMANTIC_BLOCK).code == 0
    verified = brain(*at, "verify", "--json")
    assert verified.code == 0 and verified.json()["ok"], verified.stdout
    assert {p["module"] for p in verified.json()["problems"] if p["code"] == "module-not-installed"} == {
        "canonical", "episodic", "procedural"}

    # An ingest would need canonical (and the gate would need the modules it proposes into): refused, one line.
    (tmp_path / "note.md").write_text("# note\n\nsomething new\n")
    refused = brain(*at, "ingest", "note.md")
    assert_one_line_error(refused, 5)
    assert "pulled without canonical" in refused.stderr and f"pull {published} again adding" in refused.stderr
    assert brain(*at, "status", "--json").json()["snapshot"] == head["snapshot"]

    # pack and push publish exactly what is installed; skopeo reads the same manifest back.
    packed = brain(*at, "pack", "--tag", "mine", "--json")
    assert packed.code == 0, packed.stderr
    assert packed.json()["modules"] == ["semantic", "provenance"]
    assert brain(*at, "verify", "--tag", "mine").code == 0
    target = registry.ref("partial/mine:v1")
    pushed = brain(*at, "push", target, "--json")
    assert pushed.code == 0, pushed.stderr
    manifest = json.loads(skopeo_raw_manifest(target))
    layer_types = [layer["mediaType"] for layer in manifest["layers"]]
    assert layer_types == [
        mt.module_layer(MemoryType.SEMANTIC), mt.module_layer(MemoryType.PROVENANCE), mt.HISTORY_LAYER,
    ]
    assert manifest["config"]["digest"] == head["snapshot"]

    # ...and what was pushed pulls again into a fresh brain, which verifies.
    again = brain("--brain", "again", "pull", target, "--json")
    assert again.code == 0, again.stderr
    assert again.json()["modules"] == ["semantic", "provenance"] and again.json()["head"] == head["snapshot"]
    assert brain("--brain", "again", "verify").code == 0

    # Pulling the published artifact whole moves on from the partial head.
    whole = brain(*at, "pull", published, "--json")
    assert whole.code == 0, whole.stderr
    assert whole.json()["head"] == V2_SNAPSHOT
    assert json.loads((tmp_path / "part" / "boltzmann" / "head.json").read_bytes())["origin"]["partial"] is False
    assert len(brain(*at, "status", "--json").json()["modules"]) == 5


def test_a_lying_annotation_is_refused_by_pull_as_by_verify_tag(
    brain: BrainRunner, published: str, registry: RegistryServer, tmp_path: Path
) -> None:
    real = json.loads(skopeo_raw_manifest(published))
    lying = json.loads(json.dumps(real))
    lying["layers"][-1]["annotations"][mt.SNAPSHOT_COUNT] = "99"
    data = json.dumps(lying, separators=(",", ":"), sort_keys=True).encode()
    client = RegistryClient(parse_reference(registry.ref("partial/liar:v1")), retry=RetryPolicy(attempts=2))
    for layer in (real["config"], *real["layers"]):  # the same blobs, mounted into the liar's repository
        source = REFERENCE_BRAIN / "blobs" / "sha256" / layer["digest"][7:]
        client.push_blob(OciDigest.parse(layer["digest"]), layer["size"], lambda p=source: open(p, "rb"))  # noqa: SIM115
    client.put_manifest("v1", data)
    assert OciDigest.of(skopeo_raw_manifest(registry.ref("partial/liar:v1"))) == OciDigest.of(data)
    run = brain("--brain", "victim", "pull", registry.ref("partial/liar:v1"))
    assert run.code == 6, run
    errors = [line for line in run.stderr.splitlines() if not line.startswith("warning: ")]  # e.g. unsigned
    assert len(errors) <= 2 and errors[0].startswith("error: ") and "snapshot-count says 99" in errors[0]
    victim = tmp_path / "victim"
    assert not victim.exists() or Brain.open(victim).head() is None
    # verify --tag on a brain holding the same artifact reports the same lie.
    holder = tmp_path / "holder"
    shutil.copytree(REFERENCE_BRAIN, holder)
    for path in [holder, *holder.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    digest = Brain.open(holder).blobs.put(data)
    checked = brain("--brain", str(holder), "verify", "--tag", str(digest), "--json")
    assert checked.code == 1 and "history-count-mismatch" in {p["code"] for p in checked.json()["problems"]}
