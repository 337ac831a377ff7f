"""The pipeline registry, and determinism of every pipeline across processes over the fixture corpus."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brain.errors import NotFoundError
from ingest.normalize import Pipeline, get_pipeline, installed_pipelines, pipeline_for
from ingest.sources import SourceFile, discover, read_head, sniff

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures" / "corpus"

_VIEWS_SCRIPT = """
import hashlib, json, sys
from pathlib import Path
from ingest.normalize import pipeline_for
from ingest.sources import SourceFile, discover, read_head, sniff
views = {}
for item in discover(Path(sys.argv[1]), [], []):
    pipeline = pipeline_for(sniff(item.path, read_head(item.path)).media_type)
    digest = hashlib.sha256(pipeline.normalize(item.path).data).hexdigest()
    views[item.relpath] = [pipeline.name, pipeline.version, digest]
print(json.dumps(views, sort_keys=True))
"""


@pytest.mark.parametrize(
    ("media_type", "name"),
    [
        ("text/plain", "text-nfc"), ("text/markdown", "text-nfc"), ("text/html", "html-text"),
        ("application/pdf", "pdf-text"),
    ],
)
def test_pipeline_for(media_type: str, name: str) -> None:
    pipeline = pipeline_for(media_type)
    assert pipeline is not None and pipeline.name == name
    assert isinstance(pipeline, Pipeline)
    assert get_pipeline(name) is pipeline


@pytest.mark.parametrize("media_type", ["application/octet-stream", "image/png", "application/json", "Text/Plain"])
def test_no_pipeline_for_other_types(media_type: str) -> None:
    assert pipeline_for(media_type) is None


def test_unknown_pipeline_name_lists_the_installed_ones() -> None:
    with pytest.raises(NotFoundError, match="no normalization pipeline named 'ocr'") as caught:
        get_pipeline("ocr")
    assert caught.value.hint == (
        "installed: gzip+html-text, gzip+man-text, gzip+text-nfc, html-text, man-text, pdf-text, text-nfc"
    )


def test_installed_pipelines_names_versions() -> None:
    installed = installed_pipelines()
    assert list(installed) == [
        "gzip+html-text", "gzip+man-text", "gzip+text-nfc", "html-text", "man-text", "pdf-text", "text-nfc"
    ]
    assert all(version.startswith("1+") for version in installed.values())


def _views_in_this_process() -> dict[str, list[str]]:
    views = {}
    for item in discover(CORPUS, [], []):
        assert isinstance(item, SourceFile), item
        guess = sniff(item.path, read_head(item.path))
        assert guess.note is None
        pipeline = pipeline_for(guess.media_type)
        assert pipeline is not None, item.relpath
        data = pipeline.normalize(item.path).data
        views[item.relpath] = [pipeline.name, pipeline.version, hashlib.sha256(data).hexdigest()]
    return views


def test_views_are_byte_identical_in_another_process() -> None:
    here = _views_in_this_process()
    assert {name for name, _, _ in here.values()} == {"text-nfc", "html-text", "pdf-text"}
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", _VIEWS_SCRIPT, str(CORPUS)], capture_output=True, check=True, cwd=ROOT, env=env
    )
    assert json.loads(done.stdout) == here
