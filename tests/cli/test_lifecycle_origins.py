"""Lifecycle commands name a source by its origin as `show` does (the shared `cli.targets` resolver), and
`show` reads one block's ledger from the lineage log with output byte-identical to the full ledger's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from brain.blocks import MemoryType
from brain.brain import Brain
from brain.identity import BlockId
from ingest.block_ledger import LedgerReader
from ingest.lineage import LOG
from ingest.lineage_graph import graph_of
from tests.cli.conftest import TWIN_PREFIX, BrainRunner, assert_one_line_error
from tests.cli.test_lifecycle_redact import _grep, _phrase
from tests.cli.test_lifecycle_sync import ACTOR, _docs, _ingest


def _corpus(brain: BrainRunner, tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    docs, path = _docs(tmp_path), tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    return docs, path, _ingest(brain, path, docs)


def _origin_of(report: dict[str, Any], path: Path) -> tuple[str, str]:
    """(origin, block id) of an ingested text source that has validated facts."""
    source = next(o for o in report["outcomes"] if o["validated"] > 0 and o["media_type"] == "text/plain")
    block = str(Brain.open(path).resolve_prefix(source["block"]))
    listed = {item["block_id"]: item for item in _ls(path, "canonical")}
    return listed[block]["origin"], block


def _ls(path: Path, memory_type: str) -> list[dict[str, Any]]:
    """The members of `memory_type` with the origins the full ledger registers them under."""
    brain = Brain.open(path)
    ledger = brain.ledger()
    module = brain.modules()[MemoryType(memory_type)]
    return [{"block_id": str(b), "origin": getattr(ledger.registrations.get(b), "origin", None)}
            for b in module.block_ids]


def test_drop_dry_run_names_a_source_by_origin(brain: BrainRunner, tmp_path: Path) -> None:
    _, path, report = _corpus(brain, tmp_path)
    origin, block = _origin_of(report, path)
    assert "/" in origin and not origin.startswith("/")
    by_origin = brain("--brain", str(path), "drop", origin, "--reason", "r", "--allow-canonical", "--dry-run", "--json")
    by_id = brain("--brain", str(path), "drop", block, "--reason", "r", "--allow-canonical", "--dry-run", "--json")
    assert by_origin.code == 0, by_origin
    assert by_origin.json() == by_id.json() and by_origin.json()["removals"]["canonical"] == [block]
    assert by_origin.json()["dry_run"] is True and by_origin.json()["snapshot"] is None


def test_unknown_origin_is_one_line_and_ambiguous_prefix_lists_candidates(brain: BrainRunner, tmp_path: Path) -> None:
    _, path, _ = _corpus(brain, tmp_path)
    for command in (["drop", "--reason", "r"], ["redact", "--reason", "r"], ["demote"], ["show"]):
        run = brain(
            "--brain", str(path), *command, "docs/no-such-file.md", *(["--yes"] if command[0] == "redact" else [])
        )
        assert_one_line_error(run, 4)
        assert "docs/no-such-file.md" in run.stderr and "hint: " in run.stderr
    run = brain("--brain", str(path), "supersede", "docs/no-such-file.md", "docs/nor-this.md")
    assert_one_line_error(run, 4)


def test_an_ambiguous_prefix_still_lists_the_candidates(brain: BrainRunner,
                                                         twin_brain: tuple[Path, list[BlockId]]) -> None:
    path, twins = twin_brain
    for command in (["demote"], ["drop", "--reason", "r"], ["redact", "--reason", "r", "--yes"]):
        run = brain("--brain", str(path), *command, TWIN_PREFIX)
        assert_one_line_error(run, 4)
        assert "matches 2" in run.stderr and all(t.short in run.stderr for t in twins), run.stderr


def test_redact_by_origin_destroys_the_text(brain: BrainRunner, tmp_path: Path) -> None:
    docs, path, report = _corpus(brain, tmp_path)
    origin, block = _origin_of(report, path)
    text = (docs.parent / origin).read_text(errors="replace")
    phrase = _phrase(text)
    assert _grep(path, phrase)
    run = brain("--brain", str(path), "--actor", ACTOR, "redact", origin, "--reason", "leaked", "--yes", "--json")
    assert run.code == 0, run
    assert run.json()["tombstoned"]["canonical"] == [block]
    assert _grep(path, phrase) == []
    assert brain("--brain", str(path), "verify").code == 0


def test_supersede_and_demote_by_origin(brain: BrainRunner, tmp_path: Path) -> None:
    _, path, report = _corpus(brain, tmp_path)
    sources = [o for o in report["outcomes"] if o["status"] == "registered"]
    listed = {item["block_id"]: item["origin"] for item in _ls(path, "canonical")}
    b = Brain.open(path)
    (old, old_id), (new, new_id) = [(listed[str(b.resolve_prefix(s["block"]))], str(b.resolve_prefix(s["block"])))
                                    for s in sources[:2]]
    run = brain("--brain", str(path), "--actor", ACTOR, "supersede", old, new, "--reason", "newer", "--json")
    assert run.code == 0, run
    assert run.json()["blocks"] == [old_id, new_id]
    shown = brain("--brain", str(path), "show", old_id, "--json").json()
    assert shown["ledger"]["accessible"] is False and shown["ledger"]["superseded_by"] == [new_id]
    run = brain("--brain", str(path), "--actor", ACTOR, "demote", new, "--reason", "stale", "--json")
    assert run.code == 0 and run.json()["blocks"] == [new_id], run
    assert brain("--brain", str(path), "show", new, "--json").json()["ledger"]["demotion"]["reason"] == "stale"


def _shows(brain: BrainRunner, path: Path, blocks: list[str]) -> list[tuple[int, str, str, str]]:
    found = []
    for block in blocks:
        text = brain("--brain", str(path), "show", block)
        data = brain("--brain", str(path), "show", block, "--json")
        found.append((text.code, text.stdout + text.stderr, data.stdout, data.stderr))
    return found


def _compare_both_paths(brain: BrainRunner, path: Path) -> int:
    """`show` of every member with a current lineage log equals `show` from the full ledger (log removed)."""
    b = Brain.open(path)
    snapshot = b.snapshot_digest()
    assert snapshot is not None
    graph_of(b, snapshot)  # what any ingest or lifecycle command leaves: a log describing the head
    assert LedgerReader(b).lineage is not None, "the fast path must be the one under test"
    blocks = [str(i) for m in b.modules().values() for i in m.block_ids]
    fast = _shows(brain, path, blocks)
    (path / LOG).unlink()
    assert LedgerReader(b).lineage is None
    slow = _shows(brain, path, blocks)
    assert fast == slow
    return sum(1 for code, *_ in fast if code == 0)


def test_show_from_the_log_equals_show_from_the_ledger_on_the_reference_brain(
    brain: BrainRunner, reference_brain: Path
) -> None:
    assert _compare_both_paths(brain, reference_brain) > 0


def test_show_from_the_log_equals_show_from_the_ledger_on_an_ingested_corpus(
    brain: BrainRunner, tmp_path: Path
) -> None:
    _, path, report = _corpus(brain, tmp_path)
    sources = [o for o in report["outcomes"] if o["status"] == "registered"]
    b = Brain.open(path)
    first, second, third = (str(b.resolve_prefix(s["block"])) for s in sources[:3])
    # Supersessions, demotions and a drop (removal records, stale facts in the log) are all in play.
    assert brain("--brain", str(path), "--actor", ACTOR, "supersede", first, second, "--reason", "r").code == 0
    fact = next(i for i in b.ledger().closure(b.resolve_prefix(third)))
    assert brain("--brain", str(path), "--actor", ACTOR, "demote", str(fact), "--reason", "r").code == 0
    assert brain("--brain", str(path), "--actor", ACTOR, "drop", third, "--reason", "r", "--allow-canonical",
                 "--yes").code == 0
    assert _compare_both_paths(brain, path) > 10
