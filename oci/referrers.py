"""Signatures as OCI referrers (§9.4): signature manifests, the local index entries, and the registry side.

A signature manifest wraps one record (its only layer) with the empty config and names the brain manifest
as its `subject`. Locally, `pack` stores them and lists them untagged in `index.json`. Remotely, `push`
PUTs them by digest and, when the registry does not answer with `OCI-Subject` (no Referrers API), keeps
the `sha256-<hex>` fallback index up to date (`merge_fallback_index`); `pull`/`fetch` discover them with
`list_referrers` and read them with `fetch_signature_records`. The referrers query escapes its `+`
(§9.10 item 3) and results are filtered client-side anyway.

This module is the one owner of the registry's referrers: listing them (Referrers API, else the fallback
tag), reading an index's entries, and writing/merging the fallback index. `brain copy` uses the same code
(`collect_referrers`, `merge_fallback_index`), only stricter: discovery skips what it cannot read, a copy
refuses it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, ValidationError

from brain.authenticity import chain_of
from brain.authn.chain import ChainStore
from brain.authn.records import (
    MAX_RECORD_BYTES,
    MAX_RECORDS_PER_SNAPSHOT,
    RecordDecodeError,
    SignatureRecord,
)
from brain.authn.trust import digest_of
from brain.brain import Brain
from brain.errors import (
    BrainError,
    CanonicalFormError,
    NotFoundError,
    RemoteError,
    UntrustedArtifactError,
)
from brain.frozen import FrozenModel
from brain.identity import OciDigest, canonicalize, parse_strict
from brain.store.layout import Descriptor as IndexEntry
from oci import media_types as mt
from oci.transport import MAX_MANIFEST_BYTES, FetchedManifest, RegistryClient

EMPTY_CONFIG = b"{}"
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
SIGNATURE_KEY = "ai.gaussia.boltzmann.signature-key"
SIGNATURE_SNAPSHOT = "ai.gaussia.boltzmann.signature-snapshot"
# Per discovery call (code-only in the reference).
MAX_RECORDS_PER_CALL = 4096
MAX_INDEX_BYTES = 4 << 20
# Referrer manifests `copy` brings along per artifact.
MAX_REFERRERS = 1000


def _empty_descriptor() -> dict[str, object]:
    return {"digest": str(OciDigest.of(EMPTY_CONFIG)), "mediaType": EMPTY_MEDIA_TYPE, "size": len(EMPTY_CONFIG)}


def annotations_of(record: SignatureRecord) -> dict[str, str]:
    """The browsing aids a signature manifest carries (verification never reads them)."""
    return {SIGNATURE_KEY: record.key, SIGNATURE_SNAPSHOT: str(record.snapshot)}


def signature_manifest(record: SignatureRecord, subject: OciDigest, subject_size: int) -> bytes:
    """The JCS bytes of the signature manifest wrapping `record` for brain manifest `subject`."""
    return canonicalize({
        "annotations": annotations_of(record),
        "artifactType": mt.SIGNATURE_ARTIFACT,
        "config": _empty_descriptor(),
        "layers": [{"digest": str(record.digest), "mediaType": mt.SIGNATURE_ARTIFACT, "size": len(record.to_bytes())}],
        "mediaType": mt.MANIFEST,
        "schemaVersion": 2,
        "subject": {"digest": str(subject), "mediaType": mt.MANIFEST, "size": subject_size},
    })


def index_entry(record: SignatureRecord, manifest: bytes) -> dict[str, object]:
    """The descriptor of a signature manifest as `index.json` and a fallback index list it."""
    return {
        "annotations": annotations_of(record), "artifactType": mt.SIGNATURE_ARTIFACT,
        "digest": str(OciDigest.of(manifest)), "mediaType": mt.MANIFEST, "size": len(manifest),
    }


def travelling_records(chain: ChainStore, snapshot: OciDigest) -> list[SignatureRecord]:
    """The records that travel with `snapshot` (§9.4): over it, over every trust-root revision on its
    first-parent walk, and over the genesis if that carries a trust root. Newest first, each once."""
    found: dict[OciDigest, SignatureRecord] = {}
    current = chain.snapshot(snapshot)
    digest: OciDigest | None = snapshot
    first = True
    seen: set[OciDigest] = set()
    while current is not None and digest is not None and digest not in seen:
        seen.add(digest)
        parent_digest = current.first_parent
        parent = None if parent_digest is None else chain.snapshot(parent_digest)
        revision = parent is not None and digest_of(parent.trust_root) != digest_of(current.trust_root)
        genesis = parent_digest is None and current.trust_root is not None
        if first or revision or genesis:
            for record in sorted(chain.records(digest), key=lambda r: r.digest.hex):
                found.setdefault(record.digest, record)
        first = False
        digest, current = parent_digest, parent
    return list(found.values())


def record_signatures(brain: Brain, snapshot: OciDigest, manifest: OciDigest, manifest_size: int) -> list[OciDigest]:
    """Store a signature manifest per travelling record and list each untagged in `index.json` (lock held)."""
    records = travelling_records(chain_of(brain), snapshot)
    if not records:
        return []
    brain.blobs.put(EMPTY_CONFIG, sync=False)
    listed = {d.digest for d in brain.layout.index().manifests}
    written: list[OciDigest] = []
    entries: list[IndexEntry] = []
    for record in records:
        data = signature_manifest(record, manifest, manifest_size)
        digest = brain.blobs.put(data, sync=False)
        written.append(digest)
        if digest not in listed:
            listed.add(digest)
            entries.append(IndexEntry.model_validate(index_entry(record, data)))
    brain.blobs.sync()
    if entries:
        index = brain.layout.index()
        brain.layout.write_index(index.model_copy(update={"manifests": (*index.manifests, *entries)}))
    return written


# --- the registry side -----------------------------------------------------------------------------------


class Referrer(BaseModel):
    """One entry of a referrers listing."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    mediaType: str
    digest: OciDigest
    size: int
    artifactType: str | None = None


def fallback_tag(subject: OciDigest) -> str:
    """The `sha256-<hex>` tag of the referrers fallback index."""
    return f"sha256-{subject.hex}"


def index_entries(data: bytes, where: str) -> list[object]:
    """The items of an image index's `manifests` (a referrers listing or a fallback index), as served.

    Bytes that are not strict JSON or carry no `manifests` list are refused in one line; the items are not
    judged here (discovery skips unreadable ones, `copy` refuses them before it adopts the index).
    """
    try:
        document = parse_strict(data)
    except CanonicalFormError as e:
        raise UntrustedArtifactError(f"{where} is not a JSON image index: {e.message}",
                                     hint="the registry holds a broken referrers index; nothing was installed") from None
    manifests = document.get("manifests") if isinstance(document, dict) else None
    if not isinstance(manifests, list):
        raise UntrustedArtifactError(f"{where} is not an image index (no manifests list)")
    return manifests


def _referrers(entries: Iterable[object], artifact_type: str | None) -> list[Referrer]:
    found = []
    for entry in entries:
        try:
            referrer = Referrer.model_validate(entry)
        except ValidationError:
            continue  # unreadable entries are skipped (§9.4)
        if artifact_type is None or referrer.artifactType == artifact_type:
            found.append(referrer)
    return found


def _api_listing(client: RegistryClient, subject: OciDigest, artifact_type: str | None) -> list[object] | None:
    """The entries the Referrers API lists for `subject`, or None when the registry has no such API."""
    url = f"{repository_url(client)}/referrers/{subject}"
    if artifact_type is not None:
        url += "?artifactType=" + quote(artifact_type, safe="")
    response = client.request("GET", url, headers={"Accept": mt.INDEX}, stream=True)
    with response:
        if response.status_code == 200:
            data = b""
            for chunk in response.iter_content(1 << 16):
                data += chunk
                if len(data) > MAX_INDEX_BYTES:
                    raise UntrustedArtifactError(f"the referrers listing of {subject} exceeds {MAX_INDEX_BYTES} bytes")
            return index_entries(data, f"the referrers listing of {subject}")
        if response.status_code not in (404, 400, 405):
            raise _status_error(client, f"listing referrers of {subject.short}", response.status_code)
    return None


def read_fallback_index(client: RegistryClient, subject: OciDigest) -> list[object] | None:
    """The entries of the `sha256-<hex>` fallback index of `subject` as served, or None when there is none."""
    tag = fallback_tag(subject)
    try:
        fetched = client.get_manifest(tag)
    except NotFoundError:
        return None
    except UntrustedArtifactError as e:
        raise UntrustedArtifactError(
            f"the referrers fallback index {tag} was refused: {e.message}",
            hint="the registry serves a broken or oversized signature listing; nothing was installed",
        ) from None
    return index_entries(fetched.data, f"the fallback referrers index {tag}")


def list_referrers(client: RegistryClient, subject: OciDigest, artifact_type: str | None = mt.SIGNATURE_ARTIFACT) -> list[Referrer]:
    """The manifests that name `subject`: the Referrers API when the registry has it, else the fallback tag."""
    listed = _api_listing(client, subject, artifact_type)
    if listed is None:
        listed = read_fallback_index(client, subject) or []
    return _referrers(listed, artifact_type)


def _named_subject(document: object) -> object:
    """The `subject.digest` a manifest document names, or None."""
    subject = document.get("subject") if isinstance(document, dict) else None
    return subject.get("digest") if isinstance(subject, dict) else None


@dataclass(frozen=True)
class Referrers:
    """Every referrer manifest of one subject (any artifact type), and the fallback index entries if one exists."""

    manifests: list[FetchedManifest]
    fallback_index: list[dict[str, object]] | None = None


def collect_referrers(client: RegistryClient, subject: OciDigest) -> Referrers:
    """All referrers of `subject` as `copy` brings them along: each manifest fetched by digest (its bytes
    checked) and naming `subject`, and the source's fallback index (kept even when the Referrers API
    answered, so a destination without the API still finds them). Unlike discovery, which skips, a copy
    refuses a referrer naming another subject, more than `MAX_REFERRERS` listed, or a fallback index with
    malformed descriptors: it carries the listing as served or stops."""
    listed = _api_listing(client, subject, None)
    fallback = read_fallback_index(client, subject)
    referrers = _referrers(listed if listed is not None else fallback or [], None)
    if len(referrers) > MAX_REFERRERS:
        raise UntrustedArtifactError(
            f"the referrers of {subject.short} on {client.reference.registry}: more than {MAX_REFERRERS} are listed"
        )
    descriptors = None if fallback is None else _descriptors(fallback, f"the fallback referrers index {fallback_tag(subject)}")
    manifests = []
    for referrer in referrers:
        fetched = client.get_manifest(str(referrer.digest))
        try:
            named = _named_subject(parse_strict(fetched.data))
        except CanonicalFormError:
            named = None
        if named != str(subject):
            raise UntrustedArtifactError(f"referrer {fetched.digest.short} is listed for {subject.short} but names subject {named}")
        manifests.append(fetched)
    return Referrers(manifests, descriptors)


def _descriptors(entries: list[object], where: str) -> list[dict[str, object]]:
    """`entries` when every one is a descriptor with a digest and there are at most `MAX_REFERRERS`."""
    if len(entries) > MAX_REFERRERS:
        raise UntrustedArtifactError(f"{where} lists more than {MAX_REFERRERS} referrers")
    descriptors = [entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("digest"), str)]
    if len(descriptors) != len(entries):
        raise UntrustedArtifactError(f"{where} lists malformed descriptors")
    return descriptors


def merge_fallback_index(client: RegistryClient, subject: OciDigest, entries: Iterable[dict[str, object]]) -> None:
    """Add `entries` to the fallback index of `subject` (§9.4): existing entries kept verbatim, digests not yet
    listed appended in order, the index PUT as JCS. Nothing is written when the index lists them all already."""
    tag = fallback_tag(subject)
    current = read_fallback_index(client, subject)
    kept = [entry for entry in current or [] if isinstance(entry, dict)]
    listed = {entry.get("digest") for entry in kept}
    added = []
    for entry in entries:
        if entry["digest"] not in listed:
            listed.add(entry["digest"])
            added.append(entry)
    if not added and current is not None:
        return
    # Read-modify-write: not atomic (a concurrent push of other signatures may be lost; the next push re-adds it).
    body = canonicalize({"manifests": [*kept, *added], "mediaType": mt.INDEX, "schemaVersion": 2})
    response = client.request("PUT", f"{repository_url(client)}/manifests/{tag}", headers={"Content-Type": mt.INDEX}, data=body)
    response.close()
    if response.status_code != 201:
        raise _status_error(client, f"updating the referrers fallback index {tag}", response.status_code)


@dataclass
class Discovered:
    """Records found for a pulled manifest, and why others were skipped."""

    records: list[SignatureRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def fetch_signature_records(
    client: RegistryClient, subject: OciDigest, allowed: set[OciDigest] | None, referrers: list[Referrer] | None = None
) -> Discovered:
    """Fetch and parse the signature records of `subject` whose snapshot is in `allowed` (§9.4 merge rules).

    A manifest naming another subject, an oversized or unparsable record, or a record over a snapshot
    outside `allowed` is skipped and said why; nothing is stored here.
    """
    found = Discovered()
    per_snapshot: dict[OciDigest, int] = {}
    for referrer in list_referrers(client, subject) if referrers is None else referrers:
        if len(found.records) >= MAX_RECORDS_PER_CALL:
            found.skipped.append(f"more than {MAX_RECORDS_PER_CALL} signature records: the rest were not read")
            break
        try:
            record = _fetch_record(client, subject, referrer)
        except (BrainError, _Skip) as e:
            found.skipped.append(f"signature manifest {referrer.digest.short}: {getattr(e, 'message', e)}")
            continue
        if allowed is not None and record.snapshot not in allowed:
            found.skipped.append(f"record {record.digest.short} is over {record.snapshot.short}, not this history")
            continue
        count = per_snapshot.get(record.snapshot, 0)
        if count >= MAX_RECORDS_PER_SNAPSHOT:
            if count == MAX_RECORDS_PER_SNAPSHOT:  # said once per snapshot
                found.skipped.append(f"more than {MAX_RECORDS_PER_SNAPSHOT} records over {record.snapshot.short}: the rest are ignored")
            per_snapshot[record.snapshot] = count + 1
            continue
        per_snapshot[record.snapshot] = count + 1
        if all(r.digest != record.digest for r in found.records):
            found.records.append(record)
    return found


class _Skip(Exception):
    """A referrer that is not a usable signature manifest."""


def _fetch_record(client: RegistryClient, subject: OciDigest, referrer: Referrer) -> SignatureRecord:
    if referrer.size > MAX_MANIFEST_BYTES:
        raise _Skip(f"announces {referrer.size} bytes")
    fetched = client.get_manifest(str(referrer.digest))
    try:
        document = parse_strict(fetched.data)
    except CanonicalFormError as e:
        raise _Skip(f"not JSON: {e.message}") from None
    if not isinstance(document, dict) or document.get("artifactType") != mt.SIGNATURE_ARTIFACT:
        raise _Skip("not a signature manifest")
    named = _named_subject(document)
    if named != str(subject):
        raise _Skip(f"its subject is {named}, not the pulled manifest {subject}")
    layers = document.get("layers")
    if not isinstance(layers, list) or len(layers) != 1 or not isinstance(layers[0], dict):
        raise _Skip("a signature manifest has exactly one layer")
    try:
        digest, size = OciDigest.parse(str(layers[0].get("digest"))), int(layers[0].get("size", -1))
    except (BrainError, TypeError, ValueError):
        raise _Skip("its layer descriptor is malformed") from None
    if not 0 < size <= MAX_RECORD_BYTES:
        raise _Skip(f"its record announces {size} bytes (at most {MAX_RECORD_BYTES})")
    data = client.get_blob_bytes(digest, size, max_size=MAX_RECORD_BYTES)
    try:
        return SignatureRecord.decode(data, digest)
    except RecordDecodeError as e:
        raise _Skip(e.message) from None


def push_signatures(client: RegistryClient, brain: Brain, snapshot: OciDigest, subject: OciDigest, subject_size: int) -> int:
    """Upload the travelling records of `snapshot` as referrers of `subject`; returns how many manifests were sent."""
    records = travelling_records(chain_of(brain), snapshot)
    if not records:
        return 0
    client.push_blob(OciDigest.of(EMPTY_CONFIG), len(EMPTY_CONFIG), lambda: io.BytesIO(EMPTY_CONFIG))
    fallback: list[dict[str, object]] = []
    for record in records:
        data = record.to_bytes()
        client.push_blob(record.digest, len(data), lambda d=data: io.BytesIO(d))  # type: ignore[misc]
        manifest = signature_manifest(record, subject, subject_size)
        digest = OciDigest.of(manifest)
        response = client.request("PUT", f"{repository_url(client)}/manifests/{digest}",
                                  headers={"Content-Type": mt.MANIFEST}, data=manifest)
        response.close()
        if response.status_code != 201:
            raise _status_error(client, f"uploading signature manifest {digest.short}", response.status_code)
        if not response.headers.get("OCI-Subject"):
            fallback.append(index_entry(record, manifest))
    if fallback:
        merge_fallback_index(client, subject, fallback)
    return len(records)


def repository_url(client: RegistryClient) -> str:
    """`<base>/v2/<repository>` of the client's reference."""
    return f"{client.reference.base_url}/v2/{client.reference.repository}"


def _status_error(client: RegistryClient, what: str, status: int) -> RemoteError:
    return RemoteError(f"{what} on {client.reference.registry}: unexpected HTTP {status}")


class SignatureSummary(FrozenModel):
    """A signature a remote artifact carries, as `brain inspect` shows it (cryptography checked, trust not judged)."""

    record: OciDigest
    key: str
    snapshot: OciDigest
    claimed_scopes: list[str]
    over_config: bool
    signature_ok: bool | None


def summarize_signatures(client: RegistryClient, subject: OciDigest, config: bytes) -> tuple[list[SignatureSummary], list[str]]:
    """Every record the artifact's referrers carry; the math is checked for those over the config snapshot.

    Whether a key was *allowed* needs the history and the trust root (that is what `pull` and `verify` judge).
    """
    from brain.authn.sshsig import Check, check

    found = fetch_signature_records(client, subject, None)
    config_digest = OciDigest.of(config)
    summaries = [
        SignatureSummary(
            record=r.digest, key=r.key, snapshot=r.snapshot, claimed_scopes=[str(s) for s in r.scopes],
            over_config=r.snapshot == config_digest,
            signature_ok=check(r.signature, config) is Check.GOOD if r.snapshot == config_digest else None,
        )
        for r in found.records
    ]
    return summaries, found.skipped
