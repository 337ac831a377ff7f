"""Signatures on a registry (§9.4): listing referrers, reading their records, pushing them.

`push` PUTs signature manifests by digest and, when the registry does not answer with `OCI-Subject` (no
Referrers API), keeps the `sha256-<hex>` fallback index up to date (`merge_fallback_index`); `pull`/`fetch`
discover them with `list_referrers` and read them with `fetch_signature_records`. The referrers query
escapes its `+` (§9.10 item 3) and results are filtered client-side anyway.

This module is the one owner of the registry's referrers: listing them (Referrers API, else the fallback
tag), reading an index's entries, and writing/merging the fallback index. `brain copy` uses the same code
(`collect_referrers`, `merge_fallback_index`), only stricter: discovery skips what it cannot read, a copy
refuses it. The objects themselves (manifests, index entries, the fallback tag and index) are built and
read, without a network, in `oci/signature_manifests.py`.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote

from brain.authenticity import chain_of
from brain.authn.records import MAX_RECORD_BYTES, MAX_RECORDS_PER_SNAPSHOT, RecordDecodeError, SignatureRecord
from brain.brain import Brain
from brain.errors import BrainError, CanonicalFormError, NotFoundError, RemoteError, UntrustedArtifactError
from brain.frozen import FrozenModel
from brain.identity import OciDigest, parse_strict
from oci import media_types as mt
from oci.signature_manifests import (
    EMPTY_CONFIG,
    MAX_REFERRERS,
    NotASignature,
    Referrer,
    fallback_tag,
    index_entries,
    index_entry,
    merged_fallback_index,
    named_subject,
    readable_referrers,
    signature_layer,
    signature_manifest,
    strict_descriptors,
    travelling_records,
)
from oci.transport import MAX_MANIFEST_BYTES, FetchedManifest, RegistryClient

# Per discovery call (code-only in the reference).
MAX_RECORDS_PER_CALL = 4096
MAX_INDEX_BYTES = 4 << 20


def _api_listing(client: RegistryClient, subject: OciDigest, artifact_type: str | None) -> list[object] | None:
    """The entries the Referrers API lists for `subject`, or None when the registry has no such API."""
    url = f"{client.repository_url}/referrers/{subject}"
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


def list_referrers(
    client: RegistryClient, subject: OciDigest, artifact_type: str | None = mt.SIGNATURE_ARTIFACT
) -> list[Referrer]:
    """The manifests that name `subject`: the Referrers API when the registry has it, else the fallback tag."""
    listed = _api_listing(client, subject, artifact_type)
    if listed is None:
        listed = read_fallback_index(client, subject) or []
    return readable_referrers(listed, artifact_type)


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
    referrers = readable_referrers(listed if listed is not None else fallback or [], None)
    if len(referrers) > MAX_REFERRERS:
        raise UntrustedArtifactError(
            f"the referrers of {subject.short} on {client.reference.registry}: more than {MAX_REFERRERS} are listed"
        )
    descriptors = (
        None
        if fallback is None
        else strict_descriptors(fallback, f"the fallback referrers index {fallback_tag(subject)}")
    )
    manifests = []
    for referrer in referrers:
        fetched = client.get_manifest(str(referrer.digest))
        try:
            named = named_subject(parse_strict(fetched.data))
        except CanonicalFormError:
            named = None
        if named != str(subject):
            raise UntrustedArtifactError(
                f"referrer {fetched.digest.short} is listed for {subject.short} but names subject {named}"
            )
        manifests.append(fetched)
    return Referrers(manifests, descriptors)


def merge_fallback_index(client: RegistryClient, subject: OciDigest, entries: Iterable[dict[str, object]]) -> None:
    """Add `entries` to the fallback index of `subject` (§9.4): existing entries kept verbatim, digests not yet
    listed appended in order, the index PUT as JCS. Nothing is written when the index lists them all already."""
    tag = fallback_tag(subject)
    body = merged_fallback_index(read_fallback_index(client, subject), entries)
    if body is None:
        return
    # Read-modify-write: not atomic (a concurrent push of other signatures may be lost; the next push re-adds it).
    response = client.request(
        "PUT", f"{client.repository_url}/manifests/{tag}", headers={"Content-Type": mt.INDEX}, data=body
    )
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
        except (BrainError, NotASignature) as e:
            found.skipped.append(f"signature manifest {referrer.digest.short}: {getattr(e, 'message', e)}")
            continue
        if allowed is not None and record.snapshot not in allowed:
            found.skipped.append(f"record {record.digest.short} is over {record.snapshot.short}, not this history")
            continue
        count = per_snapshot.get(record.snapshot, 0)
        if count >= MAX_RECORDS_PER_SNAPSHOT:
            if count == MAX_RECORDS_PER_SNAPSHOT:  # said once per snapshot
                found.skipped.append(
                    f"more than {MAX_RECORDS_PER_SNAPSHOT} records over {record.snapshot.short}: the rest are ignored"
                )
            per_snapshot[record.snapshot] = count + 1
            continue
        per_snapshot[record.snapshot] = count + 1
        if all(r.digest != record.digest for r in found.records):
            found.records.append(record)
    return found


def _fetch_record(client: RegistryClient, subject: OciDigest, referrer: Referrer) -> SignatureRecord:
    if referrer.size > MAX_MANIFEST_BYTES:
        raise NotASignature(f"announces {referrer.size} bytes")
    digest, size = signature_layer(client.get_manifest(str(referrer.digest)).data, subject)
    data = client.get_blob_bytes(digest, size, max_size=MAX_RECORD_BYTES)
    try:
        return SignatureRecord.decode(data, digest)
    except RecordDecodeError as e:
        raise NotASignature(e.message) from None


def push_signatures(
    client: RegistryClient, brain: Brain, snapshot: OciDigest, subject: OciDigest, subject_size: int
) -> int:
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
        response = client.request("PUT", f"{client.repository_url}/manifests/{digest}",
                                  headers={"Content-Type": mt.MANIFEST}, data=manifest)
        response.close()
        if response.status_code != 201:
            raise _status_error(client, f"uploading signature manifest {digest.short}", response.status_code)
        if not response.headers.get("OCI-Subject"):
            fallback.append(index_entry(record, manifest))
    if fallback:
        merge_fallback_index(client, subject, fallback)
    return len(records)


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


def summarize_signatures(
    client: RegistryClient, subject: OciDigest, config: bytes
) -> tuple[list[SignatureSummary], list[str]]:
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
