"""A registry client for the distribution protocol, built on `oras` (session, token exchange).

What it adds to oras: a connect/read timeout on every request, bounded retries with backoff and
`Retry-After`, and one place every request goes through (`request`: authentication, retries, 401/403).
The verbs live in their own modules and `RegistryClient` composes them: `registry_auth` (challenges,
tokens), `blob_upload` (chunked uploads in constant memory, resumed), `blob_download` (streamed into the
blob store, size and digest checked before anything is kept, resumed), `manifests_remote` (GET/PUT).
Credentials are sent only in headers and never logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, BinaryIO

import oras.provider
import requests
from requests.adapters import HTTPAdapter

from brain.errors import RemoteError
from brain.identity import OciDigest
from brain.store.blobs import BlobStore
from oci import blob_download, blob_upload, manifests_remote
from oci.auth import Credentials
from oci.manifests_remote import MAX_MANIFEST_BYTES, FetchedManifest
from oci.network import NETWORK_ERRORS, network_failure, unexpected
from oci.reference import Reference
from oci.registry_auth import RegistryAuth
from oci.requester import Progress
from oci.retry import RETRYABLE_STATUS, RetryPolicy

__all__ = ["MAX_MANIFEST_BYTES", "FetchedManifest", "Observer", "Progress", "RegistryClient"]

log = logging.getLogger("brain.oci.transport")
DEFAULT_TIMEOUT = (10.0, 60.0)
CHUNK_SIZE = 8 << 20
Observer = Callable[[str, str, int], None]


class _TimeoutAdapter(HTTPAdapter):
    """Gives every request (oras's token requests included) a timeout when the caller set none."""

    def __init__(self, timeout: tuple[float, float]) -> None:
        super().__init__()
        self._timeout = timeout

    def send(self, request, timeout=None, **kwargs):  # type: ignore[no-untyped-def, override]
        return super().send(request, timeout=timeout or self._timeout, **kwargs)


class RegistryClient:
    """One repository on one registry; every method raises a `BrainError`, never a requests error."""

    def __init__(
        self,
        reference: Reference,
        credentials: Credentials | None = None,
        *,
        timeout: tuple[float, float] = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        chunk_size: int = CHUNK_SIZE,
        observer: Observer | None = None,
    ) -> None:
        self.reference = reference
        self.retry = retry or RetryPolicy()
        self.chunk_size = chunk_size
        self._observer = observer
        registry = oras.provider.Registry(hostname=reference.registry, insecure=reference.plain_http)
        self.session: requests.Session = registry.session
        self.session.headers["User-Agent"] = "brain (oras-py)"
        for prefix in ("http://", "https://"):
            self.session.mount(prefix, _TimeoutAdapter(timeout))
        self._auth = RegistryAuth(reference.registry, credentials, registry.auth)
        # `<base>/v2/<repository>`: every blob, upload and manifest URL starts here.
        self.repository_url = f"{reference.base_url}/v2/{reference.repository}"
        # Once the registry has answered, a dropped connection is not about the address or --plain-http.
        self._answered = False

    @property
    def challenged(self) -> bool:
        """Whether the registry ever asked for credentials (a 401 challenge this client answered)."""
        return self._auth.challenged

    # -- requests, authentication and retries --------------------------------------------------------

    def _send(self, method: str, url: str, headers: dict[str, str], data: Any, stream: bool) -> requests.Response:
        # At most two challenges per request: e.g. a pull-scoped token first, then a push-scoped one.
        for challenges_left in (2, 1, 0):
            sent = dict(headers)
            if self._auth.header is not None:
                sent["Authorization"] = self._auth.header
            response = self.session.request(method, url, headers=sent, data=data, stream=stream)
            log.debug("%s %s -> %s", method, url, response.status_code)
            if self._observer is not None:
                self._observer(method, url, response.status_code)
            if response.status_code != 401 or not challenges_left or not self._auth.answer(response):
                return response
            response.close()
        raise AssertionError("unreachable")

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        data: object = None,
        stream: bool = False,
        retry: bool = True,
    ) -> requests.Response:
        """Send one request with auth and (if `retry`) bounded retries; 401/403 become `RemoteError`."""
        attempts = self.retry.attempts if retry else 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._send(method, url, headers or {}, data, stream)
            except NETWORK_ERRORS as e:
                failure = network_failure(self.reference.registry, e, answered=self._answered)
                if last or not failure.retryable:
                    raise failure.error from e
                time.sleep(self.retry.backoff(attempt))
                continue
            self._answered = True
            if response.status_code in RETRYABLE_STATUS and not last:
                wait = self.retry.delay(attempt, response.headers.get("Retry-After"))
                log.debug("retrying %s %s in %.2fs after HTTP %s", method, url, wait, response.status_code)
                response.close()
                time.sleep(wait)
                continue
            break
        if response.status_code == 401:
            raise self._auth.refusal()
        if response.status_code == 403:
            raise RemoteError(
                f"registry {self.reference.registry} denied access to {self.reference.repository} (HTTP 403)"
            )
        return response

    def ping(self) -> None:
        """GET /v2/: proves the registry speaks the distribution API and accepts our credentials."""
        response = self.request("GET", f"{self.reference.base_url}/v2/")
        response.close()
        if response.status_code != 200:
            raise unexpected(self.reference.registry, "API version check", response)

    # -- blobs (oci/blob_upload.py, oci/blob_download.py) ---------------------------------------------

    def blob_size(self, digest: OciDigest) -> int | None:
        """The size of blob `digest` in the repository, or None if the registry does not have it."""
        return blob_upload.blob_size(self, digest)

    def push_blob(
        self, digest: OciDigest, size: int, opener: Callable[[], BinaryIO], progress: Progress | None = None
    ) -> bool:
        """Upload a blob unless the registry already has it (resumed where a failed step left the session);
        returns True iff bytes were sent."""
        return blob_upload.push_blob(self, digest, size, opener, progress)

    def fetch_blob(self, digest: OciDigest, size: int, store: BlobStore, progress: Progress | None = None) -> None:
        """Stream blob `digest` into `store`; refuses (stores nothing) on a wrong size or digest."""
        blob_download.fetch_blob(self, digest, size, store, progress)

    def get_blob_bytes(self, digest: OciDigest, size: int, max_size: int = MAX_MANIFEST_BYTES) -> bytes:
        """A small blob (a config) in memory, checked against `size` and `digest` like any download."""
        return blob_download.get_blob_bytes(self, digest, size, max_size)

    # -- manifests (oci/manifests_remote.py) -----------------------------------------------------------

    def get_manifest(self, reference: str) -> FetchedManifest:
        """Fetch a manifest by tag or digest, its bytes checked; a clean 404 is `NotFoundError`."""
        return manifests_remote.get_manifest(self, reference)

    def put_manifest(self, reference: str, data: bytes) -> OciDigest:
        """Upload manifest bytes under a tag or digest; returns their digest."""
        return manifests_remote.put_manifest(self, reference, data)
