"""The documented process exit codes and the one table mapping error families to them.

The README's exit-code table is generated from (and must agree with) `ExitCode`; `main.py` is the only
caller of `exit_code_for`. Each error family carries its code (`brain.errors`, `BrainError.exit_code`), so a
Python caller of the library sees the code the command would exit with.
"""

from __future__ import annotations

from enum import IntEnum

from brain.errors import BrainError


class ExitCode(IntEnum):
    """What a `brain` process exit status means."""

    OK = 0
    PROBLEMS_FOUND = 1
    UNREADABLE = 2
    USAGE = 3
    NOT_FOUND = 4
    CONFLICT = 5
    UNTRUSTED = 6
    REMOTE = 7
    STORAGE = 8
    INTERNAL = 70
    INTERRUPTED = 130
    BROKEN_PIPE = 141


EXIT_CODE_MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "success",
    ExitCode.PROBLEMS_FOUND: "the check ran and found problems (verify), or --strict saw a rejection",
    ExitCode.UNREADABLE: "the brain cannot be read (not a brain, broken head/index, corrupt blob)",
    ExitCode.USAGE: "usage: bad argument, option, id, reference or input value",
    ExitCode.NOT_FOUND: "not found: no such block, snapshot, tag or module; ambiguous id prefix",
    ExitCode.CONFLICT: "conflict: lock held past --lock-timeout, diverged tag, refused operation",
    ExitCode.UNTRUSTED: "untrusted artifact refused: digest mismatch, hostile layer, lying annotations",
    ExitCode.REMOTE: "remote failure: registry unreachable, authentication refused, bad HTTP status",
    ExitCode.STORAGE: "local storage refused a write: disk full, no inodes, quota, "
                      "read-only (the brain stays at its last committed snapshot)",
    ExitCode.INTERNAL: "internal error (a bug): please report it with --debug output",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
    ExitCode.BROKEN_PIPE: "the reader of stdout went away (e.g. `| head`)",
}

def exit_code_for(error: BrainError) -> ExitCode:
    """The exit code of a `BrainError`: its family's `exit_code` (`brain.errors`); an unknown one is a bug."""
    try:
        return ExitCode(type(error).exit_code)
    except ValueError:
        return ExitCode.INTERNAL
