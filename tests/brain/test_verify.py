"""`verify_brain` on sound brains: the reference verifies clean; report shape; `--deep`; the code table."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from brain.brain import Brain
from brain.errors import NotFoundError
from brain.identity import OciDigest
from brain.verify import PROBLEM_CODES, Problem, Severity, VerifyReport, verify_brain
from brain.verify.compositions import UNPROVABLE, CompositionFacts, composition_problems, inspect_compositions, usable
from brain.concurrency import parallel_map
from tests.brain.verify_damage import (
    HEAD, MARKDOWN_BLOB, MARKDOWN_BLOCK, V1_CONFIG, blob_path, copy_brain, reference_source,
)

DOCS = Path(__file__).resolve().parents[2] / "README.md"


def test_reference_brain_verifies_clean_at_head() -> None:
    report = verify_brain(Brain.open(reference_source()))
    assert report.ok and report.problems == []
    assert report.snapshot == HEAD
    assert report.snapshots_checked == 10 and not report.partial_history
    assert {m: s.block_count for m, s in report.modules.items()} == {
        "canonical": 3,
        "episodic": 1,
        "semantic": 3,
        "procedural": 1,
        "provenance": 19,
    }
    assert report.modules["semantic"].root == "sha256:7f994fec0244b6e9d0805a8d3691bb499cff0884621ec504b72056e50d9925cc"
    assert report.modules["canonical"].blocks.resolvable == 3
    # Three source files; the Markdown's normalized view is the same file as its original.
    assert report.modules["canonical"].content.resolvable == 3


def test_reference_brain_verifies_clean_at_the_v1_snapshot() -> None:
    report = verify_brain(reference_source(), snapshot=OciDigest.parse(V1_CONFIG))
    assert report.ok and report.problems == []
    assert report.snapshot == V1_CONFIG
    assert report.snapshots_checked == 6


def test_json_document_shape() -> None:
    data = verify_brain(reference_source()).to_json()
    assert list(data)[:4] == ["ok", "snapshot", "modules", "problems"]
    assert data["ok"] is True
    assert set(data["modules"]["canonical"]) >= {"root", "block_count"}
    assert data["modules"]["canonical"]["blocks"] == {"resolvable": 3, "tombstoned": 0, "missing": 0}
    assert data["resolvability"] == {
        "blocks": {"resolvable": 27, "tombstoned": 0, "missing": 0},
        "content": {"resolvable": 3, "tombstoned": 0, "missing": 0},
    }


def test_problem_json_names_code_module_block_detail() -> None:
    report = VerifyReport(snapshot=HEAD)
    report.extend([Problem.of("blob-missing", "gone", module="canonical", block=MARKDOWN_BLOB)])
    (problem,) = report.to_json()["problems"]
    assert problem == {
        "code": "blob-missing",
        "module": "canonical",
        "block": MARKDOWN_BLOB,
        "detail": "gone",
        "severity": "error",
    }
    assert report.to_json()["ok"] is False


def test_only_errors_make_a_report_not_ok() -> None:
    report = VerifyReport(snapshot=HEAD)
    report.extend([Problem.of("history-partial", "shallow"), Problem.of("pipeline-version-drift", "newer")])
    assert report.ok
    assert report.count(Severity.INFO) == 1 and report.count(Severity.WARNING) == 1


def test_empty_brain_is_ok(tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "empty")
    report = verify_brain(brain)
    assert report.ok and report.snapshot is None and report.modules == {}


def test_unknown_snapshot_is_reported_missing() -> None:
    absent = OciDigest.parse("sha256:" + "cd" * 32)
    report = verify_brain(reference_source(), snapshot=absent)
    assert [(p.code, p.block) for p in report.problems] == [("snapshot-missing", str(absent))]


class FakePipelines:
    """A renormalizer with one pipeline at a chosen version producing chosen bytes."""

    def __init__(self, version: str | None, output: bytes | None = None) -> None:
        self.version, self.output, self.calls = version, output, 0

    def installed_version(self, pipeline: str) -> str | None:
        return self.version if pipeline == "text-nfc" else None

    def normalize(self, pipeline: str, source: Path) -> bytes:
        self.calls += 1
        return source.read_bytes() if self.output is None else self.output


def test_deep_reruns_the_recorded_pipeline_version() -> None:
    pipelines = FakePipelines("1")
    report = verify_brain(reference_source(), renormalizer=pipelines)
    assert report.ok and report.problems == [] and pipelines.calls == 1


def test_deep_reports_bytes_that_differ() -> None:
    report = verify_brain(reference_source(), renormalizer=FakePipelines("1", b"something else\n"))
    assert [(p.code, p.module, p.block) for p in report.problems] == [
        ("normalization-mismatch", "canonical", MARKDOWN_BLOB)
    ]
    assert not report.ok


@pytest.mark.parametrize(
    ("version", "code"), [("2+unicode-99", "pipeline-version-drift"), (None, "pipeline-not-installed")]
)
def test_deep_reports_drift_without_rerunning(version: str | None, code: str) -> None:
    pipelines = FakePipelines(version)
    report = verify_brain(reference_source(), renormalizer=pipelines)
    assert [(p.code, p.module, p.block) for p in report.problems] == [(code, "canonical", MARKDOWN_BLOCK)]
    assert report.ok and pipelines.calls == 0


def test_deep_skips_a_damaged_source(tmp_path: Path) -> None:
    root = copy_brain(tmp_path)
    blob_path(root, MARKDOWN_BLOB).unlink()
    pipelines = FakePipelines("1")
    report = verify_brain(root, renormalizer=pipelines)
    assert [p.code for p in report.problems] == ["blob-missing"] and pipelines.calls == 0


def test_every_code_is_documented_with_its_severity() -> None:
    text = DOCS.read_text(encoding="utf-8")
    documented = dict(re.findall(r"^\| `([a-z-]+)` \| (error|warning|info) \|", text, flags=re.MULTILINE))
    assert documented == {code: info.severity.value for code, info in PROBLEM_CODES.items()}


def test_codes_are_kebab_case_with_a_meaning_and_a_fix() -> None:
    for code, info in PROBLEM_CODES.items():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)+", code)
        assert info.meaning and info.fix


def test_fixture_copy_is_byte_identical(tmp_path: Path) -> None:
    root = copy_brain(tmp_path)
    data = blob_path(root, HEAD).read_bytes()
    assert "sha256:" + hashlib.sha256(data).hexdigest() == HEAD
    with pytest.raises(NotFoundError):
        Brain.open(root).blobs.get(OciDigest.parse("sha256:" + "ef" * 32))


def _pids(root: Path, items: list[int]) -> list[tuple[int, int]]:
    return [(item, os.getpid()) for item in items]


def test_parallel_map_uses_worker_processes_and_keeps_order() -> None:
    results = list(parallel_map(_pids, Path("."), list(range(40)), jobs=2, threshold=1))
    assert [item for item, _ in results] == list(range(40))
    assert os.getpid() not in {pid for _, pid in results}
    serial = list(parallel_map(_pids, Path("."), list(range(40)), jobs=2))  # under the threshold
    assert {pid for _, pid in serial} == {os.getpid()}


def test_composition_states_map_to_codes() -> None:
    digest = "sha256:" + "12" * 32
    cases = {
        "missing": "composition-missing",
        "corrupt": "composition-corrupt",
        "invalid": "composition-invalid",
        UNPROVABLE: "proof-invalid",
    }
    for state, code in cases.items():
        (problem,) = composition_problems(CompositionFacts(digest, state, "why"), "semantic", "here")
        assert (problem.code, problem.module, problem.block) == (code, "semantic", digest)
    assert composition_problems(CompositionFacts(digest, "ok"), "semantic", "here") == []
    assert usable(CompositionFacts(digest, UNPROVABLE)) and not usable(CompositionFacts(digest, "corrupt"))


def test_reference_compositions_prove_their_members() -> None:
    facts = inspect_compositions(
        reference_source(), ["sha256:15158afc748ba46e8700223a2be7c1e15a8b9b8abae91725eef325406eba870f"]
    )
    assert [(f.state, f.root, len(f.ids)) for f in facts] == [
        ("ok", "sha256:d3623701e36e62fe9f0f4466f0029db073562c921375d82f0c7f5a17379d6a2c", 3)
    ]
