"""What `brain` loads at start-up. `import cli.main` loads no command module and none of the core's models:
a command's module loads when the command is looked up. `brain --help` imports every command module (typer
needs each signature), so what only one command uses must load inside that command, or `brain --help` and
`brain ingest` pay for signing, search and verify."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Heavy, and each needed by some commands only: the authentication stack and `cryptography` (verify,
# signatures, --sign-with), the search engine and sqlite (search, cat), the checks (verify), the ingest run,
# the lineage log and the gate (ingest, show, the lifecycle commands), the proposers, standalone click (serve).
LOADED_ON_DEMAND = (
    "cryptography",
    "brain.authenticity",
    "brain.authn.decision",
    "brain.verify",
    "retrieval.query",
    "retrieval.index",
    "sqlite3",
    "ingest.run",
    "ingest.lineage",
    "ingest.validate",
    "brain.gate",
    "brain.reconcile",
    "ingest.proposers",
    "ingest.report",
    "click",
)


def test_building_the_cli_loads_no_command_specific_stack() -> None:
    probe = (
        "import sys, typer\n"
        "from cli.main import app\n"
        "group = typer.main.get_command(app)\n"
        "[group.commands[name] for name in group.commands]\n"  # every command's parameters, as `--help` builds them
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = set(subprocess.run([sys.executable, "-c", probe], cwd=ROOT, check=True, capture_output=True,
                                text=True).stdout.split())
    assert "cli.commands.verify" in loaded and "cli.commands.search" in loaded  # the probe saw the commands
    assert sorted(loaded & set(LOADED_ON_DEMAND)) == []


# What `import cli.main` must not load: the models (pydantic) and the terminal renderer (rich) load when a
# command runs, the engines when the command that needs them does.
NOT_AT_IMPORT = (
    "pydantic", "rich", "brain.blocks", "brain.brain", "brain.store.blobs", "retrieval", "oci", "ingest", "serve",
    "sdk", "openai", "numpy", "cryptography", "importlib.metadata",
)


def _modules_after(probe: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", probe + "print('\\n'.join(sorted(sys.modules)))\n"], cwd=ROOT,
                          check=True, capture_output=True, text=True)
    return set(done.stdout.split())


def test_importing_the_cli_loads_no_command_and_no_model() -> None:
    loaded = _modules_after("import sys\nimport cli.main\n")
    assert "cli.main" in loaded and "typer" in loaded  # the probe saw the import
    assert sorted(m for m in loaded if any(m == p or m.startswith(p + ".") for p in NOT_AT_IMPORT)) == []
    assert sorted(m for m in loaded if m.startswith("cli.commands.")) == []


def test_running_a_command_loads_that_command_only() -> None:
    loaded = _modules_after(
        "import contextlib, io, sys\nfrom cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['version']) == 0\n"
    )
    assert sorted(m for m in loaded if m.startswith("cli.commands.")) == ["cli.commands.version"]


# What an ingest that finds every source unchanged never needs: the heuristic's scan (it asks no question) and
# the ignore-pattern engine (the tree has no ignore file).
NOT_ON_AN_UNCHANGED_INGEST = ("ingest.proposers.extraction", "ingest.proposers.rules", "pathspec")


def test_an_ingest_with_nothing_to_ask_loads_no_scan(tmp_path: Path) -> None:
    docs, brain = tmp_path / "docs", str(tmp_path / "brain")
    docs.mkdir()
    for i in range(3):
        (docs / f"note{i}.md").write_text(f"# Note {i}\n\nA widget {i} is a small part of machine {i}.\n")
    run = (
        "import contextlib, io, sys\nfrom cli.main import main\n"
        f"args = ['--brain', {brain!r}, '--actor', 'ci@example.org', '-q', 'ingest', {str(docs)!r}]\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    assert main(args) == 0\n"
    )
    _modules_after(f"import sys\nfrom cli.main import main\nassert main(['--brain', {brain!r}, '-q', 'init']) == 0\n")
    first = _modules_after(run)
    assert "ingest.proposers.extraction" in first  # the first run asked: the probe sees the scan load
    again = _modules_after(run)
    assert "ingest.run" in again  # the probe saw the ingest
    assert sorted(m for m in again if any(m == p or m.startswith(p + ".") for p in NOT_ON_AN_UNCHANGED_INGEST)) == []
