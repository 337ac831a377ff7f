"""Blob downloads: bytes streamed and checked (size, digest) before anything is kept, resumed with `Range`.

A connection dropped mid-body resumes where it stopped (a registry that ignores `Range` is read past what
was received). A registry that lies — a wrong `Content-Length` twice, more or fewer bytes than the
manifest says, other bytes, a `Content-Range` that does not start where asked — is refused in one line.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterator

import requests

from brain.errors import RemoteError, UntrustedArtifactError
from brain.identity import OciDigest
from brain.store.blobs import BlobStore
from oci.manifests_remote import MAX_MANIFEST_BYTES
from oci.network import NETWORK_ERRORS, network_failure, unexpected
from oci.requester import Progress, Requester


log = logging.getLogger("brain.oci.transport")
_READ = 1 << 20


def fetch_blob(client: Requester, digest: OciDigest, size: int, store: BlobStore, progress: Progress | None) -> None:
    """Stream blob `digest` into `store`; refuses (stores nothing) on a wrong size or digest."""
    store.put_stream(blob_body(client, digest, size, progress), expected=digest, sync=False)


def get_blob_bytes(client: Requester, digest: OciDigest, size: int, max_size: int = MAX_MANIFEST_BYTES) -> bytes:
    """A small blob (a config) in memory, checked against `size` and `digest` like any download."""
    if size > max_size:
        raise UntrustedArtifactError(f"blob {digest} claims {size} bytes, more than the {max_size} allowed here")
    return b"".join(blob_body(client, digest, size, None))


def blob_body(client: Requester, digest: OciDigest, size: int, progress: Progress | None) -> Iterator[bytes]:
    """The blob's bytes, verified; a connection dropped mid-body resumes with `Range` where it stopped.

    A `Content-Length` that disagrees with the manifest is asked again once (a proxy may have mangled
    one answer) before the blob is refused as tampered with.
    """
    registry = client.reference.registry
    url = f"{client.repository_url}/blobs/{digest}"
    sha, received = hashlib.sha256(), 0
    failures = wrong_lengths = 0
    while True:
        headers = {"Range": f"bytes={received}-"} if received else {}
        response = client.request("GET", url, headers=headers, stream=True)
        with response:
            skip = _resume_point(registry, response, digest, received)
            expected = size - received + skip
            announced = response.headers.get("Content-Length")
            if announced is not None and announced.isdigit() and int(announced) != expected:
                wrong_lengths += 1
                if wrong_lengths > 1:
                    raise _lying(registry, digest, f"announced {announced} bytes, the manifest says {expected}")
                continue
            try:
                for chunk in response.iter_content(_READ):
                    if skip:
                        dropped = min(skip, len(chunk))
                        chunk, skip = chunk[dropped:], skip - dropped
                    received += len(chunk)
                    if received > size:
                        raise _lying(registry, digest, f"sent more than the {size} bytes the manifest says")
                    sha.update(chunk)
                    if progress is not None:
                        progress(digest, received, size)
                    if chunk:
                        yield chunk
            except NETWORK_ERRORS as e:
                failures += 1
                if failures >= client.retry.attempts:
                    failure = network_failure(registry, e, answered=True)
                    raise RemoteError(
                        f"downloading blob {digest.short} from {registry} failed: {failure.error.message}",
                        hint="run the same command again: what was verified is kept",
                    ) from e
                log.debug("resuming %s at byte %d after %s", digest.short, received, type(e).__name__)
                time.sleep(client.retry.backoff(failures - 1))
                continue
        if received != size:
            raise _lying(registry, digest, f"sent {received} bytes, the manifest says {size}")
        if sha.hexdigest() != digest.hex:
            raise _lying(registry, digest, f"sent bytes hashing to sha256:{sha.hexdigest()}")
        return


def _resume_point(registry: str, response: requests.Response, digest: OciDigest, received: int) -> int:
    """How many leading bytes of this answer were already received (0 for a 206 that starts where asked)."""
    if response.status_code == 404:
        raise UntrustedArtifactError(f"registry {registry} lacks blob {digest} its manifest names")
    if received and response.status_code == 206:
        stated = response.headers.get("Content-Range", "")
        if not stated.startswith(f"bytes {received}-"):
            raise _lying(registry, digest, f"answered a resume from byte {received} with Content-Range {stated!r}")
        return 0
    if response.status_code != 200:
        raise unexpected(registry, f"downloading blob {digest.short}", response)
    return received  # the registry ignored Range: read past what we have


def _lying(registry: str, digest: OciDigest, why: str) -> UntrustedArtifactError:
    return UntrustedArtifactError(
        f"refused blob {digest} from {registry}: it {why}",
        hint="the registry or something between us altered the artifact; nothing was installed",
    )
