"""`brain verify` through the real entry point: exit codes 0/1/2, the `--json` document, --tag, --snapshot."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import REFERENCE_BRAIN, BrainRunner, assert_one_line_error

HEAD = "sha256:095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904"
V1_CONFIG = "sha256:100ea8f01da426a5a2020ddc90f28d49169b57793541cdbb266c2387ef549839"
PDF_BLOB = "sha256:e038e5313b67a0a1481737ca2f90f40260c0a25b37260d9dbce228cc6ba64a68"
SEMANTIC_BLOCK = "sha256:b6dd04859e48eb1213d97fc85e92beb110610be1dae42692ea275ecfbbdb7c7c"


def _flip(root: Path, digest: str, offset: int = 5) -> None:
    path = root / "blobs" / "sha256" / digest.removeprefix("sha256:")
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_clean_brain_exits_0_with_the_json_document(brain: BrainRunner, reference_brain: Path) -> None:
    run = brain("--brain", str(reference_brain), "verify", "--json")
    assert run.code == 0, run
    data = run.json()
    assert list(data)[:4] == ["ok", "snapshot", "modules", "problems"]
    assert data["ok"] is True and data["snapshot"] == HEAD and data["problems"] == []
    assert data["modules"]["semantic"]["block_count"] == 3
    assert data["modules"]["semantic"]["root"].startswith("sha256:7f994fec")


def test_damage_exits_1_and_names_code_module_and_block(brain: BrainRunner, reference_brain: Path) -> None:
    _flip(reference_brain, PDF_BLOB)
    _flip(reference_brain, SEMANTIC_BLOCK)
    run = brain("--brain", str(reference_brain), "verify", "--json")
    assert run.code == 1, run
    data = run.json()
    assert data["ok"] is False
    found = {(p["code"], p["module"], p["block"]) for p in data["problems"]}
    assert found == {("blob-corrupt", "canonical", PDF_BLOB), ("block-corrupt", "semantic", SEMANTIC_BLOCK)}
    assert run.stderr.startswith("error: 2 problems found")


def test_human_report_groups_problems_by_module(brain: BrainRunner, reference_brain: Path) -> None:
    _flip(reference_brain, PDF_BLOB)
    run = brain("--brain", str(reference_brain), "verify")
    assert run.code == 1
    lines = run.stdout.splitlines()
    at = lines.index("canonical:")
    assert "blob-corrupt" in lines[at + 1] and PDF_BLOB in lines[at + 1]
    assert lines[-1] == "problems found"


def test_unreadable_head_exits_2(brain: BrainRunner, reference_brain: Path) -> None:
    (reference_brain / "boltzmann" / "head.json").write_text("{not json")
    assert_one_line_error(brain("--brain", str(reference_brain), "verify"), 2)


def test_not_a_brain_exits_2(brain: BrainRunner, tmp_path: Path) -> None:
    assert_one_line_error(brain("--brain", str(tmp_path / "nothing"), "verify"), 2)


def test_older_snapshot(brain: BrainRunner, reference_brain: Path) -> None:
    run = brain("--brain", str(reference_brain), "verify", "--snapshot", V1_CONFIG, "--json", "--jobs", "1")
    assert run.code == 0, run
    assert run.json()["snapshot"] == V1_CONFIG


def test_unknown_snapshot_exits_4(brain: BrainRunner, reference_brain: Path) -> None:
    run = brain("--brain", str(reference_brain), "verify", "--snapshot", "sha256:" + "ab" * 32)
    assert_one_line_error(run, 4)


def test_bad_snapshot_digest_is_a_usage_error(brain: BrainRunner, reference_brain: Path) -> None:
    assert_one_line_error(brain("--brain", str(reference_brain), "verify", "--snapshot", "abc"), 3)


def test_both_tags_verify_clean(brain: BrainRunner, reference_brain: Path) -> None:
    for tag, snapshot in (("v1", V1_CONFIG), ("v2", HEAD)):
        run = brain("--brain", str(reference_brain), "verify", "--tag", tag, "--json")
        assert run.code == 0, run
        data = run.json()
        assert data["snapshot"] == snapshot and data["artifact"].startswith("sha256:") and data["ok"]


def test_tag_with_a_damaged_layer_exits_1(brain: BrainRunner, reference_brain: Path) -> None:
    history_layer = "sha256:22d5e9033afeeed816ffdcbfb62f283f8540846f1324ffc1b43ef75e52a3b725"
    _flip(reference_brain, history_layer, offset=100)
    run = brain("--brain", str(reference_brain), "verify", "--tag", "v2", "--json")
    assert run.code == 1, run
    assert history_layer in {p["block"] for p in run.json()["problems"]}


def test_unknown_tag_exits_4(brain: BrainRunner, reference_brain: Path) -> None:
    assert_one_line_error(brain("--brain", str(reference_brain), "verify", "--tag", "nope"), 4)


def test_deep_reports_pipeline_drift_as_a_warning(brain: BrainRunner, reference_brain: Path) -> None:
    # The reference recorded text-nfc version "1"; this implementation versions it with its Unicode tables.
    run = brain("--brain", str(reference_brain), "verify", "--deep", "--json")
    assert run.code == 0, run
    problems = run.json()["problems"]
    assert [(p["code"], p["severity"]) for p in problems] == [("pipeline-version-drift", "warning")]


def test_console_script_exit_code(brain_exe: BrainRunner, reference_brain: Path) -> None:
    _flip(reference_brain, PDF_BLOB)
    run = brain_exe("--brain", str(reference_brain), "verify", "--json")
    assert run.code == 1 and run.json()["problems"][0]["code"] == "blob-corrupt"


def test_selectively_installed_brain_verifies_ok(brain: BrainRunner, tmp_path: Path) -> None:
    from brain.blocks.memory_type import MemoryType
    from brain.brain import Brain
    from oci.install import install_artifact

    source = REFERENCE_BRAIN / "blobs" / "sha256"
    target = Brain.init(tmp_path / "selective")
    manifest = (source / "004f409811fb337ad94948e57b795f8969ae12adb54bfce8979d1269424a0727").read_bytes()
    wanted = {MemoryType.EPISODIC, MemoryType.PROVENANCE}
    install_artifact(target, manifest, lambda d: source / d.digest.hex, wanted, reference="localhost:5000/b:v2")
    run = brain("--brain", str(target.path), "verify", "--json")
    assert run.code == 0, run
    data = run.json()
    assert data["partial_history"] is True
    notes = sorted(p["module"] for p in data["problems"] if p["code"] == "module-not-installed")
    assert notes == ["canonical", "procedural", "semantic"]
    assert {p["severity"] for p in data["problems"]} == {"info"}


def test_snapshot_by_the_short_id_brain_log_prints(brain: BrainRunner, reference_brain: Path) -> None:
    short = V1_CONFIG.removeprefix("sha256:")[:12]
    for given in (short, "sha256:" + short, short[:4].upper()):
        run = brain("--brain", str(reference_brain), "verify", "--snapshot", given, "--json", "--jobs", "1")
        assert run.code == 0, run
        assert run.json()["snapshot"] == V1_CONFIG
    # A prefix of a stored blob that is not a snapshot (a PDF source) finds no snapshot.
    assert_one_line_error(brain("--brain", str(reference_brain), "verify", "--snapshot", PDF_BLOB[7:19]), 4)
