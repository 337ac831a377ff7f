"""A registry client for the distribution protocol, built on `oras` (session, token exchange).

What it adds to oras: a connect/read timeout on every request, bounded retries with backoff and
`Retry-After`, chunked uploads in constant memory (POST, PATCH..., PUT?digest), HEAD existence checks,
and downloads streamed into the blob store with size and digest checked before anything is kept.
Credentials are sent only in headers and never logged.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

import oras.auth.utils
import oras.provider
import requests
from requests.adapters import HTTPAdapter

from brain.errors import IntegrityError, NotFoundError, RemoteError, UntrustedArtifactError
from brain.identity import OciDigest
from brain.store.blobs import BlobStore
from oci import media_types as mt
from oci.auth import Credentials
from oci.network import network_failure
from oci.reference import Reference
from oci.retry import RETRYABLE_STATUS, RetryPolicy

log = logging.getLogger("brain.oci.transport")
MANIFEST_MEDIA_TYPE = mt.MANIFEST
# We only install OCI manifests, but ask for every kind: a registry answers 404 for an index it may not
# send, and a tag that holds something else must not look free to `push`.
_ACCEPT_MANIFESTS = ", ".join((
    MANIFEST_MEDIA_TYPE,
    mt.INDEX,
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
))
DEFAULT_TIMEOUT = (10.0, 60.0)
CHUNK_SIZE = 8 << 20
MAX_MANIFEST_BYTES = 4 << 20
_READ = 1 << 20
_NETWORK_ERRORS = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)
Progress = Callable[[OciDigest, int, int], None]
Observer = Callable[[str, str, int], None]


class _TimeoutAdapter(HTTPAdapter):
    """Gives every request (oras's token requests included) a timeout when the caller set none."""

    def __init__(self, timeout: tuple[float, float]) -> None:
        super().__init__()
        self._timeout = timeout

    def send(self, request, timeout=None, **kwargs):  # type: ignore[no-untyped-def, override]
        return super().send(request, timeout=timeout or self._timeout, **kwargs)


class _Retry(Exception):
    """A failure worth another try of a whole multi-request operation (an upload or a download)."""


@dataclass
class _UploadSession:
    """Where an upload session lives now and how many bytes of the blob the registry holds."""

    location: str
    offset: int = 0


@dataclass(frozen=True)
class FetchedManifest:
    """Manifest bytes as served, their digest and the Content-Type the registry announced."""

    data: bytes
    digest: OciDigest
    media_type: str


def _error_codes(response: requests.Response) -> list[str]:
    try:
        errors = response.json().get("errors", [])
        return [str(e.get("code")) for e in errors if isinstance(e, dict)]
    except (ValueError, AttributeError):
        return []


def _with_query(url: str, **params: str) -> str:
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


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
        self._credentials = credentials
        self._observer = observer
        self._oras = oras.provider.Registry(hostname=reference.registry, insecure=reference.plain_http)
        self.session: requests.Session = self._oras.session
        self.session.headers["User-Agent"] = "brain (oras-py)"
        for prefix in ("http://", "https://"):
            self.session.mount(prefix, _TimeoutAdapter(timeout))
        self._authorization: str | None = None
        if credentials is not None and credentials.token and credentials.basic is None:
            self._authorization = f"Bearer {credentials.token}"
        self._repo_url = f"{reference.base_url}/v2/{reference.repository}"
        # Once the registry has answered, a dropped connection is not about the address or --plain-http.
        self._answered = False
        # Whether the registry ever asked for credentials (a 401 challenge this client answered).
        self.challenged = False

    # -- requests, authentication and retries --------------------------------------------------------

    def _authenticate(self, response: requests.Response) -> bool:
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
        if header is None or header == self._authorization:
            return False
        self._authorization = header
        self.challenged = True
        return True

    def _bearer_token(self, challenge: oras.auth.utils.authHeader, creds: Credentials | None) -> str | None:
        backend = self._oras.auth
        if creds is not None and creds.basic is not None:
            backend._basic_auth = creds.basic  # type: ignore[attr-defined]
            token = backend.request_token(challenge)  # type: ignore[attr-defined]
        else:
            token = backend.request_anonymous_token(challenge)  # type: ignore[attr-defined]
        return f"Bearer {token}" if token else None

    def _send(self, method: str, url: str, headers: dict[str, str], data: Any, stream: bool) -> requests.Response:
        # At most two challenges per request: e.g. a pull-scoped token first, then a push-scoped one.
        for challenges_left in (2, 1, 0):
            sent = dict(headers)
            if self._authorization is not None:
                sent["Authorization"] = self._authorization
            response = self.session.request(method, url, headers=sent, data=data, stream=stream)
            log.debug("%s %s -> %s", method, url, response.status_code)
            if self._observer is not None:
                self._observer(method, url, response.status_code)
            if response.status_code != 401 or not challenges_left or not self._authenticate(response):
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
            except _NETWORK_ERRORS as e:
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
            creds = self._credentials
            if creds is None or (creds.basic is None and not creds.token):
                raise RemoteError(
                    f"registry {self.reference.registry} requires a login (HTTP 401) "
                    "and no credentials are stored for it",
                    hint=f"run `brain login {self.reference.registry}` or set BRAIN_REGISTRY_USERNAME/PASSWORD",
                )
            who = f" for {creds.username}" if creds.username else ""
            where = "" if creds.source in ("none", "login") else f" from {creds.source}"
            raise RemoteError(
                f"registry {self.reference.registry} refused the credentials{who}{where} (HTTP 401)",
                hint=f"check them, then run `brain login {self.reference.registry}` again "
                "or fix BRAIN_REGISTRY_USERNAME/PASSWORD",
            )
        if response.status_code == 403:
            raise RemoteError(f"registry {self.reference.registry} denied access to {self.reference.repository} (HTTP 403)")
        return response

    def _unexpected(self, what: str, response: requests.Response) -> RemoteError:
        codes = ",".join(_error_codes(response)) or response.reason
        message = f"{what} on {self.reference.registry}: unexpected HTTP {response.status_code} ({codes})"
        if response.status_code == 405:
            return RemoteError(message, hint="the registry refuses it here: read-only, or a pull-through cache?")
        return RemoteError(message)

    def ping(self) -> None:
        """GET /v2/: proves the registry speaks the distribution API and accepts our credentials."""
        response = self.request("GET", f"{self.reference.base_url}/v2/")
        response.close()
        if response.status_code != 200:
            raise self._unexpected("API version check", response)

    # -- blobs ---------------------------------------------------------------------------------------

    def blob_size(self, digest: OciDigest) -> int | None:
        """The size of blob `digest` in the repository, or None if the registry does not have it."""
        response = self.request("HEAD", f"{self._repo_url}/blobs/{digest}")
        response.close()
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self._unexpected(f"checking blob {digest.short}", response)
        return int(response.headers.get("Content-Length", "-1"))

    def push_blob(
        self, digest: OciDigest, size: int, opener: Callable[[], BinaryIO], progress: Progress | None = None
    ) -> bool:
        """Upload a blob unless the registry already has it; returns True iff bytes were sent.

        A failed step resumes from the offset the registry reports for the upload session (so a reset at
        10 MB of 40 MB sends about 30 MB more, not 40); a session the registry forgot starts over.
        """
        if self.blob_size(digest) == size:
            return False
        session: _UploadSession | None = None
        for attempt in range(self.retry.attempts):
            try:
                if session is None:
                    session = _UploadSession(self._start_upload(digest))
                self._upload(digest, size, opener, progress, session)
                return True
            except _Retry as e:
                if attempt == self.retry.attempts - 1:
                    raise RemoteError(
                        f"uploading blob {digest.short} to {self.reference.registry} failed: {e}",
                        hint="run the same push again: blobs the registry already holds are not sent twice",
                    ) from e
                time.sleep(self.retry.backoff(attempt))
                if self.blob_size(digest) == size:
                    return True  # the closing request reached the registry; only its answer was lost
                resumed = None if session is None else self._upload_offset(session.location)
                session = None if resumed is None else _UploadSession(*resumed)  # None: start a new one
        raise AssertionError("unreachable")

    def _start_upload(self, digest: OciDigest) -> str:
        response = self.request("POST", f"{self._repo_url}/blobs/uploads/")
        response.close()
        if response.status_code != 202 or "Location" not in response.headers:
            raise self._unexpected(f"starting the upload of {digest.short}", response)
        return urljoin(response.url, response.headers["Location"])

    def _upload_offset(self, location: str) -> tuple[str, int] | None:
        """(location, bytes the registry holds) of an upload session, or None if it is unknown or unreadable."""
        try:
            response = self.request("GET", location)
        except RemoteError:
            return None
        response.close()
        stated = response.headers.get("Range", "")
        if response.status_code != 204 or not stated.startswith("0-") or not stated[2:].isdigit():
            return None
        last = int(stated[2:])
        # "0-0" is what a registry says for an empty session (and for one byte): resume from 0 then.
        return urljoin(response.url, response.headers.get("Location", location)), 0 if last == 0 else last + 1

    def _upload(
        self, digest: OciDigest, size: int, opener: Callable[[], BinaryIO], progress: Progress | None,
        session: _UploadSession,
    ) -> None:
        """Send the blob from the session's offset on (the bytes before it are read and hashed, not sent)."""
        sha, sent = hashlib.sha256(), 0
        offset = session.offset
        octets = {"Content-Type": "application/octet-stream"}
        with opener() as handle:
            while sent < offset:
                skipped = handle.read(min(self.chunk_size, offset - sent))
                if not skipped:
                    break
                sha.update(skipped)
                sent += len(skipped)
            # Read one chunk ahead so the last one rides in the closing PUT (one request for small blobs).
            chunk = handle.read(self.chunk_size)
            sha.update(chunk)
            while following := handle.read(self.chunk_size):
                headers = {**octets, "Content-Range": f"{sent}-{sent + len(chunk) - 1}"}
                session.location = self._upload_step("PATCH", session.location, headers, chunk, digest, 202)
                sent += len(chunk)
                session.offset = sent
                if progress is not None:
                    progress(digest, sent, size)
                chunk = following
                sha.update(chunk)
            body = chunk
            sent += len(body)
        if sent != size or sha.hexdigest() != digest.hex:
            raise IntegrityError(
                f"local blob {digest} changed while uploading (got {sent} bytes hashing to sha256:{sha.hexdigest()})",
                hint="run `brain verify`",
            )
        self._upload_step("PUT", _with_query(session.location, digest=str(digest)), octets, body, digest, 201)
        if progress is not None:
            progress(digest, size, size)

    def _upload_step(self, method: str, url: str, headers: dict, body: bytes, digest: OciDigest, ok: int) -> str:
        # Upload sessions are stateful: a failed step is not re-sent alone; the caller asks the registry
        # how far the session got and resumes from there.
        try:
            response = self.request(method, url, headers=headers, data=body, retry=False)
        except RemoteError as e:
            if isinstance(e.__cause__, _NETWORK_ERRORS):
                raise _Retry(e.message) from e
            raise
        response.close()
        if response.status_code in RETRYABLE_STATUS or response.status_code in (404, 416):
            raise _Retry(f"HTTP {response.status_code} on {method}")
        if response.status_code != ok:
            raise self._unexpected(f"uploading blob {digest.short}", response)
        return urljoin(response.url, response.headers.get("Location", url))

    def fetch_blob(self, digest: OciDigest, size: int, store: BlobStore, progress: Progress | None = None) -> None:
        """Stream blob `digest` into `store`; refuses (stores nothing) on a wrong size or digest."""
        store.put_stream(self._blob_body(digest, size, progress), expected=digest, sync=False)

    def get_blob_bytes(self, digest: OciDigest, size: int, max_size: int = MAX_MANIFEST_BYTES) -> bytes:
        """A small blob (a config) in memory, checked against `size` and `digest` like any download."""
        if size > max_size:
            raise UntrustedArtifactError(f"blob {digest} claims {size} bytes, more than the {max_size} allowed here")
        return b"".join(self._blob_body(digest, size, None))

    def _blob_body(self, digest: OciDigest, size: int, progress: Progress | None) -> Iterator[bytes]:
        """The blob's bytes, verified; a connection dropped mid-body resumes with `Range` where it stopped.

        A `Content-Length` that disagrees with the manifest is asked again once (a proxy may have mangled
        one answer) before the blob is refused as tampered with.
        """
        url = f"{self._repo_url}/blobs/{digest}"
        sha, received = hashlib.sha256(), 0
        failures = wrong_lengths = 0
        while True:
            headers = {"Range": f"bytes={received}-"} if received else {}
            response = self.request("GET", url, headers=headers, stream=True)
            with response:
                skip = self._resume_point(response, digest, received)
                expected = size - received + skip
                announced = response.headers.get("Content-Length")
                if announced is not None and announced.isdigit() and int(announced) != expected:
                    wrong_lengths += 1
                    if wrong_lengths > 1:
                        raise self._lying(digest, f"announced {announced} bytes, the manifest says {expected}")
                    continue
                try:
                    for chunk in response.iter_content(_READ):
                        if skip:
                            dropped = min(skip, len(chunk))
                            chunk, skip = chunk[dropped:], skip - dropped
                        received += len(chunk)
                        if received > size:
                            raise self._lying(digest, f"sent more than the {size} bytes the manifest says")
                        sha.update(chunk)
                        if progress is not None:
                            progress(digest, received, size)
                        if chunk:
                            yield chunk
                except _NETWORK_ERRORS as e:
                    failures += 1
                    if failures >= self.retry.attempts:
                        failure = network_failure(self.reference.registry, e, answered=True)
                        raise RemoteError(
                            f"downloading blob {digest.short} from {self.reference.registry} failed: "
                            f"{failure.error.message}",
                            hint="run the same command again: what was verified is kept",
                        ) from e
                    log.debug("resuming %s at byte %d after %s", digest.short, received, type(e).__name__)
                    time.sleep(self.retry.backoff(failures - 1))
                    continue
            if received != size:
                raise self._lying(digest, f"sent {received} bytes, the manifest says {size}")
            if sha.hexdigest() != digest.hex:
                raise self._lying(digest, f"sent bytes hashing to sha256:{sha.hexdigest()}")
            return

    def _resume_point(self, response: requests.Response, digest: OciDigest, received: int) -> int:
        """How many leading bytes of this answer were already received (0 for a 206 that starts where asked)."""
        if response.status_code == 404:
            raise UntrustedArtifactError(f"registry {self.reference.registry} lacks blob {digest} its manifest names")
        if received and response.status_code == 206:
            stated = response.headers.get("Content-Range", "")
            if not stated.startswith(f"bytes {received}-"):
                raise self._lying(digest, f"answered a resume from byte {received} with Content-Range {stated!r}")
            return 0
        if response.status_code != 200:
            raise self._unexpected(f"downloading blob {digest.short}", response)
        return received  # the registry ignored Range: read past what we have

    def _lying(self, digest: OciDigest, why: str) -> UntrustedArtifactError:
        return UntrustedArtifactError(
            f"refused blob {digest} from {self.reference.registry}: it {why}",
            hint="the registry or something between us altered the artifact; nothing was installed",
        )

    # -- manifests -----------------------------------------------------------------------------------

    def get_manifest(self, reference: str) -> FetchedManifest:
        """Fetch a manifest by tag or digest; a clean 404 (manifest or repository unknown) is `NotFoundError`.

        A connection dropped or a body cut short while it is read is retried like any request.
        """
        url = f"{self._repo_url}/manifests/{reference}"
        for attempt in range(self.retry.attempts):
            response = self.request("GET", url, headers={"Accept": _ACCEPT_MANIFESTS}, stream=True)
            with response:
                if response.status_code == 404 and set(_error_codes(response)) & {"MANIFEST_UNKNOWN", "NAME_UNKNOWN"}:
                    raise NotFoundError(
                        f"{self.reference.registry}/{self.reference.repository} has no manifest {reference}"
                    )
                if response.status_code != 200:
                    raise self._unexpected(f"fetching manifest {reference}", response)
                try:
                    data = self._small_body(response, f"manifest {reference}")
                except _NETWORK_ERRORS as e:
                    if attempt == self.retry.attempts - 1:
                        raise network_failure(self.reference.registry, e, answered=True).error from e
                    time.sleep(self.retry.backoff(attempt))
                    continue
                media_type = response.headers.get("Content-Type", "").split(";")[0].strip()
                served = response.headers.get("Docker-Content-Digest")
            break
        digest = OciDigest.of(data)
        expected = reference if reference.startswith("sha256:") else served
        if expected is not None and expected != str(digest):
            raise UntrustedArtifactError(
                f"manifest {reference} from {self.reference.registry} hashes to {digest}, not {expected}",
                hint="the registry or something between us altered it; nothing was installed",
            )
        return FetchedManifest(data, digest, media_type)

    @staticmethod
    def _small_body(response: requests.Response, what: str) -> bytes:
        """The whole body of a document answer, refusing more than `MAX_MANIFEST_BYTES` or a short read."""
        data = b""
        for chunk in response.iter_content(_READ):
            data += chunk
            if len(data) > MAX_MANIFEST_BYTES:
                raise UntrustedArtifactError(f"{what} is larger than {MAX_MANIFEST_BYTES} bytes")
        announced = response.headers.get("Content-Length")
        if announced is not None and announced.isdigit() and int(announced) != len(data):
            raise requests.exceptions.ChunkedEncodingError(f"{what}: got {len(data)} of {announced} bytes")
        return data

    def put_manifest(self, reference: str, data: bytes) -> OciDigest:
        """Upload manifest bytes under a tag or digest; returns their digest."""
        digest = OciDigest.of(data)
        url = f"{self._repo_url}/manifests/{reference}"
        response = self.request("PUT", url, headers={"Content-Type": MANIFEST_MEDIA_TYPE}, data=data)
        response.close()
        if response.status_code != 201:
            raise self._unexpected(f"uploading manifest {digest.short} as {reference}", response)
        served = response.headers.get("Docker-Content-Digest")
        if served is not None and served != str(digest):
            raise RemoteError(f"registry {self.reference.registry} stored manifest as {served}, expected {digest}")
        return digest
