"""What counts as a secret in the config file: by its key's name, and by what its value carries.

Secrets never live in a file that gets committed: API keys and passwords come from the environment or a
credential helper. A key named like one (`token`, `password`, `api-key`, ...) is refused, and so is any
value carrying one, wherever it sits in the string: a URL's `user:password@`, a query parameter named like
a secret (`?api_key=`, `&access_token=`), a command's credential flag (`--password X`, `--token=X`,
`curl -u user:pw`, an `Authorization:` header), a well-known token shape (`sk-…`, `ghp_…`, `AKIA…`, a PEM
private key), and an `-env` key whose value is not an environment variable's name. Every check answers
with what kind of secret it saw, never with the value, so the error that refuses it cannot leak it.
"""

from __future__ import annotations

import re
from typing import Any

# Key names that hold a secret; `-env`, `-stdin`, `-file` and `-helper` keys name where a secret is, which is fine.
_SECRET_WORDS = re.compile(
    r"(^|[-_])(token|password|passwd|secret|api[-_]?key|apikey|credentials?|private[-_]key|auth)([-_]|$)"
)
_SECRET_REFERENCE_SUFFIXES = ("-env", "-stdin", "-file", "-helper", "-command")
_SECRET_NAME = (
    r"(?:[a-z0-9]+[-_])*(?:api[-_]?key|apikey|key|token|secret|password|passwd|pwd|auth|credentials?|sig|signature)"
)
_VALUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a password in a URL", re.compile(r"[a-z][a-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@", re.IGNORECASE)),
    ("a credential in a URL's query", re.compile(rf"[?&;#]{_SECRET_NAME}=[^&\s]", re.IGNORECASE)),
    ("a credential flag in a command", re.compile(
        r"(?:^|\s)--?(?:[a-z0-9]+-)*(?:password|passwd|token|api-?key|apikey|secret|auth|credentials?)(?:=|\s+)\S",
        re.IGNORECASE)),
    ("a user:password in a command", re.compile(r"(?:^|\s)(?:-u|--user)(?:=|\s+)['\"]?[^\s:'\"]+:\S", re.IGNORECASE)),
    ("an Authorization header", re.compile(r"authorization\s*:\s*\S", re.IGNORECASE)),
    ("an API token", re.compile(
        r"(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
        r"|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16})")),
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def secret_kind(key: str, value: Any) -> str | None:
    """What kind of secret `key = value` holds (`"a password in a URL"`, ...), or None; never the value itself."""
    lowered = key.lower()
    if _SECRET_WORDS.search(lowered) and not lowered.endswith(_SECRET_REFERENCE_SUFFIXES):
        return "a key named like a secret"
    values = value if isinstance(value, list) else [value]
    for item in values:
        if not isinstance(item, str):
            continue
        if lowered.endswith("-env") and not _ENV_NAME.fullmatch(item):
            return "a value that is not an environment variable's name (a secret itself?)"
        for kind, pattern in _VALUE_PATTERNS:
            if pattern.search(item):
                return kind
    return None


def looks_like_secret(key: str, value: Any) -> bool:
    """True for keys named like a secret (token, password, api-key, ...) and values carrying one."""
    return secret_kind(key, value) is not None


def is_env_name(text: str) -> bool:
    """Whether `text` can be an environment variable's name (what `--api-key-env` takes)."""
    return _ENV_NAME.fullmatch(text) is not None
