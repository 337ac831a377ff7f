"""`copy SRC DST`: a brain artifact from one registry or repository to another, without a local brain.

Every blob (config and layers) streams from the source straight into the destination's upload, hashed on
the way: the last chunk is only sent once the whole blob hashed to its digest and had its size, so the
destination never commits a byte the manifest does not name (the registry checks the digest again).
Memory is bounded by two upload chunks whatever the blob size. Blobs the destination already holds are not
sent. The manifest goes last, as the exact bytes the source served, so the destination digest equals the
source digest; then the artifact's referrers (signatures, §9) follow the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import BinaryIO, Self, cast

from brain.errors import RemoteError, UntrustedArtifactError, UsageError
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from oci.manifest import Descriptor, Manifest
from oci.network import NETWORK_ERRORS
from oci.reference import Reference
from oci.referrers import Referrers, collect_referrers, merge_fallback_index
from oci.remote_tags import refuse_moving
from oci.transport import Progress, RegistryClient

_READ = 1 << 20


class _SourceBlob:
    """A blob download from the source as a file object whose bytes are checked against digest and size."""

    def __init__(self, client: RegistryClient, digest: OciDigest, size: int) -> None:
        self._client, self._digest, self._size = client, digest, size
        reference = client.reference
        self._response = client.request(
            "GET", f"{reference.base_url}/v2/{reference.repository}/blobs/{digest}", stream=True
        )
        if self._response.status_code != 200:
            status = self._response.status_code
            self._response.close()
            if status == 404:
                raise UntrustedArtifactError(f"{reference.registry} lacks blob {digest} its manifest names")
            raise RemoteError(f"downloading blob {digest.short} from {reference.registry}: unexpected HTTP {status}")
        self._chunks: Iterator[bytes] = self._response.iter_content(_READ)
        self._buffer = bytearray()
        self._sha = hashlib.sha256()
        self._received = 0
        self._done = False

    def _refuse(self, why: str) -> UntrustedArtifactError:
        return UntrustedArtifactError(
            f"refused blob {self._digest} from {self._client.reference.registry}: it {why}",
            hint="the source registry or something between us altered the artifact; nothing was tagged",
        )

    def _pull(self) -> bool:
        try:
            chunk = next(self._chunks)
        except StopIteration:
            return False
        except NETWORK_ERRORS as e:
            raise RemoteError(
                f"reading blob {self._digest.short} from {self._client.reference.registry} failed: {type(e).__name__}"
            ) from e
        self._received += len(chunk)
        if self._received > self._size:
            raise self._refuse(f"sent more than the {self._size} bytes the manifest says")
        self._sha.update(chunk)
        self._buffer += chunk
        return True

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes; at the end, the size and digest are checked before b"" is returned."""
        while (size < 0 or len(self._buffer) < size) and not self._done:
            if not self._pull():
                self._done = True
                if self._received != self._size:
                    raise self._refuse(f"sent {self._received} bytes, the manifest says {self._size}")
                if self._sha.hexdigest() != self._digest.hex:
                    raise self._refuse(f"sent bytes hashing to sha256:{self._sha.hexdigest()}")
        cut = len(self._buffer) if size < 0 else min(size, len(self._buffer))
        data = bytes(self._buffer[:cut])
        del self._buffer[:cut]
        return data

    def close(self) -> None:
        """Release the source connection."""
        self._response.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class CopiedManifest(FrozenModel):
    """One manifest copied (the artifact itself or one of its referrers) and what its blobs cost."""

    digest: OciDigest
    artifact_type: str | None = None
    blobs_copied: int
    blobs_present: int
    bytes_copied: int


class CopyResult(FrozenModel):
    """What `copy` did: the destination reference, its manifest digest (equal to the source's), referrers."""

    source: str
    destination: str
    digest: OciDigest
    size: int
    blobs_copied: int
    blobs_present: int
    bytes_copied: int
    replaced: OciDigest | None = None
    referrers: list[CopiedManifest] = []


def _copy_blobs(
    source: RegistryClient, destination: RegistryClient, descriptors: list[Descriptor], progress: Progress | None
) -> tuple[int, int, int]:
    copied = present = sent = 0
    for descriptor in {d.digest: d for d in descriptors}.values():
        digest, size = descriptor.digest, descriptor.size
        opener = cast(Callable[[], BinaryIO], lambda d=digest, s=size: _SourceBlob(source, d, s))
        if destination.push_blob(digest, size, opener, progress):
            copied, sent = copied + 1, sent + size
        else:
            present += 1
    return copied, present, sent


def _blobs_of(data: bytes, what: str) -> tuple[list[Descriptor], str | None]:
    """The config and layer descriptors of any OCI manifest (a referrer need not be a brain artifact)."""
    import json

    try:
        value = json.loads(data)
        blobs = [
            Descriptor.model_validate(value["config"]),
            *(Descriptor.model_validate(d) for d in value.get("layers", [])),
        ]
    except (ValueError, KeyError, TypeError) as e:
        raise UntrustedArtifactError(f"{what} is not an OCI image manifest ({type(e).__name__})") from None
    artifact_type = value.get("artifactType") if isinstance(value.get("artifactType"), str) else None
    return blobs, artifact_type


def copy_artifact(
    source_ref: Reference,
    destination_ref: Reference,
    *,
    force: bool = False,
    with_referrers: bool = True,
    progress: Progress | None = None,
    source: RegistryClient | None = None,
    destination: RegistryClient | None = None,
    list_referrers: Callable[[RegistryClient, OciDigest], Referrers] | None = None,
) -> CopyResult:
    """Copy the brain artifact `source_ref` names to `destination_ref` (its tag, else the source's tag)."""
    from oci.auth import resolve_credentials

    if destination_ref.digest is not None:
        raise UsageError(
            f"cannot copy to {destination_ref}: the destination names a tag, not a digest", hint="drop @sha256:..."
        )
    source = source or RegistryClient(source_ref, resolve_credentials(source_ref.registry))
    destination = destination or RegistryClient(destination_ref, resolve_credentials(destination_ref.registry))
    fetched = source.get_manifest(source_ref.manifest_reference)
    manifest = Manifest.decode(fetched.data, what=f"manifest {source_ref}")  # a brain artifact, or refused here
    tag = destination_ref.tag or source_ref.tag or None
    replaced = refuse_moving(destination, tag, fetched.digest, force) if tag is not None else None
    # The referrers are listed and judged before the destination gets anything: a broken listing refuses
    # the copy while the destination still holds nothing of it (not the artifact without its signatures).
    found = (list_referrers or collect_referrers)(source, fetched.digest) if with_referrers else None
    judged = [
        (referrer, *_blobs_of(referrer.data, f"referrer {referrer.digest} of {fetched.digest.short}"))
        for referrer in (found.manifests if found is not None else ())
    ]
    copied, present, sent = _copy_blobs(source, destination, [manifest.config, *manifest.layers], progress)
    destination.put_manifest(tag or str(fetched.digest), fetched.data)
    referrers: list[CopiedManifest] = []
    if found is not None:
        for referrer, blobs, artifact_type in judged:
            r_copied, r_present, r_sent = _copy_blobs(source, destination, blobs, progress)
            destination.put_manifest(str(referrer.digest), referrer.data)
            referrers.append(CopiedManifest(
                digest=referrer.digest, artifact_type=artifact_type,
                blobs_copied=r_copied, blobs_present=r_present, bytes_copied=r_sent,
            ))  # fmt: skip
        if found.fallback_index is not None:
            merge_fallback_index(destination, fetched.digest, found.fallback_index)
    shown = Reference(destination_ref.registry, destination_ref.repository, tag, None if tag else fetched.digest)
    return CopyResult(
        source=str(source_ref), destination=str(shown), digest=fetched.digest, size=len(fetched.data),
        blobs_copied=copied, blobs_present=present, bytes_copied=sent,
        replaced=replaced if replaced != fetched.digest else None, referrers=referrers,
    )  # fmt: skip
