"""Manifests on a registry: GET by tag or digest (bounded, digest checked), PUT by tag or digest.

A manifest is small and read whole: more than `MAX_MANIFEST_BYTES`, or a body shorter than its
`Content-Length`, is refused (a short read is retried like a dropped connection). The bytes must hash to
the digest asked for, or to the `Docker-Content-Digest` the registry announced for a tag.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import requests

from brain.errors import NotFoundError, RemoteError, UntrustedArtifactError
from brain.identity import OciDigest
from oci import media_types as mt
from oci.network import NETWORK_ERRORS, error_codes, network_failure, unexpected
from oci.requester import Requester


MAX_MANIFEST_BYTES = 4 << 20
# We only install OCI manifests, but ask for every kind: a registry answers 404 for an index it may not
# send, and a tag that holds something else must not look free to `push`.
_ACCEPT_MANIFESTS = ", ".join((
    mt.MANIFEST,
    mt.INDEX,
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
))
_READ = 1 << 20


@dataclass(frozen=True)
class FetchedManifest:
    """Manifest bytes as served, their digest and the Content-Type the registry announced."""

    data: bytes
    digest: OciDigest
    media_type: str


def get_manifest(client: Requester, reference: str) -> FetchedManifest:
    """Fetch a manifest by tag or digest; a clean 404 (manifest or repository unknown) is `NotFoundError`.

    A connection dropped or a body cut short while it is read is retried like any request.
    """
    url = f"{client.repository_url}/manifests/{reference}"
    registry, retry = client.reference.registry, client.retry
    for attempt in range(retry.attempts):
        response = client.request("GET", url, headers={"Accept": _ACCEPT_MANIFESTS}, stream=True)
        with response:
            if response.status_code == 404 and set(error_codes(response)) & {"MANIFEST_UNKNOWN", "NAME_UNKNOWN"}:
                raise NotFoundError(f"{registry}/{client.reference.repository} has no manifest {reference}")
            if response.status_code != 200:
                raise unexpected(registry, f"fetching manifest {reference}", response)
            try:
                data = _small_body(response, f"manifest {reference}")
            except NETWORK_ERRORS as e:
                if attempt == retry.attempts - 1:
                    raise network_failure(registry, e, answered=True).error from e
                time.sleep(retry.backoff(attempt))
                continue
            media_type = response.headers.get("Content-Type", "").split(";")[0].strip()
            served = response.headers.get("Docker-Content-Digest")
        break
    digest = OciDigest.of(data)
    expected = reference if reference.startswith("sha256:") else served
    if expected is not None and expected != str(digest):
        raise UntrustedArtifactError(
            f"manifest {reference} from {registry} hashes to {digest}, not {expected}",
            hint="the registry or something between us altered it; nothing was installed",
        )
    return FetchedManifest(data, digest, media_type)


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


def put_manifest(client: Requester, reference: str, data: bytes) -> OciDigest:
    """Upload manifest bytes under a tag or digest; returns their digest."""
    digest = OciDigest.of(data)
    url = f"{client.repository_url}/manifests/{reference}"
    response = client.request("PUT", url, headers={"Content-Type": mt.MANIFEST}, data=data)
    response.close()
    if response.status_code != 201:
        raise unexpected(client.reference.registry, f"uploading manifest {digest.short} as {reference}", response)
    served = response.headers.get("Docker-Content-Digest")
    if served is not None and served != str(digest):
        raise RemoteError(f"registry {client.reference.registry} stored manifest as {served}, expected {digest}")
    return digest
