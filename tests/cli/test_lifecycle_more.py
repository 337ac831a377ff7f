"""`drop --producer`, `diff`, `log` summaries and `prune` through the CLI, on the reference brain."""

from __future__ import annotations

from pathlib import Path

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.identity import OciDigest
from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.cli.test_lifecycle_reference import (
    ACTOR,
    HEAD,
    V1,
    _ids,
    _new_records,
    _removal,
)

PRODUCER = "model:acme/extractor@2026-11"


def _run(brain: BrainRunner, path: Path, *args: str):
    return brain("--brain", str(path), "--actor", ACTOR, *args)


def test_drop_by_producer_writes_the_same_records_in_one_snapshot(brain: BrainRunner, reference_brain: Path):
    b = Brain.open(reference_brain)
    ids = _ids(b)
    run = _run(brain, reference_brain, "drop", "--producer", PRODUCER, "--reason", "bad model", "--json")
    assert run.code == 0, run
    semantic = [ids["Fourier series"], ids["Fourier expansion"], ids["Laplace transform"]]
    procedure = ids["compute a spectrum"]
    assert run.json()["removals"] == {"semantic": sorted(map(str, semantic)), "procedural": [str(procedure)]}
    assert _new_records(b, HEAD) == [_removal("procedural", [procedure], "bad model"),
                                      _removal("semantic", semantic, "bad model")]
    assert "episodic blocks made by" in run.stderr  # the episode it made stays (only demote removes it)
    assert b.snapshot().first_parent == HEAD
    assert brain("--brain", str(reference_brain), "verify").code == 0


def test_drop_by_producer_refusals(brain: BrainRunner, reference_brain: Path):
    unknown = _run(brain, reference_brain, "drop", "--producer", "model:acme/extractor@1999", "--reason", "r")
    assert_one_line_error(unknown, 4)
    bad = _run(brain, reference_brain, "drop", "--producer", "acme", "--reason", "r")
    assert_one_line_error(bad, 3)
    episodes = _run(brain, reference_brain, "drop", "--producer", PRODUCER, "--module", "episodic", "--reason", "r")
    assert_one_line_error(episodes, 5)
    no_reason = _run(brain, reference_brain, "drop", "--producer", PRODUCER)
    assert_one_line_error(no_reason, 3)
    assert Brain.open(reference_brain).snapshot_digest() == HEAD


def test_diff_between_reference_snapshots_tags_and_prefixes(brain: BrainRunner, reference_brain: Path):
    b = Brain.open(reference_brain)
    report = brain("--brain", str(reference_brain), "diff", "v1", "v2", "--json").json()
    assert report["a_snapshot"] == str(V1) and report["b_snapshot"] == str(HEAD) and report["differ"] is True
    (removed,) = report["modules"]["semantic"]["removed"]
    assert removed["mechanism"] == "drop" and removed["reason"] == "unsupported claim"
    superseded = report["modules"]["semantic"]["superseded"]
    assert [(s["block"][:19], s["winner"][:19]) for s in superseded] == [("sha256:d603dc5dea69", "sha256:1a0b3a6e9602")]
    assert [d["reason"] for d in report["modules"]["episodic"]["demoted"]] == ["no longer relevant"]
    same = brain("--brain", str(reference_brain), "diff", str(HEAD)[7:19], "HEAD", "--exit-code", "--json")
    assert same.code == 0 and same.json()["differ"] is False
    differ = brain("--brain", str(reference_brain), "diff", "HEAD~3", "--exit-code")
    assert differ.code == 1 and "semantic" in differ.stdout
    default = brain("--brain", str(reference_brain), "diff", "--json").json()
    assert default["a_snapshot"] == str(b.snapshot().first_parent) and default["summary"].startswith("-1 semantic")
    markdown = brain("--brain", str(reference_brain), "diff", "v1", "v2", "--format", "markdown")
    assert "| module | change | block | title | origin | detail |" in markdown.stdout
    assert "| semantic | removed |" in markdown.stdout and "drop: unsupported claim" in markdown.stdout
    assert_one_line_error(brain("--brain", str(reference_brain), "diff", "nosuchtag"), 4)
    assert_one_line_error(brain("--brain", str(reference_brain), "diff", "HEAD~99"), 4)


def test_log_prints_one_change_summary_per_snapshot(brain: BrainRunner, reference_brain: Path):
    entries = brain("--brain", str(reference_brain), "log", "--json").json()
    summaries = [e["summary"] for e in entries]
    assert summaries[0] == "-1 semantic (drop: unsupported claim)"
    assert "1 episodic demoted" in summaries and "1 semantic superseded" in summaries
    assert summaries[-1] == "+1 canonical"
    text = brain("--brain", str(reference_brain), "log").stdout
    assert "-1 semantic (drop: unsupported claim)" in text


def test_prune_keeps_every_retained_snapshot_and_tag(brain: BrainRunner, reference_brain: Path):
    garbage = reference_brain / "blobs" / "sha256" / OciDigest.of(b"garbage").hex
    garbage.write_bytes(b"garbage")
    temp = reference_brain / "blobs" / "sha256" / ".tmp-killed"
    temp.write_bytes(b"half a blob")
    before = {p.name for p in (reference_brain / "blobs" / "sha256").iterdir()}
    dry = brain("--brain", str(reference_brain), "prune", "--dry-run", "--json").json()
    assert dry["deleted_blobs"] == 1 and dry["deleted_bytes"] == len(b"garbage") and garbage.exists()
    run = brain("--brain", str(reference_brain), "--lock-timeout", "1", "prune", "--json")
    assert run.code == 0 and run.json()["deleted_blobs"] == 1
    after = {p.name for p in (reference_brain / "blobs" / "sha256").iterdir()}
    assert before - after == {garbage.name, temp.name}
    for args in (("verify",), ("verify", "--tag", "v1"), ("verify", "--tag", "v2")):
        assert brain("--brain", str(reference_brain), *args).code == 0, args
    assert len(Brain.open(reference_brain).history()) == 10
    # --keep 1 still keeps the whole parent chain (and both tags): nothing else to delete here.
    assert brain("--brain", str(reference_brain), "prune", "--keep", "1", "--json").json()["deleted_blobs"] == 0
    assert Brain.open(reference_brain).head().retained == (HEAD,)
    assert brain("--brain", str(reference_brain), "verify").code == 0


def test_prune_after_a_drop_keeps_the_dropped_bytes_older_snapshots_need(brain: BrainRunner, reference_brain: Path):
    b = Brain.open(reference_brain)
    series = _ids(b)["Fourier series"]
    assert _run(brain, reference_brain, "drop", str(series), "--reason", "r", "--yes").code == 0
    assert brain("--brain", str(reference_brain), "prune", "--json").json()["deleted_blobs"] == 0
    assert b.blobs.has(series) and series in b.module(MemoryType.SEMANTIC, HEAD)
    assert brain("--brain", str(reference_brain), "verify").code == 0
