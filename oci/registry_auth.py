"""How a registry client authenticates: answering 401 challenges (Basic, Bearer, token exchange through oras).

`RegistryAuth` holds the one `Authorization` header a client sends, changes it when a challenge asks for
something new (a pull-scoped token first, then a push-scoped one), and says in one line why a 401 that
remains is final. Credentials are sent only in headers and never logged.
"""

from __future__ import annotations

import oras.auth.utils
import requests

from brain.errors import RemoteError
from oci.auth import Credentials


class RegistryAuth:
    """The credentials of one client, the header they earned, and whether the registry ever asked for them."""

    def __init__(self, registry: str, credentials: Credentials | None, backend: object) -> None:
        self._registry = registry
        self._credentials = credentials
        self._backend = backend  # oras's token exchange (`oras.auth.TokenAuth`) on the client's session
        self.header: str | None = None
        if credentials is not None and credentials.token and credentials.basic is None:
            self.header = f"Bearer {credentials.token}"
        # Whether the registry ever asked for credentials (a 401 challenge this client answered).
        self.challenged = False

    def answer(self, response: requests.Response) -> bool:
        """Answer a 401 challenge; False when there is nothing new to try."""
        challenge = response.headers.get("Www-Authenticate", "")
        scheme = challenge.split(" ", 1)[0].lower()
        creds = self._credentials
        header = None
        if scheme == "basic" and creds is not None and creds.basic is not None:
            header = f"Basic {creds.basic}"
        elif scheme == "bearer":
            if creds is not None and creds.token and creds.basic is None:
                header = f"Bearer {creds.token}"
            else:
                header = self._bearer_token(oras.auth.utils.parse_auth_header(challenge), creds)
        if header is None or header == self.header:
            return False
        self.header = header
        self.challenged = True
        return True

    def _bearer_token(self, challenge: oras.auth.utils.authHeader, creds: Credentials | None) -> str | None:
        backend = self._backend
        if creds is not None and creds.basic is not None:
            backend._basic_auth = creds.basic  # type: ignore[attr-defined]
            token = backend.request_token(challenge)  # type: ignore[attr-defined]
        else:
            token = backend.request_anonymous_token(challenge)  # type: ignore[attr-defined]
        return f"Bearer {token}" if token else None

    def refusal(self) -> RemoteError:
        """Why a 401 that remains after the challenges were answered is final: no login, or refused credentials."""
        creds, registry = self._credentials, self._registry
        if creds is None or (creds.basic is None and not creds.token):
            return RemoteError(
                f"registry {registry} requires a login (HTTP 401) and no credentials are stored for it",
                hint=f"run `brain login {registry}` or set BRAIN_REGISTRY_USERNAME/PASSWORD",
            )
        who = f" for {creds.username}" if creds.username else ""
        where = "" if creds.source in ("none", "login") else f" from {creds.source}"
        return RemoteError(
            f"registry {registry} refused the credentials{who}{where} (HTTP 401)",
            hint=f"check them, then run `brain login {registry}` again or fix BRAIN_REGISTRY_USERNAME/PASSWORD",
        )
