"""The documented process exit codes and the one table mapping error families to them.

The README's exit-code table is generated from (and must agree with) `ExitCode`; `main.py` is the only
caller of `exit_code_for`.
"""

from __future__ import annotations

from enum import IntEnum

from brain.errors import (
    BrainError,
    BrainUnreadableError,
    ConflictError,
    LocalStorageError,
    NotFoundError,
    ProblemsFoundError,
    RefusedError,
    RemoteError,
    UntrustedArtifactError,
    UsageError,
)


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
    ExitCode.STORAGE: "local storage refused a write: disk full, no inodes, quota, read-only (the brain stays at its last committed snapshot)",
    ExitCode.INTERNAL: "internal error (a bug): please report it with --debug output",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
    ExitCode.BROKEN_PIPE: "the reader of stdout went away (e.g. `| head`)",
}

# Families are disjoint subtrees of BrainError, so the order only matters for a future subclass that
# inherits from two families; the first match wins.
_FAMILIES: tuple[tuple[type[BrainError], ExitCode], ...] = (
    (ProblemsFoundError, ExitCode.PROBLEMS_FOUND),
    (BrainUnreadableError, ExitCode.UNREADABLE),
    (UsageError, ExitCode.USAGE),
    (NotFoundError, ExitCode.NOT_FOUND),
    (ConflictError, ExitCode.CONFLICT),
    (RefusedError, ExitCode.CONFLICT),
    (UntrustedArtifactError, ExitCode.UNTRUSTED),
    (RemoteError, ExitCode.REMOTE),
    (LocalStorageError, ExitCode.STORAGE),
)


def exit_code_for(error: BrainError) -> ExitCode:
    """The exit code of a `BrainError`; a family nobody mapped is a bug, hence INTERNAL."""
    for family, code in _FAMILIES:
        if isinstance(error, family):
            return code
    return ExitCode.INTERNAL
