"""Dependencies point one way (`cli → ingest, oci → brain`): an AST check of every import statement.

Imports inside functions and `if TYPE_CHECKING:` blocks count too; a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN: dict[str, frozenset[str]] = {
    "brain": frozenset(
        {"cli", "ingest", "oci", "retrieval", "serve", "export", "typer", "rich", "oras", "requests", "httpx", "openai", "mcp"}
    ),
    "ingest": frozenset({"oci", "cli"}),
    "oci": frozenset({"ingest", "cli"}),
    "signers": frozenset({"ingest", "oci", "cli", "typer", "rich", "oras", "requests", "httpx", "openai"}),
    # cli → serve → retrieval → brain: the consumer side reads brains and never builds or moves them.
    "retrieval": frozenset({"cli", "ingest", "oci", "serve", "typer", "rich", "mcp"}),
    "serve": frozenset({"cli", "ingest", "oci", "typer", "rich"}),
    "export": frozenset({"cli", "ingest", "oci", "typer", "rich"}),
}


def imported_top_levels(source: str) -> set[str]:
    """The top-level package of every absolute import in `source` (relative imports stay inside)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and _is_dynamic_import(node):
            names.add(node.args[0].value.split(".")[0])  # type: ignore[attr-defined]
    return names


def _is_dynamic_import(node: ast.Call) -> bool:
    """`importlib.import_module("x")` or `__import__("x")` with a literal name."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return (
        name in ("import_module", "__import__")
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def violations(package: str) -> list[str]:
    """`path: imports name` for every forbidden import under `package/`."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in sorted(imported_top_levels(path.read_text(encoding="utf-8")) & FORBIDDEN[package]):
            found.append(f"{path.relative_to(ROOT)}: imports {name}")
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_respects_dependency_direction(package: str) -> None:
    assert violations(package) == []


def test_brain_package_is_checked() -> None:
    # Guards against the check passing vacuously because the tree moved.
    assert any((ROOT / "brain").rglob("*.py"))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import rich.console", {"rich"}),
        ("from cli.output import Output", {"cli"}),
        ("from . import sibling\nfrom .x import y", set()),
        ("def f():\n    import oras.client\n", {"oras"}),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ingest import run\n", {"typing", "ingest"}),
        ("import importlib\nimportlib.import_module('openai')", {"importlib", "openai"}),
        ("__import__('httpx')", {"httpx"}),
    ],
)
def test_import_scanner_sees_every_form(source: str, expected: set[str]) -> None:
    assert imported_top_levels(source) == expected
