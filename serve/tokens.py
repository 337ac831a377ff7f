"""`--tokens FILE`: who may call the server, with which scopes, as which actor; and per-token rate limits.

The file is TOML, one table per token; only the SHA-256 of each bearer secret is stored, never the secret:

    [tokens.claude]
    secret_sha256 = "<hex SHA-256 of the bearer secret>"   # printf %s "$SECRET" | sha256sum
    scopes = ["read", "propose"]
    actor = "agents/claude"                                 # the actor id its proposals are recorded under

The table name is the agent's name: its proposals land on the branch `proposals/<name>`, so it follows the
branch-segment grammar (§10.1). A request names its secret as `Authorization: Bearer <secret>`; the
server hashes it and looks the digest up. Nothing here logs or keeps a secret.

Rate limits are token buckets held in memory shared by every forked worker (allocated before the fork), so
a limit is per token, not per token and process.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import re
import time
import tomllib
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, StringConstraints, ValidationError, field_validator

from brain.errors import UsageError
from brain.frozen import FrozenModel
from brain.identity import actor_id_problem
from brain.store.user_files import read_user_file

MAX_TOKENS_FILE_BYTES = 256 * 1024
MAX_SECRET_BYTES = 4096
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_HEX64 = r"^[0-9a-f]{64}$"


class Scope(StrEnum):
    """What a token may do: `read` every GET route and the UI, `propose` the proposal routes and tools."""

    READ = "read"
    PROPOSE = "propose"


class TokenEntry(FrozenModel):
    """One `[tokens.NAME]` table."""

    secret_sha256: Annotated[str, StringConstraints(strict=True, pattern=_HEX64)]
    scopes: Annotated[tuple[Scope, ...], Field(min_length=1)]
    actor: Annotated[str, StringConstraints(strict=True)]

    @field_validator("actor")
    @classmethod
    def _actor_id(cls, value: str) -> str:
        problem = actor_id_problem(value)
        if problem is not None:
            raise ValueError(f"invalid actor id {value!r}: {problem}")
        return value


class TokensFile(FrozenModel):
    """The whole file: `tokens` maps a name to its entry."""

    tokens: Annotated[dict[str, TokenEntry], Field(min_length=1)]

    @field_validator("tokens")
    @classmethod
    def _names(cls, value: dict[str, TokenEntry]) -> dict[str, TokenEntry]:
        for name in value:
            if NAME.fullmatch(name) is None:
                raise ValueError(f"token name {name[:40]!r} must match [A-Za-z0-9][A-Za-z0-9_-]* (it names the "
                                 "branch proposals/<name>)")
        seen: dict[str, str] = {}
        for name, entry in value.items():
            if entry.secret_sha256 in seen:
                raise ValueError(f"tokens {seen[entry.secret_sha256]!r} and {name!r} share one secret")
            seen[entry.secret_sha256] = name
        return value


class Principal(FrozenModel):
    """Who a request is: the token's name, its actor, and its scopes (no secret)."""

    name: str
    actor: str
    scopes: frozenset[Scope]

    def may(self, scope: Scope) -> bool:
        """Whether the token holds `scope`."""
        return scope in self.scopes


def load_tokens(path: Path) -> TokensFile:
    """Read and check a tokens file (bounded read); raises `UsageError` naming the file and the fix."""
    try:
        data = read_user_file(path, "--tokens", MAX_TOKENS_FILE_BYTES)
    except FileNotFoundError:
        raise UsageError(f"cannot read --tokens {path}: it does not exist",
                         hint="see docs/agents.md for the format") from None
    try:
        document: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"--tokens {path} is not TOML: {e}", hint="see docs/agents.md for the format") from None
    try:
        return TokensFile.model_validate(document)
    except ValidationError as e:
        issue = e.errors(include_url=False)[0]
        where = ".".join(str(p) for p in issue["loc"]) or "(top)"
        # The message never echoes an input value: a mistyped field could be a pasted secret.
        raise UsageError(f"--tokens {path}: {where}: {issue['msg']}",
                         hint='each [tokens.NAME] needs secret_sha256 = "<64 hex>", scopes = ["read", '
                              '"propose"] and actor = "ns/name"') from None


def secret_digest(secret: str) -> str:
    """The hex SHA-256 a tokens file stores for `secret`."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class TokenTable:
    """Bearer secret → `Principal`, by digest (a dictionary lookup on a hash leaks nothing of the secret)."""

    def __init__(self, tokens: TokensFile) -> None:
        self._by_digest = {
            entry.secret_sha256: Principal(name=name, actor=entry.actor, scopes=frozenset(entry.scopes))
            for name, entry in tokens.tokens.items()
        }
        self.names = tuple(sorted(tokens.tokens))

    def principal(self, authorization: str | None) -> Principal | None:
        """The principal an `Authorization` header names, or None (absent, malformed or unknown)."""
        if not authorization or len(authorization) > MAX_SECRET_BYTES + 7:
            return None
        scheme, _, secret = authorization.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            return None
        return self._by_digest.get(secret_digest(secret.strip()))

    def by_secret(self, secret: str) -> Principal | None:
        """The principal of a bare secret (the UI's `?token=` on loopback)."""
        if not secret or len(secret) > MAX_SECRET_BYTES:
            return None
        return self._by_digest.get(secret_digest(secret))


class RateLimiter:
    """Token buckets, one per (name, kind), refilled at `rate` per second up to `burst`; fork-shared.

    `kinds` are the request classes limited separately (proposals cost more than reads). State lives in a
    shared array created here, so create the limiter before the server forks its workers.
    """

    def __init__(self, names: tuple[str, ...], rates: Mapping[str, tuple[float, float]]) -> None:
        self._slots = {(name, kind): i for i, (name, kind) in enumerate((n, k) for n in names for k in rates)}
        self._rates = dict(rates)
        self._lock = multiprocessing.get_context("fork").Lock()
        # Two doubles per bucket: tokens left, time of the last refill (monotonic clock, shared across fork).
        self._state = multiprocessing.get_context("fork").RawArray("d", 2 * max(1, len(self._slots)))
        now = time.monotonic()
        for (_, kind), slot in self._slots.items():
            self._state[2 * slot] = self._rates[kind][1]
            self._state[2 * slot + 1] = now

    def take(self, name: str, kind: str) -> float:
        """Spend one request of `kind` for `name`: 0.0 when allowed, else the seconds until one is."""
        slot = self._slots.get((name, kind))
        if slot is None:
            return 0.0
        rate, burst = self._rates[kind]
        with self._lock:
            now = time.monotonic()
            level = min(burst, self._state[2 * slot] + (now - self._state[2 * slot + 1]) * rate)
            self._state[2 * slot + 1] = now
            if level >= 1.0:
                self._state[2 * slot] = level - 1.0
                return 0.0
            self._state[2 * slot] = level
            return (1.0 - level) / rate

    @staticmethod
    def retry_after(seconds: float) -> str:
        """The `Retry-After` header value: whole seconds, at least 1."""
        return str(max(1, math.ceil(seconds)))
