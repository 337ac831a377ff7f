"""Signatures as OCI objects (§9.4), without a network: which records travel, the manifests and index entries
that carry them, and the referrers index (a Referrers API listing or the `sha256-<hex>` fallback) as bytes.

A signature manifest wraps one record (its only layer) with the empty config and names the brain manifest
as its `subject`. Locally, `pack` stores them and lists them untagged in `index.json` (`record_signatures`).
The registry side — listing, fetching, pushing — is `oci/referrers.py`, which reads and writes these
objects; everything here is bytes in, bytes (or checked values) out.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, ValidationError

from brain.authenticity import chain_of
from brain.authn.chain import ChainStore
from brain.authn.records import MAX_RECORD_BYTES, SignatureRecord
from brain.authn.trust import digest_of
from brain.brain import Brain
from brain.errors import BrainError, CanonicalFormError, UntrustedArtifactError
from brain.identity import OciDigest, canonicalize, parse_strict
from brain.store.layout import Descriptor as IndexEntry
from oci import media_types as mt

EMPTY_CONFIG = b"{}"
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
SIGNATURE_KEY = "ai.gaussia.boltzmann.signature-key"
SIGNATURE_SNAPSHOT = "ai.gaussia.boltzmann.signature-snapshot"
# Referrer manifests `copy` brings along per artifact, and entries a fallback index may list for it.
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


# --- the referrers index ---------------------------------------------------------------------------------


class Referrer(BaseModel):
    """One entry of a referrers listing."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

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
        raise UntrustedArtifactError(
            f"{where} is not a JSON image index: {e.message}",
            hint="the registry holds a broken referrers index; nothing was installed",
        ) from None
    manifests = document.get("manifests") if isinstance(document, dict) else None
    if not isinstance(manifests, list):
        raise UntrustedArtifactError(f"{where} is not an image index (no manifests list)")
    return manifests


def readable_referrers(entries: Iterable[object], artifact_type: str | None) -> list[Referrer]:
    """The entries that are descriptors (of `artifact_type`, if given); unreadable ones are skipped (§9.4)."""
    found = []
    for entry in entries:
        try:
            referrer = Referrer.model_validate(entry)
        except ValidationError:
            continue
        if artifact_type is None or referrer.artifactType == artifact_type:
            found.append(referrer)
    return found


def strict_descriptors(entries: list[object], where: str) -> list[dict[str, object]]:
    """`entries` when every one is a descriptor with a digest and there are at most `MAX_REFERRERS`."""
    if len(entries) > MAX_REFERRERS:
        raise UntrustedArtifactError(f"{where} lists more than {MAX_REFERRERS} referrers")
    descriptors = [entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("digest"), str)]
    if len(descriptors) != len(entries):
        raise UntrustedArtifactError(f"{where} lists malformed descriptors")
    return descriptors


def merged_fallback_index(current: list[object] | None, entries: Iterable[dict[str, object]]) -> bytes | None:
    """The JCS bytes of the fallback index `current` (None: there is none) with `entries` added (§9.4):
    existing entries kept verbatim, digests not yet listed appended in order; None when nothing changes."""
    kept = [entry for entry in current or [] if isinstance(entry, dict)]
    listed = {entry.get("digest") for entry in kept}
    added = []
    for entry in entries:
        if entry["digest"] not in listed:
            listed.add(entry["digest"])
            added.append(entry)
    if not added and current is not None:
        return None
    return canonicalize({"manifests": [*kept, *added], "mediaType": mt.INDEX, "schemaVersion": 2})


# --- reading a signature manifest ------------------------------------------------------------------------


class NotASignature(Exception):
    """A referrer that is not a usable signature manifest (discovery skips it and says why)."""


def named_subject(document: object) -> object:
    """The `subject.digest` a manifest document names, or None."""
    subject = document.get("subject") if isinstance(document, dict) else None
    return subject.get("digest") if isinstance(subject, dict) else None


def signature_layer(data: bytes, subject: OciDigest) -> tuple[OciDigest, int]:
    """The (digest, size) of the record a signature manifest over `subject` carries; `NotASignature` otherwise."""
    try:
        document = parse_strict(data)
    except CanonicalFormError as e:
        raise NotASignature(f"not JSON: {e.message}") from None
    if not isinstance(document, dict) or document.get("artifactType") != mt.SIGNATURE_ARTIFACT:
        raise NotASignature("not a signature manifest")
    named = named_subject(document)
    if named != str(subject):
        raise NotASignature(f"its subject is {named}, not the pulled manifest {subject}")
    layers = document.get("layers")
    if not isinstance(layers, list) or len(layers) != 1 or not isinstance(layers[0], dict):
        raise NotASignature("a signature manifest has exactly one layer")
    try:
        digest, size = OciDigest.parse(str(layers[0].get("digest"))), int(layers[0].get("size", -1))
    except (BrainError, TypeError, ValueError):
        raise NotASignature("its layer descriptor is malformed") from None
    if not 0 < size <= MAX_RECORD_BYTES:
        raise NotASignature(f"its record announces {size} bytes (at most {MAX_RECORD_BYTES})")
    return digest, size
