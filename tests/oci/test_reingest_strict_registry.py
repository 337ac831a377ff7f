"""The CI flow on a real-style corpus: ingest, push, pull into a fresh directory, re-ingest with `--strict`.

The corpus is `fixtures/eval/docs/` (40 documents in every supported format, many sharing section names
such as "Installation", "Options", "License") plus copies of some under other names: the heuristic's
subjects must keep their facts apart, so neither run raises a contradiction, and the re-ingest of the
unchanged corpus into the pulled brain proposes and rejects nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.oci.test_registry_cli import run
from tests.registry import RegistryServer

pytestmark = pytest.mark.registry
EVAL = Path(__file__).resolve().parents[2] / "fixtures" / "eval" / "docs"


def _corpus(root: Path) -> Path:
    root.mkdir()
    for path in EVAL.iterdir():
        if not path.name.endswith(".expected.json"):
            shutil.copyfile(path, root / path.name)
    # The same kind of document from two projects: same headings, other statements.
    (root / "other").mkdir()
    (root / "other" / "README.md").write_text(
        "# Plover\n\nPlover is a metrics agent.\n\n## Installation\n\n1. Download it.\n2. Run it.\n\n"
        "## Glossary\n\n- Cell: one sample of one metric\n"
    )
    return root


def _ingest(tmp_path: Path, brain: str, corpus: Path) -> dict:
    done = run(tmp_path, "--brain", brain, "--actor", "ci@example.org", "ingest", "--strict", "--json", str(corpus))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


def test_pull_then_strict_reingest_of_an_unchanged_corpus(registry: RegistryServer, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    assert run(tmp_path, "--brain", "built", "init").returncode == 0
    first = _ingest(tmp_path, "built", corpus)
    assert first["rejected"] == 0 and first["rejected_by_code"] == {}
    assert first["validated"] >= 100
    assert first["problems_by_code"].get("contradiction") is None
    assert "gzip-broken" not in first["problems_by_code"] and "decode-error" not in first["problems_by_code"]

    ref = registry.ref("ci/docs:v1")
    assert run(tmp_path, "--brain", "built", "push", ref).returncode == 0
    pulled = run(tmp_path, "--brain", "fresh", "pull", ref)
    assert pulled.returncode == 0, pulled.stderr

    again = _ingest(tmp_path, "fresh", corpus)
    assert (again["proposed"], again["rejected"], again["validated"], again["blocks_added"]) == (0, 0, 0, 0)
    assert again["registered"] == again["replaced"] == 0
