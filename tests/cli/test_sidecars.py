"""One sidecar registry (`brain.store.sidecars`): the table in docs/DESIGN.md, the path literals in the code
and the files real commands leave under `boltzmann/` all agree with it.

The scan reads every package that exists (packages named in `PACKAGES` that are not there yet are
skipped), so a sidecar added later by any module is caught until it is registered.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from brain.store.sidecars import DIRECTORY, SIDECARS, markdown_table, sidecar_for
from tests.cli.conftest import BrainRunner

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("brain", "cli", "ingest", "oci", "retrieval", "serve", "export", "signers")
FIXTURES = ROOT / "fixtures" / "corpus"
_SPELLED = re.compile(rf"{DIRECTORY}(?:/[\w.-]+)+/?")


def _is_directory_name(node: ast.AST) -> bool:
    """`"boltzmann"` or `Path("boltzmann")`."""
    if isinstance(node, ast.Constant):
        return node.value == DIRECTORY
    return (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == DIRECTORY
    )


def _strings_after(nodes: list[ast.AST]) -> str | None:
    """`boltzmann/a/b` for `[... "boltzmann", "a", "b" ...]`-shaped nodes (None if the name is not there)."""
    for at, node in enumerate(nodes):
        if _is_directory_name(node):
            parts = [DIRECTORY]
            for later in nodes[at + 1 :]:
                if not (isinstance(later, ast.Constant) and isinstance(later.value, str)) or "/" in later.value:
                    break  # a part ends the path; a string with a slash is a path of its own
                parts.append(later.value)
            return "/".join(parts)
    return None


def _divided(node: ast.BinOp) -> list[ast.AST]:
    """The operands of `a / b / c`, left to right."""
    left = (
        _divided(node.left) if isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Div) else [node.left]
    )
    return [*left, node.right]


def sidecar_paths(source: str) -> Iterator[str]:
    """Every path under `boltzmann/` that `source` spells: tuples, `/` chains, `Path(...)` calls and strings."""
    inner: set[int] = set()  # the left parts of a `/` chain already read whole
    for node in ast.walk(ast.parse(source)):  # parents before children
        found: str | None = None
        if isinstance(node, ast.Tuple | ast.List):
            found = _strings_after(node.elts)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            if id(node) in inner:
                continue
            operands = _divided(node)
            inner.update(id(n) for n in ast.walk(node.left) if isinstance(n, ast.BinOp))
            found = _strings_after(operands)
        elif isinstance(node, ast.Call) and len(node.args) > 1:
            found = _strings_after(node.args)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _SPELLED.fullmatch(node.value):
            found = node.value.rstrip("/")
        if found is not None and found != DIRECTORY:
            yield found


def test_docs_show_the_registry() -> None:
    design = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    assert markdown_table() in design, "paste brain.store.sidecars.markdown_table() into docs/DESIGN.md"


def test_entries_are_distinct() -> None:
    names = [s.name for s in SIDECARS]
    assert len(names) == len(set(names)) and all(n.startswith(DIRECTORY + "/") for n in names)


def test_every_path_the_code_names_is_registered() -> None:
    scanned, unregistered = 0, []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else ():
            for found in sidecar_paths(path.read_text(encoding="utf-8")):
                scanned += 1
                if sidecar_for(found) is None:
                    unregistered.append(f"{path.relative_to(ROOT)}: {found}")
    assert unregistered == [], "add these to brain/store/sidecars.py (and the table in docs/DESIGN.md)"
    assert scanned >= len(SIDECARS) - 4  # the scan sees the code's own constants, not nothing


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('X = ("boltzmann", "head.json")', ["boltzmann/head.json"]),
        ('X = Path("boltzmann") / "cache" / "lineage.log"', ["boltzmann/cache/lineage.log"]),
        ('x = brain.path / "boltzmann" / "cache"', ["boltzmann/cache"]),
        ('for d in ("blobs", "boltzmann/cache"): pass', ["boltzmann/cache"]),
        ('for d in ("blobs/sha256", "boltzmann", "boltzmann/cache"): pass', ["boltzmann/cache"]),
        ('p = root.joinpath("boltzmann", "trust.json")', ["boltzmann/trust.json"]),
        ('message = "restore boltzmann/head.json from a copy"', []),
        ('doc = {"boltzmann": 1}', []),
    ],
)
def test_the_scan_sees_every_spelling(source: str, expected: list[str]) -> None:
    assert sorted(set(sidecar_paths(source))) == expected


def test_files_real_commands_leave_are_registered(brain: BrainRunner, tmp_path: Path) -> None:
    root = tmp_path / "b"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "page.html").write_text("<html><body><p>A shard is a slice of the cache.</p></body></html>")
    for args in (
        ("init",),
        ("--actor", "a@example.org", "ingest", str(FIXTURES)),
        ("--actor", "a@example.org", "ingest", str(notes)),
        ("--actor", "a@example.org", "ingest", "--dry-run", str(notes)),
        ("verify",),
        ("status",),
        ("log",),
        ("ls",),
        ("pack", "--tag", "v1"),
        ("tags",),
    ):
        run = brain("--brain", str(root), *args)
        assert run.code == 0, (args, run)
    written = sorted(
        path.relative_to(root).as_posix()
        for path in (root / DIRECTORY).rglob("*")
        if path.is_file() and not path.name.startswith(".tmp-")
    )
    assert {"boltzmann/head.json", "boltzmann/fingerprints.json", "boltzmann/layers.json"} <= set(written)
    assert [name for name in written if sidecar_for(name) is None] == []
