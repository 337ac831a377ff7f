"""Ids, prefixes and origins of any length are parsed and bounded before any filesystem call (#24 item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.conftest import BrainRunner, assert_one_line_error

LONG_HEX = "ab" * 128  # 256 hex digits: an "id" no file name can hold
LONG_NAME = "x" * 256  # longer than any file name (NAME_MAX is 255)
HUGE = "a" * 1_000_000


COMMANDS = [
    ["show"], ["prove"], ["cat"], ["drop", "--reason", "r"], ["demote", "--reason", "r"], ["redact", "--reason", "r"],
]
CASES = [(command, argument) for command in COMMANDS for argument in (LONG_HEX, LONG_NAME)] + [
    (command, argument) for command in (["show"], ["cat"]) for argument in ("sha256:" + LONG_HEX, "d/" * 3000)
]


@pytest.mark.parametrize(("command", "argument"), CASES)
def test_a_long_id_or_origin_is_a_one_line_usage_error(
    brain: BrainRunner, shared_brain: Path, command: list[str], argument: str
) -> None:
    done = brain("--brain", str(shared_brain), *command, argument)
    assert_one_line_error(done, 3)
    assert len(done.stderr) < 400, done.stderr  # the argument is not echoed whole


def test_supersede_with_long_ids_is_a_usage_error(brain: BrainRunner, shared_brain: Path) -> None:
    done = brain("--brain", str(shared_brain), "supersede", LONG_NAME, LONG_HEX, "--reason", "r")
    assert_one_line_error(done, 3)


def test_a_megabyte_id_is_refused_without_echoing_it(brain: BrainRunner, shared_brain: Path) -> None:
    done = brain("--brain", str(shared_brain), "show", HUGE)
    assert_one_line_error(done, 3)
    assert len(done.stderr) < 400


@pytest.mark.parametrize(
    "args",
    [
        ["export", "--to", LONG_NAME],
        ["export", "--format", "markdown", "--to", LONG_NAME],
        ["verify", "--snapshot", LONG_HEX],
        ["diff", LONG_HEX],
        ["checkout", LONG_NAME],
        ["ls", "--type", LONG_NAME],
    ],
)
def test_other_commands_with_long_arguments(brain: BrainRunner, shared_brain: Path, args: list[str]) -> None:
    done = brain("--brain", str(shared_brain), *args)
    assert done.code in (3, 4), done
    assert_one_line_error(done, done.code)
