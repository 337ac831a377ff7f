"""The acting identity a write records when none is given (§3.6), the same for `brain` and `sdk.Brain`.

Default, in order: `git config user.email` when it is a valid actor id (never lower-cased; an invalid one
is skipped), `$USER@localhost.localdomain` when valid. The domain has two labels because `name@localhost`
is refused by §3.6.
"""

from __future__ import annotations

import getpass
import os
import subprocess

from brain.errors import InvalidInputError, UsageError
from brain.identity import actor_id_problem, validate_actor_id

FALLBACK_ACTOR_DOMAIN = "localhost.localdomain"


def resolve_actor(explicit: str | None) -> str:
    """`explicit` validated, or the first valid default (see module docstring)."""
    if explicit is not None:
        try:
            return validate_actor_id(explicit)
        except InvalidInputError as e:
            raise InvalidInputError(
                e.message, hint="use name@example.org or org/name (lowercase); see --actor"
            ) from None
    for candidate in (_git_email(), _user_at_localhost()):
        if candidate is not None and actor_id_problem(candidate) is None:
            return candidate
    raise UsageError(
        "no valid actor id: git user.email and $USER do not form a valid id",
        hint="pass --actor name@example.org or set BRAIN_ACTOR",
    )


def _git_email() -> str | None:
    """`git config user.email`, or None when git or the setting is missing."""
    try:
        done = subprocess.run(
            ["git", "config", "--get", "user.email"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    email = done.stdout.strip()
    return email if done.returncode == 0 and email else None


def _user_at_localhost() -> str | None:
    """`$USER@localhost.localdomain`, or None when the user name is unknown."""
    try:
        user = os.environ.get("USER") or getpass.getuser()
    except (KeyError, OSError):
        return None
    return f"{user}@{FALLBACK_ACTOR_DOMAIN}" if user else None


__all__ = ["FALLBACK_ACTOR_DOMAIN", "resolve_actor"]
