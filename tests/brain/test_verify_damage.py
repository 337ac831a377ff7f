"""`verify_brain` on damaged copies of the reference brain: each damage gives the exact code and location."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from brain.blocks import Block
from brain.errors import BrainUnreadableError
from brain.verify import Severity, VerifyReport, verify_brain
from tests.brain.verify_damage import (
    CANONICAL_COMPOSITION,
    DROPPED_SEMANTIC_BLOCK,
    EPISODE_BLOCK,
    FOURIER_SERIES_BLOCK,
    HEAD,
    LAPLACE_BLOCK,
    MARKDOWN_BLOB,
    MARKDOWN_BLOCK,
    PDF_BLOB,
    PDF_SOURCE_BLOCK,
    blob_path,
    commit_modules,
    copy_brain,
    derivation,
    flip_byte,
    members,
    read_json,
    store_block,
    store_json,
    write_head,
)

FAKE = "sha256:" + "ab" * 32


def errors(report: VerifyReport) -> set[tuple[str, str | None, str | None]]:
    """(code, module, block) of every error."""
    return {(p.code, p.module, p.block) for p in report.problems if p.severity is Severity.ERROR}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_brain(tmp_path)


def test_flipped_byte_in_a_block(root: Path) -> None:
    flip_byte(root, LAPLACE_BLOCK)
    report = verify_brain(root)
    assert not report.ok
    assert errors(report) == {("block-corrupt", "semantic", LAPLACE_BLOCK)}
    assert report.modules["semantic"].blocks.missing == 1


def test_flipped_byte_in_a_source_blob(root: Path) -> None:
    flip_byte(root, PDF_BLOB, offset=3)
    report = verify_brain(root)
    assert errors(report) == {("blob-corrupt", "canonical", PDF_BLOB)}
    (problem,) = report.problems
    assert PDF_SOURCE_BLOCK in problem.detail and "source" in problem.detail
    assert report.modules["canonical"].content.missing == 1


def test_flipped_byte_in_a_composition(root: Path) -> None:
    flip_byte(root, CANONICAL_COMPOSITION, offset=40)
    report = verify_brain(root)
    # Every snapshot naming it shares the one file: one finding, and no false ledger cascade.
    assert errors(report) == {("composition-corrupt", "canonical", CANONICAL_COMPOSITION)}


def test_deleted_source_blob(root: Path) -> None:
    blob_path(root, MARKDOWN_BLOB).unlink()
    report = verify_brain(root)
    # The file is both the original and the normalized view: reported once.
    assert [(p.code, p.module, p.block) for p in report.problems] == [("blob-missing", "canonical", MARKDOWN_BLOB)]
    assert report.modules["canonical"].content.missing == 1


def test_deleted_block(root: Path) -> None:
    blob_path(root, EPISODE_BLOCK).unlink()
    report = verify_brain(root)
    assert errors(report) == {("block-missing", "episodic", EPISODE_BLOCK)}
    assert report.modules["episodic"].blocks.missing == 1


def test_head_pointing_at_an_absent_snapshot(root: Path) -> None:
    write_head(root, FAKE, retained=[FAKE, HEAD])
    report = verify_brain(root)
    assert report.snapshot == FAKE
    assert errors(report) == {("snapshot-missing", None, FAKE)}


def test_head_pointing_at_a_composition(root: Path) -> None:
    write_head(root, CANONICAL_COMPOSITION)
    report = verify_brain(root)
    assert errors(report) == {("snapshot-invalid", None, CANONICAL_COMPOSITION)}


def test_head_not_first_in_retained_is_a_warning(root: Path) -> None:
    head = json.loads((root / "boltzmann" / "head.json").read_bytes())
    write_head(root, HEAD, retained=[*head["retained"][1:], HEAD])
    report = verify_brain(root)
    assert report.ok
    assert [(p.code, p.severity) for p in report.problems] == [("head-not-retained", Severity.WARNING)]


def test_unparseable_head_makes_the_brain_unreadable(root: Path) -> None:
    (root / "boltzmann" / "head.json").write_bytes(b'{"snapshot": ')
    with pytest.raises(BrainUnreadableError):
        verify_brain(root)


def test_forged_derivation_citing_absent_evidence(root: Path) -> None:
    forged = store_block(root, "provenance", derivation(LAPLACE_BLOCK, [FAKE]))
    commit_modules(root, {"provenance": [*members(root, HEAD, "provenance"), forged]})
    report = verify_brain(root)
    assert errors(report) == {("evidence-not-found", "provenance", forged)}
    (problem,) = report.problems
    assert LAPLACE_BLOCK in problem.detail and FAKE in problem.detail


def test_episodic_block_removed_in_a_later_snapshot(root: Path) -> None:
    commit_modules(root, {"episodic": []})
    report = verify_brain(root)
    assert errors(report) == {("episodic-removed", "episodic", EPISODE_BLOCK)}


def test_episodic_removal_is_refused_even_with_a_removal_record(root: Path) -> None:
    record = store_block(root, "provenance", _removal([EPISODE_BLOCK], "episodic"))
    commit_modules(root, {"episodic": [], "provenance": [*members(root, HEAD, "provenance"), record]})
    assert errors(verify_brain(root)) == {("episodic-removed", "episodic", EPISODE_BLOCK)}


def test_semantic_block_dropped_without_a_removal_record(root: Path) -> None:
    expansion = next(b for b in members(root, HEAD, "semantic") if b.startswith("sha256:1a0b"))
    commit_modules(root, {"semantic": [b for b in members(root, HEAD, "semantic") if b != expansion]})
    assert errors(verify_brain(root)) == {("removal-unexplained", "semantic", expansion)}


def test_semantic_block_dropped_with_a_removal_record(root: Path) -> None:
    expansion = next(b for b in members(root, HEAD, "semantic") if b.startswith("sha256:1a0b"))
    record = store_block(root, "provenance", _removal([expansion], "semantic"))
    commit_modules(
        root,
        {
            "semantic": [b for b in members(root, HEAD, "semantic") if b != expansion],
            "provenance": [*members(root, HEAD, "provenance"), record],
        },
    )
    assert verify_brain(root).ok


def test_model_credited_with_a_canonical_block(root: Path) -> None:
    forged = store_block(root, "provenance", derivation(PDF_SOURCE_BLOCK, [MARKDOWN_BLOCK]))
    commit_modules(root, {"provenance": [*members(root, HEAD, "provenance"), forged]})
    assert errors(verify_brain(root)) == {("model-derived-protected", "canonical", PDF_SOURCE_BLOCK)}


def test_semantic_member_without_ledger_records(root: Path) -> None:
    block = store_block(root, "semantic", {"kind": "fact", "label": "x", "statement": "y"})
    commit_modules(root, {"semantic": [*members(root, HEAD, "semantic"), block]})
    report = verify_brain(root)
    assert errors(report) == {("derivation-missing", "semantic", block)}
    assert ("validation-missing", Severity.WARNING) in {(p.code, p.severity) for p in report.problems}


def test_evidence_mismatch_and_dangling_relation(root: Path) -> None:
    block = store_block(
        root,
        "semantic",
        {
            "evidence": [MARKDOWN_BLOCK],
            "kind": "fact",
            "label": "x",
            "relations": [{"predicate": "refines", "target": FAKE}],
            "statement": "y",
        },
    )
    record = store_block(root, "provenance", derivation(block, [PDF_SOURCE_BLOCK]))
    commit_modules(
        root,
        {
            "semantic": [*members(root, HEAD, "semantic"), block],
            "provenance": [*members(root, HEAD, "provenance"), record],
        },
    )
    assert errors(verify_brain(root)) == {
        ("evidence-mismatch", "semantic", block),
        ("relation-target-not-found", "semantic", block),
    }


def test_supersession_naming_a_block_that_never_was_a_member(root: Path) -> None:
    payload = {
        "record": {
            "actor": {"id": "forger@example.org", "kind": "human"},
            "at": "2026-12-01T00:00:00Z",
            "block": FOURIER_SERIES_BLOCK,
            "record_type": "supersession",
            "supersedes": FAKE,
        }
    }
    record = store_block(root, "provenance", payload)
    commit_modules(root, {"provenance": [*members(root, HEAD, "provenance"), record]})
    assert errors(verify_brain(root)) == {("record-target-unknown", "provenance", record)}


def test_root_and_count_mismatch(root: Path) -> None:
    snapshot = read_json(root, HEAD)
    ref = snapshot["modules"]["procedural"]
    ref["root"] = FAKE
    ref["block_count"] = 7
    forged = store_json(root, {**snapshot, "parent": HEAD, "created_at": "2026-12-01T00:00:00Z"})
    write_head(root, forged)
    assert errors(verify_brain(root)) == {
        ("root-mismatch", "procedural", ref["composition"]),
        ("block-count-mismatch", "procedural", ref["composition"]),
    }


def test_memory_type_mismatch(root: Path) -> None:
    snapshot = read_json(root, HEAD)
    ref = snapshot["modules"]["procedural"]
    episodic = snapshot["modules"]["episodic"]
    ref.update(composition=episodic["composition"], root=episodic["root"])
    forged = store_json(root, {**snapshot, "parent": HEAD, "created_at": "2026-12-01T00:00:00Z"})
    write_head(root, forged)
    found = errors(verify_brain(root))
    assert ("memory-type-mismatch", "procedural", episodic["composition"]) in found
    assert ("block-wrong-module", "procedural", EPISODE_BLOCK) in found


def test_missing_retained_snapshot_is_damage_but_an_unretained_ancestor_is_partial(root: Path) -> None:
    first = "sha256:bbf38dfc7183b3969bf0ce3d033672373fb823e0fb9511609401915683f6c637"
    blob_path(root, first).unlink()
    assert errors(verify_brain(root)) == {("snapshot-missing", None, first)}
    head = json.loads((root / "boltzmann" / "head.json").read_bytes())
    write_head(root, HEAD, retained=[d for d in head["retained"] if d != first])
    report = verify_brain(root)
    assert report.ok and report.partial_history
    assert [(p.code, p.severity) for p in report.problems] == [("history-partial", Severity.INFO)]


def test_redacted_member_counts_as_tombstoned(root: Path) -> None:
    snapshot = read_json(root, HEAD)
    snapshot["modules"]["episodic"]["tombstones"] = [EPISODE_BLOCK]
    forged = store_json(root, {**snapshot, "parent": HEAD, "created_at": "2026-12-01T00:00:00Z"})
    write_head(root, forged)
    blob_path(root, EPISODE_BLOCK).unlink()
    report = verify_brain(root)
    assert report.ok, report.problems
    assert report.modules["episodic"].blocks.tombstoned == 1


def test_parallel_workers_find_the_same_problems(root: Path) -> None:
    flip_byte(root, LAPLACE_BLOCK)
    blob_path(root, PDF_BLOB).unlink()
    serial = verify_brain(root, jobs=1)
    parallel = verify_brain(root, jobs=2, parallel_threshold=1)
    assert parallel.to_json() == serial.to_json()
    assert errors(parallel) == {("block-corrupt", "semantic", LAPLACE_BLOCK), ("blob-missing", "canonical", PDF_BLOB)}


def test_dropped_reference_block_is_explained(root: Path) -> None:
    # The reference head's last step dropped this semantic block with a removal record: no false positive.
    assert DROPPED_SEMANTIC_BLOCK not in members(root, HEAD, "semantic")
    assert verify_brain(root).ok


def _removal(blocks: list[str], memory_type: str) -> dict[str, object]:
    return {
        "record": {
            "actor": {"id": "curator@example.org", "kind": "human"},
            "at": "2026-12-01T00:00:00Z",
            "blocks": sorted(blocks),
            "mechanism": "drop",
            "memory_type": memory_type,
            "reason": "test",
            "record_type": "removal",
        }
    }


def test_missing_content_blob_of_a_later_schema_version(root: Path) -> None:
    content = b"out-of-line statement\n"
    digest = "sha256:" + hashlib.sha256(content).hexdigest()
    block = Block.from_payload(
        "semantic",
        {
            "content": {"blob": digest, "media_type": "text/plain", "size": len(content)},
            "evidence": [MARKDOWN_BLOCK],
            "kind": "fact",
            "label": "long",
            "statement": "see content",
        },
    )
    assert block.schema_version == 2
    blob_path(root, str(block.block_id)).write_bytes(block.canonical_bytes())
    record = store_block(root, "provenance", derivation(str(block.block_id), [MARKDOWN_BLOCK]))
    commit_modules(
        root,
        {
            "semantic": [*members(root, HEAD, "semantic"), str(block.block_id)],
            "provenance": [*members(root, HEAD, "provenance"), record],
        },
    )
    assert errors(verify_brain(root)) == {("blob-missing", "semantic", digest)}
    blob_path(root, digest).write_bytes(content + b"more")
    assert errors(verify_brain(root)) == {("blob-corrupt", "semantic", digest)}


def test_partial_pull_origin_is_reported_as_information(root: Path) -> None:
    _mark_selective_pull(root)
    report = verify_brain(root)
    assert report.ok and report.partial_history
    assert [(p.code, p.severity) for p in report.problems] == [("history-partial", Severity.INFO)]


def _mark_selective_pull(root: Path) -> None:
    head = json.loads((root / "boltzmann" / "head.json").read_bytes())
    head["origin"] = {"partial": True, "reference": "localhost:5000/brains/ref:v2", "snapshot": HEAD, "tag": "v2"}
    (root / "boltzmann" / "head.json").write_bytes(json.dumps(head, separators=(",", ":"), sort_keys=True).encode())


@pytest.mark.parametrize("left_out", [("semantic",), ("semantic", "procedural", "provenance")])
def test_modules_left_out_by_a_selective_pull_are_noted_not_blamed(root: Path, left_out: tuple[str, ...]) -> None:
    _mark_selective_pull(root)
    for module in left_out:
        for block_id in members(root, HEAD, module):
            blob_path(root, block_id).unlink()
    report = verify_brain(root)
    assert report.ok, report.problems
    notes = {(p.code, p.module) for p in report.problems if p.code == "module-not-installed"}
    assert notes == {("module-not-installed", module) for module in left_out}
    assert report.modules["semantic"].blocks.missing == 3


def test_missing_blocks_of_a_full_brain_are_still_errors(root: Path) -> None:
    for block_id in members(root, HEAD, "semantic"):
        blob_path(root, block_id).unlink()
    found = errors(verify_brain(root))
    assert {code for code, _, _ in found} == {"block-missing"} and len(found) == 3
