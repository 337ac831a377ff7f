"""Every `brain` invocation imports every command module (typer needs each signature): what only one command
uses must load inside that command, or `brain --help` and `brain ingest` pay for signing, search and verify."""

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
        "typer.main.get_command(app)\n"  # every command's parameters, as an invocation builds them
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = set(subprocess.run([sys.executable, "-c", probe], cwd=ROOT, check=True, capture_output=True,
                                text=True).stdout.split())
    assert "cli.commands.verify" in loaded and "cli.commands.search" in loaded  # the probe saw the commands
    assert sorted(loaded & set(LOADED_ON_DEMAND)) == []
