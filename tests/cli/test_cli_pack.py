"""`brain pack` and `brain tags` through the real entry point."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import BrainRunner, assert_one_line_error

V2 = "sha256:004f409811fb337ad94948e57b795f8969ae12adb54bfce8979d1269424a0727"


def test_pack_json_reproduces_the_reference_manifest_and_tags_it(brain: BrainRunner, reference_brain: Path) -> None:
    run = brain("--brain", str(reference_brain), "pack", "--tag", "release", "--json")
    assert run.code == 0, run
    result = run.json()
    assert result["digest"] == V2 and result["tag"] == "release"
    assert [layer["memory_type"] for layer in result["layers"]] == [
        "canonical", "episodic", "semantic", "procedural", "provenance", None
    ]
    tags = brain("--brain", str(reference_brain), "tags", "--json").json()["tags"]
    assert [(t["tag"], t["digest"]) for t in tags][-1] == ("release", V2)
    assert [t["tag"] for t in tags] == ["v1", "v2", "release"]


def test_repack_reuses_every_layer(brain: BrainRunner, reference_brain: Path) -> None:
    brain("--brain", str(reference_brain), "pack", "--tag", "a")
    run = brain("--brain", str(reference_brain), "pack", "--tag", "a", "--json")
    assert run.code == 0 and all(layer["reused"] for layer in run.json()["layers"])


def test_pack_subset_and_people_output(brain: BrainRunner, reference_brain: Path) -> None:
    run = brain("--brain", str(reference_brain), "pack", "--module", "episodic", "-m", "provenance")
    assert run.code == 0 and run.stdout.startswith("sha256:")
    assert "episodic" in run.stdout and "history" in run.stdout and "canonical" not in run.stdout


def test_pack_refusals_exit_codes(brain: BrainRunner, reference_brain: Path, tmp_path: Path) -> None:
    assert_one_line_error(brain("--brain", str(reference_brain), "pack", "-m", "semantic"), 3)
    assert_one_line_error(brain("--brain", str(reference_brain), "pack", "-m", "bogus"), 3)
    assert_one_line_error(brain("--brain", str(reference_brain), "pack", "--tag", "bad/tag"), 3)
    assert brain("--brain", str(tmp_path / "empty"), "init").code == 0
    assert_one_line_error(brain("--brain", str(tmp_path / "empty"), "pack"), 5)


def test_tags_of_a_brain_without_tags(brain: BrainRunner, tmp_path: Path) -> None:
    assert brain("--brain", str(tmp_path / "b"), "init").code == 0
    run = brain("--brain", str(tmp_path / "b"), "tags", "--json")
    assert run.code == 0 and run.json() == {"tags": []}
    assert "no tags" in brain("--brain", str(tmp_path / "b"), "tags").stdout


def test_console_script_packs(brain_exe: BrainRunner, reference_brain: Path) -> None:
    run = brain_exe("--brain", str(reference_brain), "pack", "--json")
    assert run.code == 0 and run.json()["digest"] == V2


def test_pack_subset_names_the_provenance_it_added(brain: BrainRunner, reference_brain: Path) -> None:
    run = brain("--brain", str(reference_brain), "pack", "--tag", "p", "-m", "canonical", "-m", "semantic", "--json")
    assert run.code == 0, run
    assert run.json()["modules"] == ["canonical", "semantic", "provenance"] and run.json()["implied"] == ["provenance"]
    assert "also packed provenance" in run.stderr
    assert "provenance always comes along" in brain("pack", "--help").stdout
