"""What a registry verb needs from the client that sends it (`oci.transport.RegistryClient` is the one).

The verb modules (`blob_upload`, `blob_download`, `manifests_remote`) take a `Requester` rather than the
client itself, so the client can compose them without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import requests

from brain.identity import OciDigest
from oci.reference import Reference
from oci.retry import RetryPolicy

# progress(digest, bytes done, bytes in all), called as a blob moves.
Progress = Callable[[OciDigest, int, int], None]


class Requester(Protocol):
    """One repository on one registry: where it lives, how to retry, and the one request function."""

    reference: Reference
    retry: RetryPolicy
    chunk_size: int
    repository_url: str

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
        """Send one request with authentication and (if `retry`) bounded retries."""
        ...
