"""Registry credentials: environment, Docker's config.json (inline `auths`, `credHelpers`, `credsStore`).

Order: `BRAIN_REGISTRY_TOKEN` (a bearer token), then `BRAIN_REGISTRY_USERNAME`/`BRAIN_REGISTRY_PASSWORD`,
then Docker's config for the host. Secrets never reach a log line, an error message or a `repr`.
Login writes Docker's config.json atomically with mode 0600 and keeps every other key in it.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from brain.errors import RemoteError, UsageError
from brain.store.atomic import atomic_write
from brain.store.user_files import MIB, read_user_file

ENV_TOKEN = "BRAIN_REGISTRY_TOKEN"
ENV_USERNAME = "BRAIN_REGISTRY_USERNAME"
ENV_PASSWORD = "BRAIN_REGISTRY_PASSWORD"
HELPER_TIMEOUT = 20.0
MAX_DOCKER_CONFIG = 4 * MIB


@dataclass(frozen=True)
class Credentials:
    """A username/password pair or a bearer token; `repr` hides the secret."""

    username: str | None = None
    password: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)
    source: str = "none"

    @property
    def basic(self) -> str | None:
        """The base64 `user:password` for a Basic header, or None without a username/password."""
        if self.username is None or self.password is None:
            return None
        return base64.b64encode(f"{self.username}:{self.password}".encode()).decode("ascii")


def docker_config_path() -> Path:
    """`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`."""
    directory = os.environ.get("DOCKER_CONFIG")
    return Path(directory) / "config.json" if directory else Path.home() / ".docker" / "config.json"


def _host_key(key: str) -> str:
    # Docker writes keys as `host`, `https://host` or `https://host/v1/`: compare on the bare host.
    for scheme in ("https://", "http://"):
        key = key.removeprefix(scheme)
    return key.split("/", 1)[0]


def _read_config(path: Path) -> dict:
    try:
        data = read_user_file(path, "registry credentials file", MAX_DOCKER_CONFIG)
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise UsageError(f"{path} cannot be read: {e.strerror}", hint="fix its permissions or set DOCKER_CONFIG") from e
    try:
        value = json.loads(data) if data.strip() else {}
    except ValueError as e:
        raise UsageError(f"{path} is not valid JSON", hint="fix or remove it, then run `brain login`") from e
    if not isinstance(value, dict):
        raise UsageError(f"{path} is not a JSON object", hint="fix or remove it, then run `brain login`")
    return value


def _decode_auth(path: Path, host: str, encoded: str) -> Credentials:
    try:
        username, sep, password = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        sep = ""
    if not sep:
        raise UsageError(f"{path}: the stored auth for {host} is not base64 'user:password'", hint="run `brain login`")
    return Credentials(username, password, source=str(path))


def _run_helper(helper: str, host: str) -> Credentials | None:
    binary = f"docker-credential-{helper}"
    try:
        proc = subprocess.run(
            [binary, "get"], input=host.encode(), capture_output=True, timeout=HELPER_TIMEOUT, check=False
        )
    except FileNotFoundError:
        raise RemoteError(f"credential helper {binary} named in {docker_config_path()} is not on PATH") from None
    except subprocess.TimeoutExpired:
        raise RemoteError(f"credential helper {binary} did not answer within {HELPER_TIMEOUT:.0f}s") from None
    if proc.returncode != 0:
        # Helpers answer "credentials not found" with a non-zero exit: that means anonymous access.
        return None
    try:
        payload = json.loads(proc.stdout)
        username, secret = payload["Username"], payload["Secret"]
    except (ValueError, KeyError, TypeError):
        raise RemoteError(f"credential helper {binary} returned something that is not credentials") from None
    if username == "<token>":
        return Credentials(token=secret, source=binary)
    return Credentials(username, secret, source=binary)


def credentials_from_config(host: str, path: Path | None = None) -> Credentials | None:
    """The credentials Docker's config holds for `host` (running a helper if one is configured)."""
    path = path or docker_config_path()
    config = _read_config(path)
    auths = config["auths"] if isinstance(config.get("auths"), dict) else {}
    for key, entry in auths.items():
        if _host_key(key) != host or not isinstance(entry, dict):
            continue
        if isinstance(entry.get("identitytoken"), str) and entry["identitytoken"]:
            return Credentials(token=entry["identitytoken"], source=str(path))
        if isinstance(entry.get("auth"), str) and entry["auth"]:
            return _decode_auth(path, host, entry["auth"])
        if isinstance(entry.get("username"), str) and isinstance(entry.get("password"), str):
            return Credentials(entry["username"], entry["password"], source=str(path))
    helpers = config["credHelpers"] if isinstance(config.get("credHelpers"), dict) else {}
    if isinstance(helpers.get(host), str):
        return _run_helper(helpers[host], host)
    if isinstance(config.get("credsStore"), str) and config["credsStore"]:
        return _run_helper(config["credsStore"], host)
    return None


def resolve_credentials(host: str) -> Credentials | None:
    """Credentials for `host` from the environment, else Docker's config; None means anonymous."""
    token = os.environ.get(ENV_TOKEN)
    if token:
        return Credentials(token=token, source=ENV_TOKEN)
    username, password = os.environ.get(ENV_USERNAME), os.environ.get(ENV_PASSWORD)
    if username and password is not None:
        return Credentials(username, password, source=ENV_USERNAME)
    return credentials_from_config(host)


def store_credentials(host: str, username: str, password: str, path: Path | None = None) -> Path:
    """Save `username:password` for `host` in Docker's config.json (mode 0600, atomic, other keys kept)."""
    path = path or docker_config_path()
    config = _read_config(path)
    auths = config["auths"] if isinstance(config.get("auths"), dict) else {}
    auths = {k: v for k, v in auths.items() if _host_key(k) != host}
    auths[host] = {"auth": Credentials(username, password).basic}
    config["auths"] = auths
    _write_config(path, config)
    return path


def _write_config(path: Path, config: dict) -> None:
    """Replace Docker's config.json atomically, created 0600 (it holds secrets), other keys untouched."""
    data = (json.dumps(config, indent="\t", sort_keys=True) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Created 0600 from the start so the secret is never readable by others, even briefly.
    atomic_write(path, data, mode=0o600)


@dataclass(frozen=True)
class LogoutResult:
    """What `logout` removed for a host: inline entries from config.json and/or a credential helper's entry."""

    registry: str
    config: Path
    removed_entries: int
    helper: str | None = None
    helper_erased: bool = False

    @property
    def was_logged_in(self) -> bool:
        """Whether any stored credentials were removed."""
        return self.removed_entries > 0 or self.helper_erased


def _erase_with_helper(helper: str, host: str) -> bool:
    """`docker-credential-<helper> erase` for `host`; False when the helper had nothing stored."""
    binary = f"docker-credential-{helper}"
    try:
        proc = subprocess.run(
            [binary, "erase"], input=host.encode(), capture_output=True, timeout=HELPER_TIMEOUT, check=False
        )
    except FileNotFoundError:
        raise RemoteError(f"credential helper {binary} named in {docker_config_path()} is not on PATH") from None
    except subprocess.TimeoutExpired:
        raise RemoteError(f"credential helper {binary} did not answer within {HELPER_TIMEOUT:.0f}s") from None
    return proc.returncode == 0


def logout(host: str, *, path: Path | None = None) -> LogoutResult:
    """Forget the credentials stored for registry `host` (config.json entries and its credential helper)."""
    from oci.reference import parse_registry

    registry = parse_registry(host).registry
    path = path or docker_config_path()
    config = _read_config(path)
    auths: dict = config["auths"] if isinstance(config.get("auths"), dict) else {}
    kept = {k: v for k, v in auths.items() if _host_key(k) != registry}
    removed = len(auths) - len(kept)
    if removed:
        config["auths"] = kept
        _write_config(path, config)
    helpers: dict = config["credHelpers"] if isinstance(config.get("credHelpers"), dict) else {}
    helper = helpers.get(registry) if isinstance(helpers.get(registry), str) else None
    if helper is None and isinstance(config.get("credsStore"), str) and config["credsStore"]:
        helper = config["credsStore"]
    erased = _erase_with_helper(helper, registry) if helper else False
    return LogoutResult(registry, path, removed, helper, erased)
