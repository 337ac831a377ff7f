"""The read-side commands through the real `brain` executable, against the reference brain (spec §8)."""

from __future__ import annotations

from pathlib import Path

from brain.identity import BlockId
from tests.cli.conftest import TWIN_PREFIX, BrainRunner, assert_one_line_error

HEAD = "sha256:095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904"
MODULES = {
    "canonical": ("sha256:d3623701e36e62fe9f0f4466f0029db073562c921375d82f0c7f5a17379d6a2c", 3),
    "episodic": ("sha256:ea9b7bd428082889b906491b12d5eaf4c18e21b87f7b2443afc3baea0183d935", 1),
    "semantic": ("sha256:7f994fec0244b6e9d0805a8d3691bb499cff0884621ec504b72056e50d9925cc", 3),
    "procedural": ("sha256:d6afbb10d56955e0c3d920581edb505893199c574a349ae43c2a65f0fa695739", 1),
    "provenance": ("sha256:e5c1d89320a60c1015cc24e78da968577e5f4d7d9cfb62ca3c00449e35bd7c6c", 19),
}
PDF_BLOCK = "sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea"
FOURIER_SOURCE = "sha256:d85afe5c73c486e72f945e53bb0c1e6690c9e3afc935e3ff38a0ec1790a335bc"
SPECTRUM_PROCEDURE = "sha256:ffe556de3d2b35b40d9959a2375adde6e41521322117f9c5b644ee288251dde5"
FOURIER_SERIES = "sha256:d603dc5dea69"  # superseded by "Fourier expansion"
FOURIER_EXPANSION = "sha256:1a0b3a6e9602"


def test_status_json_matches_the_reference_values(brain: BrainRunner, reference_brain: Path) -> None:
    run = brain("--brain", str(reference_brain), "status", "--json")
    assert run.code == 0 and run.stderr == ""
    assert run.json()["branch"]["name"] == "main" and run.json()["branch"]["reconciling"] is None
    assert {k: v for k, v in run.json().items() if k != "branch"} == {
        "snapshot": HEAD,
        "modules": {t: {"root": root, "block_count": count} for t, (root, count) in MODULES.items()},
    }
    assert list(run.json()["modules"]) == list(MODULES)  # module order (§6.2)


def test_status_for_people_names_every_root(brain: BrainRunner, reference_brain: Path) -> None:
    run = brain("status", env={"BRAIN_DIR": str(reference_brain)})
    assert run.code == 0 and HEAD in run.stdout
    assert all(root in run.stdout for root, _ in MODULES.values())
    assert "\x1b" not in run.stdout


def test_empty_brain(brain: BrainRunner, tmp_path: Path) -> None:
    target = tmp_path / "new"
    created = brain("--brain", str(target), "init", "--json")
    assert created.code == 0 and created.json() == {"brain": str(target)}
    assert brain("--brain", str(target), "status", "--json").json() == {
        "branch": {"name": "main", "tag": "latest", "reference": None, "remote": None, "ahead": None, "behind": None,
                   "reconciling": None},
        "snapshot": None, "modules": {}}
    assert brain("--brain", str(target), "log", "--json").json() == []
    assert brain("--brain", str(target), "ls", "--json").json() == []
    people = brain("--brain", str(target), "ls")
    assert (people.code, people.stdout, people.stderr) == (0, "", "no members\n")
    assert brain("--quiet", "--brain", str(target), "log").stderr == ""
    assert_one_line_error(brain("--brain", str(target), "init"), 5)


def test_log_walks_ten_snapshots_back_to_the_root(brain: BrainRunner, reference_brain: Path) -> None:
    entries = brain("--brain", str(reference_brain), "log", "--json").json()
    assert len(entries) == 10
    assert entries[0]["snapshot"] == HEAD
    assert entries[0]["modules"] == {t: count for t, (_, count) in MODULES.items()}
    for child, parent in zip(entries, entries[1:], strict=False):
        assert child["parent"] == parent["snapshot"] and child["parents"] == [parent["snapshot"]]
    assert entries[-1]["parent"] is None and entries[-1]["modules"] == {"canonical": 1, "provenance": 2}
    table = brain("--brain", str(reference_brain), "log")
    assert len(table.stdout.splitlines()) == 11 and table.stdout.splitlines()[1].startswith(HEAD[7:19])
    assert table.stderr == ""


def test_log_says_where_a_cut_history_stops(brain: BrainRunner, reference_brain: Path) -> None:
    missing = "0afcd2791763e0eaf5cab90e66e7a18afca9ef612508170a8cbf7235ec451762"
    (reference_brain / "blobs" / "sha256" / missing).unlink()
    run = brain("--brain", str(reference_brain), "log", "--json")
    assert run.code == 0 and len(run.json()) == 3
    assert (
        run.stderr
        == "history stops at 67b06a669bfb: its parent 0afcd2791763 is not stored here (pruned, or never pulled)\n"
    )


def test_ls_hides_superseded_and_demoted_members_unless_all(brain: BrainRunner, reference_brain: Path) -> None:
    shown = brain("--brain", str(reference_brain), "ls", "--json").json()
    everything = brain("--brain", str(reference_brain), "ls", "--all", "--json").json()
    assert len(everything) == sum(count for _, count in MODULES.values())
    hidden = [m for m in everything if not m["accessible"]]
    assert {(m["memory_type"], m["block_id"][:19]) for m in hidden} == {
        ("semantic", FOURIER_SERIES),
        ("episodic", "sha256:c92b4e42f2d2"),
    }
    assert len(shown) == len(everything) - 2 and all(m["accessible"] for m in shown)
    titles = {m["block_id"]: m["title"] for m in everything}
    assert titles[SPECTRUM_PROCEDURE] == "compute a spectrum"
    assert titles[FOURIER_SOURCE] == "https://example.org/fourier.md (text/markdown, 133 bytes)"


def test_ls_filters_by_type(brain: BrainRunner, reference_brain: Path) -> None:
    semantic = brain("--brain", str(reference_brain), "ls", "--type", "semantic", "--json").json()
    assert [m["block_id"][:19] for m in semantic] == [FOURIER_EXPANSION, "sha256:b6dd04859e48"]
    assert_one_line_error(brain("--brain", str(reference_brain), "ls", "--type", "episodes"), 3)


def test_show_accepts_a_short_prefix_and_reports_the_ledger(brain: BrainRunner, reference_brain: Path) -> None:
    for prefix in ("ffe556de", "sha256:ffe5"):
        run = brain("--brain", str(reference_brain), "show", prefix, "--json")
        assert run.code == 0, run
        shown = run.json()
        assert shown["block_id"] == SPECTRUM_PROCEDURE and shown["memory_type"] == "procedural"
        assert shown["payload"]["label"] == "compute a spectrum"
        ledger = shown["ledger"]
        assert ledger["evidence"] == [FOURIER_SOURCE] and ledger["locator"] == "L5-L6"
        assert ledger["producer"] == {"id": "acme/extractor", "kind": "model", "version": "2026-11"}
        assert ledger["validation"]["verdict"] == "validated" and ledger["accessible"] is True


def test_show_reports_supersession_and_dependents(brain: BrainRunner, reference_brain: Path) -> None:
    series = brain("--brain", str(reference_brain), "show", FOURIER_SERIES[7:], "--json").json()
    assert series["ledger"]["accessible"] is False
    assert [w[:19] for w in series["ledger"]["superseded_by"]] == [FOURIER_EXPANSION]
    source = brain("--brain", str(reference_brain), "show", FOURIER_SOURCE[7:15], "--json").json()
    assert SPECTRUM_PROCEDURE in source["ledger"]["dependents"]
    assert source["ledger"]["registration"]["origin"] == "https://example.org/fourier.md"
    assert source["ledger"]["normalization"]["pipeline"]


def test_prove_verifies_against_the_module_root(brain: BrainRunner, reference_brain: Path) -> None:
    run = brain("--brain", str(reference_brain), "prove", "4c6d", "--json")
    assert run.code == 0, run
    proved = run.json()
    assert proved["verified"] is True and proved["memory_type"] == "canonical"
    assert proved["root"] == MODULES["canonical"][0]
    assert proved["proof"]["block_id"] == PDF_BLOCK
    assert (proved["proof"]["leaf_index"], proved["proof"]["tree_size"]) == (0, 3)
    assert len(proved["proof"]["audit_path"]) == 2
    typed = brain("--brain", str(reference_brain), "prove", "4c6d", "--type", "canonical", "--json").json()
    assert typed == proved
    assert_one_line_error(brain("--brain", str(reference_brain), "prove", "4c6d", "--type", "semantic"), 4)


def test_not_a_brain(brain: BrainRunner, tmp_path: Path) -> None:
    assert_one_line_error(brain("--brain", str(tmp_path / "missing"), "status"), 2)
    (tmp_path / "plain").mkdir()
    assert_one_line_error(brain("--brain", str(tmp_path / "plain"), "ls"), 2)
    (tmp_path / "afile").write_text("not a brain")
    as_file = brain("--brain", "afile", "status")
    assert_one_line_error(as_file, 2)
    assert as_file.stderr.startswith("error: afile is a file, not a brain directory")
    # Without --brain or BRAIN_DIR, say which directory was tried and how to choose another.
    default = brain("log")
    assert_one_line_error(default, 2)
    assert "./brain is not a brain (the default" in default.stderr and "--brain PATH" in default.stderr


def test_unknown_and_malformed_ids(brain: BrainRunner, reference_brain: Path) -> None:
    assert_one_line_error(brain("--brain", str(reference_brain), "show", "deadbeef"), 4)
    assert_one_line_error(brain("--brain", str(reference_brain), "show", "sha256:" + "0" * 64), 4)
    assert_one_line_error(brain("--brain", str(reference_brain), "prove", "deadbeef"), 4)
    assert_one_line_error(brain("--brain", str(reference_brain), "show", "4c6"), 3)
    assert_one_line_error(brain("--brain", str(reference_brain), "prove", "zzzz"), 3)
    assert_one_line_error(brain("--brain", str(reference_brain), "show", "zzzz"), 4)  # not an id: no such origin


def test_ambiguous_prefix_is_not_found(brain: BrainRunner, twin_brain: tuple[Path, list[BlockId]]) -> None:
    target, twins = twin_brain
    run = brain("--brain", str(target), "show", TWIN_PREFIX)
    assert_one_line_error(run, 4)
    assert "2 blocks" in run.stderr
    shown = brain("--brain", str(target), "show", twins[1].hex[:8], "--json")
    assert shown.code == 0 and shown.json()["block_id"] == str(twins[1])


def test_corrupt_head_is_unreadable(brain: BrainRunner, reference_brain: Path) -> None:
    head = reference_brain / "boltzmann" / "head.json"
    head.write_text('{"boltzmann":1,')
    assert_one_line_error(brain("--brain", str(reference_brain), "status"), 2)
    head.write_text('{"boltzmann":1,"snapshot":"sha256:' + "0" * 64 + '"}')
    for command in ("status", "log", "ls"):
        assert_one_line_error(brain("--brain", str(reference_brain), command), 2)


def test_debug_shows_the_traceback(brain: BrainRunner, tmp_path: Path) -> None:
    run = brain("--debug", "--brain", str(tmp_path / "missing"), "status")
    assert run.code == 2 and "Traceback" in run.stderr and run.stderr.splitlines()[-2].startswith("error: ")


def test_show_a_dropped_block_by_full_id(brain: BrainRunner, reference_brain: Path) -> None:
    # "heat equation" was dropped in the last step: still stored, no longer a member, so only its full id finds it.
    dropped = "sha256:85753ad9c7d593b4a6f1a86a0de7e1fe0712704b863e52e23ac9de612eb3cd61"
    shown = brain("--brain", str(reference_brain), "show", dropped, "--json").json()
    assert shown["member_of"] == [] and shown["ledger"]["removed"] is True
    assert_one_line_error(brain("--brain", str(reference_brain), "show", dropped[7:17]), 4)
    assert_one_line_error(brain("--brain", str(reference_brain), "prove", dropped), 4)


def test_ls_after_a_selective_pull_lists_what_is_installed(brain: BrainRunner, tmp_path: Path) -> None:
    from brain.blocks import MemoryType
    from brain.brain import Brain
    from oci.install import install_artifact
    from tests.oci.layer_helpers import REFERENCE_BLOBS, V2

    target = Brain.init(tmp_path / "partial")
    wanted = {MemoryType.CANONICAL, MemoryType.SEMANTIC, MemoryType.PROVENANCE}
    fetch = lambda descriptor: REFERENCE_BLOBS / descriptor.digest.hex  # noqa: E731
    install_artifact(target, (REFERENCE_BLOBS / V2).read_bytes(), fetch, wanted, reference="localhost:5000/r:v2")
    listed = brain("--brain", "partial", "ls", "--json")
    # Once exit 2 ("the brain is incomplete") for the modules the pull left out on purpose.
    assert listed.code == 0, listed.stderr
    assert {row["memory_type"] for row in listed.json()} == {"canonical", "semantic", "provenance"}
    assert "not installed (selective pull): episodic, procedural" in listed.stderr
    assert_one_line_error(brain("--brain", "partial", "ls", "--type", "episodic"), 4)
    status = brain("--brain", "partial", "status", "--json")
    assert status.code == 0
    # The head is a local snapshot of exactly the installed modules (§6.8).
    assert set(status.json()["modules"]) == {"canonical", "semantic", "provenance"}
    assert status.stderr == "not installed (selective pull): episodic, procedural\n"
