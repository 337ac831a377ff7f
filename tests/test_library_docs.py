"""docs/library.md's code blocks run, in order, in a fresh directory holding a copy of fixtures/corpus/ as corpus/;
and the registry example it names runs against a real registry."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.registry import RegistryServer

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "library.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a Markdown text, in order."""
    return [match.group(1) for match in _BLOCK.finditer(text)]


def test_block_extraction() -> None:
    text = "a\n```python\nx = 1\n```\n```sh\nno\n```\n```python\ny = x\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = x\n"]


def test_library_md_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "fixtures" / "corpus", tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 6  # the page still shows the API
    namespace: dict[str, object] = {"__name__": "library_md"}
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"docs/library.md block {number}", "exec"), namespace)  # noqa: S102 - our own docs
    assert (tmp_path / "lumen" / "oci-layout").is_file()


def test_push_and_pull(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: RegistryServer) -> None:
    from sdk import Brain

    shutil.copytree(ROOT / "fixtures" / "corpus" / "notes", tmp_path / "notes")
    monkeypatch.chdir(tmp_path)
    brain = Brain.init("lumen", actor="curator@example.org")
    brain.ingest(["notes"], license="CC0-1.0")
    ref = registry.ref("library-docs/lumen:v1")
    pushed = brain.push(ref)
    copy = Brain.pull(ref, tmp_path / "copy")
    assert copy.pulled is not None and str(copy.pulled.digest) == str(pushed.digest)
    assert copy.snapshot_digest() == brain.snapshot_digest()
    assert copy.verify().ok
    assert os.listdir(tmp_path / "copy" / "blobs" / "sha256")
