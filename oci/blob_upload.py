"""Blob uploads in constant memory: HEAD existence checks, upload sessions (POST, PATCH..., PUT?digest), resume.

Upload sessions are stateful, so a failed step is not re-sent alone: the registry is asked how far the
session got (`GET` on its location, `Range: 0-<last>`) and the upload resumes from there; a session the
registry forgot starts over. The bytes sent are hashed on the way and must be the blob the caller named.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from brain.errors import IntegrityError, RemoteError
from brain.identity import OciDigest
from oci.network import NETWORK_ERRORS, unexpected
from oci.requester import Progress, Requester
from oci.retry import RETRYABLE_STATUS



class _Retry(Exception):
    """A failure worth another try of the whole upload (resumed where the registry's session stands)."""


@dataclass
class _UploadSession:
    """Where an upload session lives now and how many bytes of the blob the registry holds."""

    location: str
    offset: int = 0


def blob_size(client: Requester, digest: OciDigest) -> int | None:
    """The size of blob `digest` in the client's repository, or None if the registry does not have it."""
    response = client.request("HEAD", f"{client.repository_url}/blobs/{digest}")
    response.close()
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise unexpected(client.reference.registry, f"checking blob {digest.short}", response)
    return int(response.headers.get("Content-Length", "-1"))


def push_blob(
    client: Requester, digest: OciDigest, size: int, opener: Callable[[], BinaryIO], progress: Progress | None
) -> bool:
    """Upload a blob unless the registry already has it; returns True iff bytes were sent.

    A failed step resumes from the offset the registry reports for the upload session (so a reset at
    10 MB of 40 MB sends about 30 MB more, not 40); a session the registry forgot starts over.
    """
    if blob_size(client, digest) == size:
        return False
    retry = client.retry
    session: _UploadSession | None = None
    for attempt in range(retry.attempts):
        try:
            if session is None:
                session = _UploadSession(_start_upload(client, digest))
            _upload(client, digest, size, opener, progress, session)
            return True
        except _Retry as e:
            if attempt == retry.attempts - 1:
                raise RemoteError(
                    f"uploading blob {digest.short} to {client.reference.registry} failed: {e}",
                    hint="run the same push again: blobs the registry already holds are not sent twice",
                ) from e
            time.sleep(retry.backoff(attempt))
            if blob_size(client, digest) == size:
                return True  # the closing request reached the registry; only its answer was lost
            resumed = None if session is None else _upload_offset(client, session.location)
            session = None if resumed is None else _UploadSession(*resumed)  # None: start a new one
    raise AssertionError("unreachable")


def _start_upload(client: Requester, digest: OciDigest) -> str:
    response = client.request("POST", f"{client.repository_url}/blobs/uploads/")
    response.close()
    if response.status_code != 202 or "Location" not in response.headers:
        raise unexpected(client.reference.registry, f"starting the upload of {digest.short}", response)
    return urljoin(response.url, response.headers["Location"])


def _upload_offset(client: Requester, location: str) -> tuple[str, int] | None:
    """(location, bytes the registry holds) of an upload session, or None if it is unknown or unreadable."""
    try:
        response = client.request("GET", location)
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
    client: Requester, digest: OciDigest, size: int, opener: Callable[[], BinaryIO], progress: Progress | None,
    session: _UploadSession,
) -> None:
    """Send the blob from the session's offset on (the bytes before it are read and hashed, not sent)."""
    sha, sent = hashlib.sha256(), 0
    offset, chunk_size = session.offset, client.chunk_size
    octets = {"Content-Type": "application/octet-stream"}
    with opener() as handle:
        while sent < offset:
            skipped = handle.read(min(chunk_size, offset - sent))
            if not skipped:
                break
            sha.update(skipped)
            sent += len(skipped)
        # Read one chunk ahead so the last one rides in the closing PUT (one request for small blobs).
        chunk = handle.read(chunk_size)
        sha.update(chunk)
        while following := handle.read(chunk_size):
            headers = {**octets, "Content-Range": f"{sent}-{sent + len(chunk) - 1}"}
            session.location = _upload_step(client, "PATCH", session.location, headers, chunk, digest, 202)
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
    _upload_step(client, "PUT", _with_query(session.location, digest=str(digest)), octets, body, digest, 201)
    if progress is not None:
        progress(digest, size, size)


def _upload_step(
    client: Requester, method: str, url: str, headers: dict[str, str], body: bytes, digest: OciDigest, ok: int
) -> str:
    """One request of the session, not retried alone; returns where the session lives next."""
    try:
        response = client.request(method, url, headers=headers, data=body, retry=False)
    except RemoteError as e:
        if isinstance(e.__cause__, NETWORK_ERRORS):
            raise _Retry(e.message) from e
        raise
    response.close()
    if response.status_code in RETRYABLE_STATUS or response.status_code in (404, 416):
        raise _Retry(f"HTTP {response.status_code} on {method}")
    if response.status_code != ok:
        raise unexpected(client.reference.registry, f"uploading blob {digest.short}", response)
    return urljoin(response.url, response.headers.get("Location", url))


def _with_query(url: str, **params: str) -> str:
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
