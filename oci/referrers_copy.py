"""The referrers of a manifest (signatures, §9), as `copy` brings them along.

Listing is `oci.referrers.list_referrers` (the Referrers API, else the fallback tag `sha256-<hex>` naming an
image index, for registries without the API such as distribution 2.x), for every artifact type. Each
referrer manifest is fetched by digest (so its bytes are checked) and must name the subject it is listed
for. The destination gets the referrer manifests by digest and, when the source keeps a fallback index,
that index too (its entries as served), merged with any index already there so other signatures are kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from brain.errors import NotFoundError, RemoteError, UntrustedArtifactError
from brain.identity import OciDigest
from oci.referrers import fallback_tag
from oci.transport import FetchedManifest, RegistryClient

INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"
MAX_REFERRERS = 1000


@dataclass(frozen=True)
class Referrers:
    """The referrer manifests of one subject, and the fallback index they were listed by (if any)."""

    manifests: list[FetchedManifest]
    fallback_index: list[dict] | None = None


def _index_entries(data: bytes, what: str) -> list[dict]:
    try:
        value = json.loads(data)
        entries = value["manifests"]
    except (ValueError, KeyError, TypeError):
        raise UntrustedArtifactError(f"{what} is not an OCI image index") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("digest"), str) for e in entries):
        raise UntrustedArtifactError(f"{what} lists malformed descriptors")
    if len(entries) > MAX_REFERRERS:
        raise UntrustedArtifactError(f"{what} lists more than {MAX_REFERRERS} referrers")
    return entries


def list_referrers(client: RegistryClient, digest: OciDigest) -> Referrers:
    """Every manifest whose `subject` is `digest` in the client's repository, whatever its artifact type."""
    from oci.referrers import list_referrers as listing

    listed = listing(client, digest, artifact_type=None)
    if len(listed) > MAX_REFERRERS:
        raise UntrustedArtifactError(f"{client.reference.registry} lists more than {MAX_REFERRERS} referrers of {digest.short}")
    fallback = _fallback_entries(client, digest)
    manifests = []
    for entry in listed:
        referrer = client.get_manifest(str(entry.digest))
        try:
            subject = json.loads(referrer.data).get("subject", {}).get("digest")
        except (ValueError, AttributeError):
            subject = None
        if subject != str(digest):
            raise UntrustedArtifactError(f"referrer {referrer.digest.short} is listed for {digest.short} but names subject {subject}")
        manifests.append(referrer)
    return Referrers(manifests, fallback)


def _fallback_entries(client: RegistryClient, digest: OciDigest) -> list[dict] | None:
    """The source's fallback index entries as served (annotations kept), or None when it has none."""
    try:
        fetched = client.get_manifest(fallback_tag(digest))
    except NotFoundError:
        return None
    return _index_entries(fetched.data, f"referrers index {fallback_tag(digest)}")


def put_fallback_index(client: RegistryClient, digest: OciDigest, entries: list[dict]) -> None:
    """Write the fallback index for `digest` on the destination: its entries plus any already there."""
    tag = fallback_tag(digest)
    try:
        existing = _index_entries(client.get_manifest(tag).data, f"referrers index {tag}")
    except NotFoundError:
        existing = []
    merged = {e["digest"]: e for e in existing}
    merged.update({e["digest"]: e for e in entries})
    if existing and set(merged) == {e["digest"] for e in existing}:
        return
    data = json.dumps(
        {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": list(merged.values())}, separators=(",", ":")
    ).encode()
    reference = client.reference
    response = client.request(
        "PUT", f"{reference.base_url}/v2/{reference.repository}/manifests/{tag}",
        headers={"Content-Type": INDEX_MEDIA_TYPE}, data=data,
    )  # fmt: skip
    response.close()
    if response.status_code != 201:
        raise RemoteError(f"writing referrers index {tag} on {reference.registry}: unexpected HTTP {response.status_code}")
