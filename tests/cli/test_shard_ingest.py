"""`brain ingest --shard I/N --base REF` from the CLI: the split function, what is kept and skipped, `--sync`
scoped to the shard, the base check, bad input; and the precondition of §10.7 — the union of the shards'
compositions, module by module, equals one runner's composition of the whole corpus."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
from pathlib import Path

import pytest

from brain.brain import Brain
from ingest.shard import Shard, shard_of
from tests.cli.conftest import BrainRunner, assert_one_line_error

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
ACTOR = ("--actor", "ci@example.org")


def compositions(path: Path) -> dict[str, set[str]]:
    """Module name -> the member ids of the head's composition."""
    brain = Brain.open(path)
    return {str(t): {b.hex for b in m.block_ids} for t, m in brain.modules(brain.snapshot()).items()}


def union(parts: list[dict[str, set[str]]]) -> dict[str, set[str]]:
    merged: dict[str, set[str]] = {}
    for part in parts:
        for name, ids in part.items():
            merged.setdefault(name, set()).update(ids)
    return merged


def test_the_function_is_pinned_sha256_of_the_origin_big_endian_mod_n() -> None:
    # The documented rule, and fixed values: a change of the function would move sources between shards.
    for origin in ("docs/install.md", "notes/é.md", "https://example.org/a", ""):
        expected = 1 + int.from_bytes(hashlib.sha256(origin.encode()).digest()[:8], "big") % 7
        assert shard_of(origin, 7) == expected
    assert [shard_of("docs/install.md", n) for n in (1, 2, 3, 8, 32)] == [1, 2, 1, 8, 24]
    assert shard_of("notes/é.md", 32) == 22
    assert Shard.parse(" 2 / 8 ") == Shard(2, 8) and str(Shard(2, 8)) == "2/8"


def test_shards_partition_a_corpus() -> None:
    origins = [f"d{i % 10}/n{i:05d}.md" for i in range(3000)]
    for count in (1, 3, 8):
        held = [[o for o in origins if Shard(i, count).holds(o)] for i in range(1, count + 1)]
        assert sorted(o for part in held for o in part) == sorted(origins)
        assert all(len(part) > 3000 / count * 0.8 for part in held)  # roughly even


@pytest.mark.parametrize("value", ["0/3", "4/3", "1/0", "a/b", "1", "1/3/5", "-1/3", "1.5/3", ""])
def test_bad_shards_are_usage_errors(brain: BrainRunner, tmp_path: Path, value: str) -> None:
    assert brain("--brain", str(tmp_path / "b"), "init").code == 0
    run = brain("--brain", str(tmp_path / "b"), "ingest", str(FIXTURES / "corpus"), "--shard", value)
    assert_one_line_error(run, 3)
    assert Brain.open(tmp_path / "b").snapshot_digest() is None


def test_fixtures_shards_kept_and_skipped_and_union_equals_one_run(brain: BrainRunner, tmp_path: Path) -> None:
    assert brain("--brain", str(tmp_path / "one"), "init").code == 0
    whole = brain("--brain", str(tmp_path / "one"), *ACTOR, "ingest", str(FIXTURES), "--json")
    assert whole.code == 0, whole.stderr
    assert whole.json()["shard"] is None
    sources = whole.json()["sources"]
    parts, kept = [], 0
    for i in (1, 2, 3):
        target = tmp_path / f"s{i}"
        assert brain("--brain", str(target), "init").code == 0
        run = brain(
            "--brain", str(target), *ACTOR, "ingest", str(FIXTURES), "--shard", f"{i}/3", "--base", "empty", "--json"
        )
        assert run.code == 0, run.stderr
        report = run.json()["shard"]
        assert (report["index"], report["count"], report["shard"]) == (i, 3, f"{i}/3")
        assert report["kept"] + report["skipped"] == sources and report["kept"] == run.json()["sources"] > 0
        kept += report["kept"]
        origins = {o["origin"] for o in run.json()["outcomes"]}
        assert all(Shard(i, 3).holds(o) for o in origins)
        parts.append(compositions(target))
    assert kept == sources
    assert union(parts) == compositions(tmp_path / "one")  # all five modules, provenance included
    human = brain("--brain", str(tmp_path / "s1"), *ACTOR, "ingest", str(FIXTURES), "--shard", "1/3")
    assert human.code == 0 and "shard 1/3: kept " in human.stdout and " of other shards" in human.stdout


def make_corpus(root: Path, count: int) -> None:
    """bench/ingest.py's generated corpus: `count` notes of 1-4 KB, each yielding about 12 blocks."""
    spec = importlib.util.spec_from_file_location("bench_ingest", ROOT / "bench" / "ingest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make_corpus(root, count)


@pytest.mark.slow
def test_generated_corpus_of_thousands_union_equals_one_run(brain_exe: BrainRunner, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_corpus(corpus, 2000)
    assert brain_exe("--brain", "one", "init").code == 0
    assert brain_exe("--brain", "one", *ACTOR, "-q", "ingest", str(corpus)).code == 0
    parts = []
    for i in (1, 2, 3, 4):
        assert brain_exe("--brain", f"s{i}", "init").code == 0
        run = brain_exe("--brain", f"s{i}", *ACTOR, "-q", "ingest", str(corpus), "--shard", f"{i}/4")
        assert run.code == 0, run.stderr
        parts.append(compositions(tmp_path / f"s{i}"))
    single = compositions(tmp_path / "one")
    assert len(single["canonical"]) == 2000 and set(single) == {
        "canonical", "episodic", "semantic", "procedural", "provenance",
    }
    assert union(parts) == single
    assert sum(len(p["canonical"]) for p in parts) == 2000  # disjoint


def _docs(root: Path) -> dict[int, list[Path]]:
    """Twelve small notes under `root/docs`, grouped by their shard of 2 (origins are relative to the cwd)."""
    by_shard: dict[int, list[Path]] = {1: [], 2: []}
    for i in range(12):
        path = root / "docs" / f"note{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {i}\n\nA widget{i} is a gadget that keeps state number {i}.\n")
        by_shard[shard_of(f"docs/note{i}.md", 2)].append(path)
    assert by_shard[1] and by_shard[2]
    return by_shard


def test_sync_is_scoped_to_the_shard(brain: BrainRunner, tmp_path: Path) -> None:
    by_shard = _docs(tmp_path)
    assert brain("init").code == 0
    assert brain(*ACTOR, "ingest", "docs").code == 0  # the whole corpus, as a published head holds it
    # Shard 1 of the same corpus with --sync: the other shard's sources were not seen, and stay.
    run = brain(*ACTOR, "ingest", "docs", "--shard", "1/2", "--sync", "--json")
    assert run.code == 0, run.stderr
    assert run.json()["missing"] == [] and run.json()["shard"]["skipped"] == len(by_shard[2])
    # A deleted file of each shard: shard 1's --sync drops only its own, and does not even report the other.
    gone_mine, gone_theirs = by_shard[1][0], by_shard[2][0]
    gone_mine.unlink()
    gone_theirs.unlink()
    run = brain(*ACTOR, "ingest", "docs", "--shard", "1/2", "--sync", "--json")
    assert run.code == 0, run.stderr
    assert [(m["origin"], m["action"]) for m in run.json()["missing"]] == [(f"docs/{gone_mine.name}", "dropped")]
    run = brain(*ACTOR, "ingest", "docs", "--shard", "2/2", "--json")
    assert [(m["origin"], m["action"]) for m in run.json()["missing"]] == [(f"docs/{gone_theirs.name}", "missing")]


def test_base_is_checked_before_anything_is_written(brain: BrainRunner, tmp_path: Path) -> None:
    by_shard = _docs(tmp_path)
    assert brain("init").code == 0
    assert_one_line_error(brain(*ACTOR, "ingest", "docs", "--base", "sha256:" + "ab" * 32), 4)
    assert_one_line_error(brain(*ACTOR, "ingest", "docs", "--base", "registry.example.org/x:latest"), 4)
    assert brain(*ACTOR, "ingest", str(by_shard[1][0]), "--base", "empty").code == 0
    base = Brain.open(tmp_path / "brain").snapshot_digest()
    assert base is not None
    # The brain is no longer empty: `--base empty` refuses (a shard must start where the others do).
    assert_one_line_error(brain(*ACTOR, "ingest", "docs", "--base", "empty"), 5)
    assert Brain.open(tmp_path / "brain").snapshot_digest() == base
    # From the base, and again from a descendant of it (a shard job re-run after a kill).
    assert brain(*ACTOR, "ingest", str(by_shard[1][1]), "--shard", "1/2", "--base", str(base)).code == 0
    run = brain(*ACTOR, "ingest", "docs", "--shard", "1/2", "--base", str(base), "--json")
    assert run.code == 0, run.stderr
    assert run.json()["shard"]["base"] == str(base)
    # Another brain's history is no base of this one.
    other = tmp_path / "other"
    shutil.copytree(tmp_path / "brain", other)
    assert brain("--brain", str(other), *ACTOR, "ingest", str(by_shard[2][0])).code == 0
    foreign = Brain.open(other).snapshot_digest()
    assert foreign is not None
    shutil.copy(other / "blobs" / "sha256" / foreign.hex, tmp_path / "brain" / "blobs" / "sha256" / foreign.hex)
    head = Brain.open(tmp_path / "brain").snapshot_digest()
    refused = brain(*ACTOR, "ingest", "docs", "--base", str(foreign))
    assert_one_line_error(refused, 5)
    assert "does not descend from the base" in refused.stderr
    assert Brain.open(tmp_path / "brain").snapshot_digest() == head


def test_base_by_local_tag(brain: BrainRunner, tmp_path: Path) -> None:
    _docs(tmp_path)
    assert brain("init").code == 0
    assert brain(*ACTOR, "ingest", "docs", "--shard", "1/2").code == 0
    packed = brain("pack", "--tag", "v1")
    assert packed.code == 0, packed.stderr
    run = brain(*ACTOR, "ingest", "docs", "--shard", "2/2", "--base", "v1", "--json")
    assert run.code == 0, run.stderr
    assert run.json()["shard"]["base"] is not None
