"""Tags on a registry: list a repository's tags (paginated), and point a new tag at an existing manifest.

A remote tag is made by putting the exact manifest bytes the source reference serves under the new tag, so
the digest cannot change; only brain artifacts are tagged (anything else is refused before a write). A tag
that already names another manifest is moved only with `force` (release tags stay put).
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from brain.errors import (
    ConflictError,
    NotFoundError,
    RemoteError,
    UntrustedArtifactError,
)
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.store.layout import validate_tag
from oci.manifest import Manifest
from oci.reference import Reference
from oci.transport import RegistryClient

PAGE_SIZE = 1000
MAX_PAGES = 10_000  # a registry whose `Link` never ends must not loop forever
_NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


def list_tags(client: RegistryClient) -> list[str]:
    """Every tag of the client's repository, following the registry's `Link: <...>; rel="next"` pages."""
    reference = client.reference
    url: str | None = f"{reference.base_url}/v2/{reference.repository}/tags/list?n={PAGE_SIZE}"
    tags: list[str] = []
    for _ in range(MAX_PAGES):
        if url is None:
            return tags
        response = client.request("GET", url)
        with response:
            if response.status_code == 404:
                raise NotFoundError(f"{reference.registry} has no repository {reference.repository}")
            if response.status_code != 200:
                raise RemoteError(
                    f"listing the tags of {reference.repository} on {reference.registry}: "
                    f"unexpected HTTP {response.status_code} ({response.reason})"
                )
            try:
                page = response.json()
                names = page.get("tags") or []
            except (ValueError, AttributeError):
                raise UntrustedArtifactError(
                    f"{reference.registry} answered the tag list with something that is not JSON"
                ) from None
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise UntrustedArtifactError(f"{reference.registry} answered the tag list with a malformed list")
            tags.extend(names)
            match = _NEXT_LINK.search(response.headers.get("Link", ""))
            url = urljoin(url, match.group(1)) if match else None
    raise UntrustedArtifactError(f"{reference.registry} kept paginating the tag list past {MAX_PAGES} pages")


class RemoteTagResult(FrozenModel):
    """`tag REF NEW_TAG` on a registry: the manifest now under `tag`, and what it replaced."""

    reference: str
    tag: str
    digest: OciDigest
    replaced: OciDigest | None = None


def existing_tag_digest(client: RegistryClient, tag: str) -> OciDigest | None:
    """The digest remote `tag` names now, or None when the tag (or the repository) does not exist."""
    try:
        return client.get_manifest(tag).digest
    except NotFoundError:
        return None


def refuse_moving(client: RegistryClient, tag: str, digest: OciDigest, force: bool) -> OciDigest | None:
    """The digest `tag` names now (None if absent); `ConflictError` if it names another manifest and not `force`."""
    current = existing_tag_digest(client, tag)
    if current is not None and current != digest and not force:
        where = f"{client.reference.registry}/{client.reference.repository}:{tag}"
        raise ConflictError(
            f"{where} already names {current.short}, not {digest.short}: tags are not moved silently",
            hint="choose another tag, or pass --force to move it",
        )
    return current


def tag_remote(
    source: Reference, new_tag: str, *, force: bool = False, client: RegistryClient | None = None
) -> RemoteTagResult:
    """Tag the manifest `source` names as `new_tag` in the same repository (exact bytes, same digest)."""
    from oci.auth import resolve_credentials

    validate_tag(new_tag)
    client = client or RegistryClient(source, resolve_credentials(source.registry))
    fetched = client.get_manifest(source.manifest_reference)
    Manifest.decode(fetched.data, what=f"manifest {source}")  # only brain artifacts are tagged
    replaced = refuse_moving(client, new_tag, fetched.digest, force)
    if replaced != fetched.digest:
        client.put_manifest(new_tag, fetched.data)
    target = Reference(source.registry, source.repository, new_tag, None, source.plain_http)
    return RemoteTagResult(
        reference=str(target), tag=new_tag, digest=fetched.digest,
        replaced=replaced if replaced != fetched.digest else None,
    )
