"""`brain login`: check a username and password against the registry, then store them.

Kept apart from `oci.auth` (which reads credentials for the transport) so that neither module imports the other.
"""

from __future__ import annotations

from pathlib import Path

from brain.errors import UsageError
from oci.auth import Credentials, store_credentials
from oci.reference import parse_registry
from oci.transport import RegistryClient


def login(
    host: str, username: str, password: str, *, plain_http: bool = False, path: Path | None = None
) -> tuple[Path, bool]:
    """Check `username`/`password` against the registry's `/v2/`, then store them.

    Returns the config path and whether the registry actually checked them: one that answers `/v2/`
    without asking for credentials accepts anonymous requests, and the credentials are stored unverified.
    """
    if not username or not password:
        raise UsageError("login needs a username and a non-empty password")
    reference = parse_registry(host, plain_http=plain_http)
    client = RegistryClient(reference, Credentials(username, password, source="login"))
    client.ping()
    return store_credentials(reference.registry, username, password, path), client.challenged


__all__ = ["login"]
