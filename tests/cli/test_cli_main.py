"""The entry point's error contract: one stderr line, one documented exit code, tracebacks only on --debug."""

from __future__ import annotations

import pytest

from brain.errors import (
    AmbiguousIdError,
    BrainError,
    CanonicalFormError,
    IntegrityError,
    InvalidInputError,
    LockTimeoutError,
    NotABrainError,
    NotFoundError,
    ProblemsFoundError,
    RefusedError,
    RemoteError,
    UntrustedArtifactError,
    UsageError,
)
from cli.exit_codes import EXIT_CODE_MEANINGS, ExitCode, exit_code_for
from tests.cli.conftest import BrainRunner, assert_one_line_error


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ProblemsFoundError("x"), 1),
        (NotABrainError("x"), 2),
        (IntegrityError("x"), 2),
        (UsageError("x"), 3),
        (InvalidInputError("x"), 3),
        (CanonicalFormError("x"), 3),
        (NotFoundError("x"), 4),
        (AmbiguousIdError("x"), 4),
        (LockTimeoutError("x"), 5),
        (RefusedError("x"), 5),
        (UntrustedArtifactError("x"), 6),
        (RemoteError("x"), 7),
        (BrainError("x"), 70),
    ],
)
def test_error_families_map_to_documented_codes(error: BrainError, code: int) -> None:
    assert exit_code_for(error) == code


def test_every_exit_code_is_documented() -> None:
    assert set(EXIT_CODE_MEANINGS) == set(ExitCode)


def test_bad_option_is_a_usage_error(brain: BrainRunner) -> None:
    run = brain("--no-such-option")
    assert_one_line_error(run, 3)
    assert "--no-such-option" in run.stderr


def test_bad_option_value_is_a_usage_error(brain: BrainRunner) -> None:
    run = brain("--lock-timeout", "soon", "status")
    assert_one_line_error(run, 3)
    assert "--lock-timeout" in run.stderr


def test_no_command_prints_help_and_is_a_usage_error(brain: BrainRunner) -> None:
    run = brain()
    assert run.code == 3
    assert "Usage: brain" in run.stderr and run.stdout == ""


def test_help_and_version_succeed(brain: BrainRunner) -> None:
    assert brain("--help").code == 0
    version = brain("--version")
    assert version.code == 0 and version.stdout.startswith("brain ")
