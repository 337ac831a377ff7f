"""Dependencies point one way (`cli → ingest, oci → brain`): an AST check of every import statement.

Imports inside functions and `if TYPE_CHECKING:` blocks count too; a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Every first-party package, existing or arriving: a package that is not there yet is skipped, so adding one
# here is how it joins the checks. `cli` is the top; consumer-side packages sit at the ingest/oci level.
PACKAGES = ("brain", "ingest", "oci", "cli", "retrieval", "serve", "export", "signers", "sdk")
TERMINAL = frozenset({"typer", "rich"})
NETWORK = frozenset({"oras", "requests", "httpx", "openai", "urllib3", "aiohttp", "mcp"})

FORBIDDEN: dict[str, frozenset[str]] = {
    "brain": frozenset({"cli", "ingest", "oci", "retrieval", "serve", "export", "signers", "sdk"}) | TERMINAL | NETWORK,
    "ingest": frozenset({"oci", "cli", "serve", "export", "sdk"}) | TERMINAL,
    "oci": frozenset({"ingest", "cli", "serve", "export", "sdk"}) | TERMINAL,
    # cli → serve → retrieval → brain: the consumer side reads brains and never builds or moves them.
    "retrieval": frozenset({"cli", "ingest", "oci", "serve", "export", "mcp", "sdk"}) | TERMINAL,
    "serve": frozenset({"cli", "ingest", "oci", "sdk"}) | TERMINAL,
    "export": frozenset({"cli", "ingest", "oci", "sdk"}) | TERMINAL,
    # Key files and the ssh-agent socket: depends on `brain` only.
    "signers": frozenset({"cli", "ingest", "oci", "retrieval", "serve", "export", "sdk"}) | TERMINAL | NETWORK,
    # The Python API composes ingest, oci, retrieval and signers over brain; the terminal and the CLI are above it.
    "sdk": frozenset({"cli", "serve", "export"}) | TERMINAL,
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


def _sources(package: str) -> list[Path]:
    """The package's modules (none when the package does not exist yet)."""
    return sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else []


def violations(package: str) -> list[str]:
    """`path: imports name` for every forbidden import under `package/`."""
    found = []
    for path in _sources(package):
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


# --- network access stays in the proposers ------------------------------------------------------------------

# Standard-library modules that open connections (the parsing ones, like urllib.parse, are fine anywhere).
NETWORK_STDLIB = ("socket", "ssl", "http.client", "http.server", "urllib.request", "ftplib", "smtplib")


def imported_modules(source: str) -> set[str]:
    """The full dotted name of every absolute import in `source` (lazy and TYPE_CHECKING ones included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and _is_dynamic_import(node):
            names.add(node.args[0].value)  # type: ignore[attr-defined]
    return names


def _is_network(name: str) -> bool:
    return name.split(".")[0] in NETWORK or any(name == m or name.startswith(m + ".") for m in NETWORK_STDLIB)


def test_ingest_reaches_the_network_only_through_proposers() -> None:
    outside = [p for p in _sources("ingest") if "proposers" not in p.relative_to(ROOT / "ingest").parts]
    assert outside  # the check is not vacuous
    found = [
        f"{path.relative_to(ROOT)}: imports {name}"
        for path in outside
        for name in sorted(imported_modules(path.read_text(encoding="utf-8")))
        if _is_network(name)
    ]
    assert found == []


@pytest.mark.parametrize(
    ("name", "network"),
    [("openai", True), ("http.client", True), ("socket", True), ("urllib.parse", False), ("http", False)],
)
def test_network_names(name: str, network: bool) -> None:
    assert _is_network(name) is network


# --- no import cycles between modules -----------------------------------------------------------------------

# Deliberate ones, each an edge whose removal leaves no cycle. Any other cycle fails below.
ALLOWED_EDGES = {
    # `Block.decode`/`Block.from_payload` are the facade over the decoder, which needs every block class;
    # it is imported when first called.
    ("brain.blocks.base", "brain.blocks.decode"),
    # The writer annotates the `Brain` it writes to (type checkers only); `Brain.writer()` builds it.
    ("brain.writer", "brain.brain"),
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in _sources(package):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(source: str) -> Iterator[str]:
    """Dotted names `source` imports: at module level, in functions and under TYPE_CHECKING alike (a cycle
    for type checkers only still ties the two modules together)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Module → the first-party modules it imports, from module name → source text.

    A name resolves to its longest prefix that is a module: `from pkg import submodule` is an edge to the
    submodule, `from pkg.mod import name` one to `pkg.mod`. Parent packages a submodule import runs first
    are not edges (Python initializes them before the importer continues).
    """

    def resolve(name: str) -> str | None:
        while name and name not in sources:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, source in sources.items():
        targets = {resolve(name) for name in _imports(source)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_no_import_cycles_between_modules() -> None:
    graph = import_graph({name: path.read_text(encoding="utf-8") for name, path in _modules().items()})
    assert len(graph) > 100  # the scan saw the code base
    for importer, imported in ALLOWED_EDGES:
        graph[importer].discard(imported)
    assert sorted(sorted(c) for c in cycles(graph)) == []


def test_cycle_finder_sees_lazy_and_type_checking_imports() -> None:
    sources = {
        "a": "import b\n",
        "b": "def f():\n    from c import x\n",
        "c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a import y\n",
        "d": "import a\nfrom c import z\n",
    }
    assert cycles(import_graph(sources)) == [frozenset({"a", "b", "c"})]


# --- commands are thin: no command writes, deletes or locks --------------------------------------------------

# What only the library does: take the writer lock, write or delete a file. A command parses, calls one
# use case and renders (docs/DESIGN.md, cli/); these calls in `cli/` are the symptom of a use case left there.
WRITING_CALLS = frozenset({
    "WriterLock", "atomic_write", "atomic_write_stream", "write_head", "sweep_temps", "writer",
    "remove", "unlink", "rmdir", "removedirs", "rename", "replace", "rmtree", "move", "copy", "copy2", "copyfile",
    "copytree", "write_bytes", "write_text", "touch", "mkdir", "makedirs", "delete",
})  # fmt: skip
_WRITE_MODES = ("w", "a", "x", "+")

def writing_calls(source: str) -> set[str]:
    """Names of the calls in `source` that write, delete or lock (`open(...)` only when its mode writes)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "open" and _opens_for_writing(node):
            found.add("open")
        elif name in WRITING_CALLS and not (isinstance(func, ast.Attribute) and _is_str_method(func, name)):
            found.add(name)
    return found


def _opens_for_writing(node: ast.Call) -> bool:
    mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(m in mode.value for m in _WRITE_MODES)


_AMBIGUOUS = frozenset({"replace", "copy", "remove", "move", "rename"})  # also str, list, dict and set methods


def _is_str_method(func: ast.Attribute, name: str) -> bool:
    """`text.replace("|", "/")`, `rows.copy()`, `seen.remove(x)`: not file operations. These names count only
    when called on the `os` or `shutil` module."""
    if name not in _AMBIGUOUS:
        return False
    return not (isinstance(func.value, ast.Name) and func.value.id in ("os", "shutil"))


def test_commands_neither_write_nor_delete_nor_lock() -> None:
    found = []
    for path in _sources("cli"):
        relative = path.relative_to(ROOT).as_posix()
        calls = writing_calls(path.read_text(encoding="utf-8"))
        found += [f"{relative}: calls {name}" for name in sorted(calls)]
    assert found == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("with WriterLock(path):\n    pass", {"WriterLock"}),
        ("with context.writer(brain) as w:\n    w.commit()", {"writer"}),
        ("path.write_bytes(data)", {"write_bytes"}),
        ("open(path, 'w')", {"open"}),
        ("open(path, mode='ab')", {"open"}),
        ("open(path)\nopen(path, 'rb')", set()),
        ("os.unlink(p)\nshutil.rmtree(d)\nbrain.blobs.delete(d)", {"unlink", "rmtree", "delete"}),
        ("write_head(root, head)\natomic_write(p, b'')", {"write_head", "atomic_write"}),
        ("text.replace('|', '/')\nrows.copy()\nseen.remove(x)", set()),
        ("os.replace(a, b)\nshutil.copy(a, b)", {"replace", "copy"}),
    ],
)
def test_writing_call_scanner(source: str, expected: set[str]) -> None:
    assert writing_calls(source) == expected
