"""`--license` is checked as an SPDX expression and recorded canonically; `--license-unchecked` records
anything else as written (issue 12, item 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.brain import Brain
from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.cli.test_ingest_cli_replace import _write

ACTOR = "curator@example.org"


@pytest.fixture
def setup(brain: BrainRunner, tmp_path: Path) -> tuple[Path, Path]:
    root = _write(tmp_path / "src", {"a.md": "# A\n\nAlpha is a letter.\n"})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    return root, brain_dir


def _licenses(brain_dir: Path) -> list[str | None]:
    return [r.license for r in Brain.open(brain_dir).ledger().registrations.values()]


@pytest.mark.parametrize(
    ("given", "recorded"),
    [
        ("mit or apache-2.0", "MIT OR Apache-2.0"),
        ("GPL-2.0+", "GPL-2.0-or-later"),
        ("gpl-3.0-only WITH classpath-exception-2.0", "GPL-3.0-only WITH Classpath-exception-2.0"),
        ("LicenseRef-acme-internal AND (CC-BY-4.0 OR MIT)", "LicenseRef-acme-internal AND (CC-BY-4.0 OR MIT)"),
    ],
)
def test_spdx_expressions_are_recorded_canonically(
    brain: BrainRunner, setup: tuple[Path, Path], given: str, recorded: str
) -> None:
    root, brain_dir = setup
    run = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--license", given)
    assert run.code == 0, run
    assert _licenses(brain_dir) == [recorded]


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("Apache 2", "did you mean Apache-2.0?"),
        ("CC BY 4.0", "did you mean CC-BY-4.0?"),
        ("Proprietary", "--license-unchecked TEXT"),
        ("MIT AND (", "not an SPDX license expression"),
        ("MIT WITH MIT", "not an SPDX license expression"),
        ("  ", "--license is empty"),
    ],
)
def test_anything_else_is_a_usage_error_and_writes_nothing(
    brain: BrainRunner, setup: tuple[Path, Path], given: str, says: str
) -> None:
    root, brain_dir = setup
    run = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--license", given)
    assert_one_line_error(run, 3)
    assert says in run.stderr, run.stderr
    assert Brain.open(brain_dir).snapshot() is None


def test_license_unchecked_records_the_text_as_written(brain: BrainRunner, setup: tuple[Path, Path]) -> None:
    root, brain_dir = setup
    both = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--license", "MIT",
                 "--license-unchecked", "x")  # fmt: skip
    assert_one_line_error(both, 3)
    run = brain(
        "--brain", str(brain_dir), "--actor", ACTOR, "ingest", str(root), "--license-unchecked",
        "Proprietary: ask legal",
    )
    assert run.code == 0, run
    assert _licenses(brain_dir) == ["Proprietary: ask legal"]
