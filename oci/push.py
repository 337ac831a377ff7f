"""`brain push`: publish the packed artifact of a tag to a registry, sending only what it lacks.

Order: check the remote tag (a clean 404 is the only "nothing there"; any other failure refuses), upload
every blob the registry does not already hold (HEAD first, so an interrupted push resumes for free), and
put the manifest last so the tag never names an incomplete artifact. A remote tag whose snapshot is not
in the local history has diverged and is only overwritten with `force`. A push without a tag publishes the
current branch to its tag (§10.1: main to main's tag, another branch to `br.<name>`), and a push that would
narrow a published tag (send fewer modules than the artifact the tag holds) is refused unless
`allow_narrowing`, as the reference does (§10.8).

A push publishes the current head: a local tag packed from an older snapshot (an earlier `brain pack`, or a
`brain pull` that recorded the remote's tag) is re-packed first, with the same module set. Packing is
deterministic and reuses unchanged layers, so this is cheap; `as_packed` publishes the old packing as is.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from functools import partial

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.errors import (
    ConflictError,
    LockTimeoutError,
    NotFoundError,
    UntrustedArtifactError,
    UsageError,
)
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.queries import local_history
from brain.store.redaction import refuse_if_unfinished
from brain.store.lock import WriterLock
from oci import media_types as mt
from oci.auth import resolve_credentials
from oci.manifest import Descriptor, Manifest
from oci.push_log import record_push
from oci.reference import Reference
from oci.referrers import push_signatures
from oci.transport import Progress, RegistryClient


class PushResult(FrozenModel):
    """What `push` did: the manifest digest now tagged remotely and how many blobs it had to send."""

    reference: str
    digest: OciDigest
    size: int
    tag: str
    snapshot: OciDigest
    packed: bool
    blobs_uploaded: int
    blobs_present: int
    bytes_uploaded: int
    replaced: OciDigest | None = None
    forced: bool = False
    head: OciDigest | None = None
    repacked_from: OciDigest | None = None
    # Signature manifests uploaded as referrers of the brain manifest (§9.4).
    signatures: int = 0

    @property
    def stale(self) -> bool:
        """True when the pushed artifact was packed from an older snapshot than the current head."""
        return self.head is not None and self.head != self.snapshot


class LocalArtifact(FrozenModel):
    """The artifact a push sends: its manifest, and whether it was packed (or re-packed) for this push."""

    data: bytes
    manifest: Manifest
    created_tag: bool = False
    repacked_from: OciDigest | None = None


def _packed_modules(manifest: Manifest) -> set[MemoryType] | None:
    """The module subset a projection artifact carries; None for a full snapshot artifact."""
    if manifest.config.mediaType != mt.PROJECTION_CONFIG:
        return None
    return {m for m in (mt.module_of_layer(layer.mediaType) for layer in manifest.layers) if m is not None}


def local_artifact(
    brain: Brain,
    tag: str,
    *,
    as_packed: bool = False,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> LocalArtifact:
    """The artifact to publish under `tag`: packed now if absent, re-packed if it lags the head (unless `as_packed`)."""
    from oci.pack import pack

    try:
        entry = brain.layout.resolve_tag(tag)
    except NotFoundError:
        result = pack(brain, tag, lock_timeout=lock_timeout, on_wait=on_wait)
        data = brain.blobs.get(brain.layout.resolve_tag(result.tag or tag).digest)
        return LocalArtifact(
            data=data, manifest=Manifest.decode(data, what=f"local manifest (tag {tag})"), created_tag=True
        )
    data = brain.blobs.get(entry.digest)
    manifest = Manifest.decode(data, what=f"local manifest {entry.digest} (tag {tag})")
    old_snapshot, head = artifact_snapshot(manifest), brain.snapshot_digest()
    if as_packed or head is None or old_snapshot == head:
        return LocalArtifact(data=data, manifest=manifest)
    result = pack(brain, tag, _packed_modules(manifest), lock_timeout=lock_timeout,
                  on_wait=on_wait)
    data = brain.blobs.get(result.digest)
    manifest = Manifest.decode(data, what=f"local manifest {result.digest} (tag {tag})")
    return LocalArtifact(data=data, manifest=manifest, repacked_from=old_snapshot)


def artifact_snapshot(manifest: Manifest) -> OciDigest:
    """The full snapshot an artifact was packed from: the source-snapshot annotation, else the config."""
    return manifest.source_snapshot or manifest.config.digest


def check_remote_tag(
    client: RegistryClient,
    tag: str,
    local_digest: OciDigest,
    history: set[OciDigest],
    force: bool,
    local: Manifest | None = None,
    allow_narrowing: bool = True,
) -> OciDigest | None:
    """The digest the remote tag names now (None if absent); raises `ConflictError` if it diverged, or if
    `local` carries fewer modules than the remote artifact and not `allow_narrowing` (even with `force`)."""
    try:
        remote = client.get_manifest(tag)
    except NotFoundError:
        return None
    where = f"{client.reference.registry}/{client.reference.repository}:{tag}"
    if remote.digest != local_digest and local is not None and not allow_narrowing:
        _refuse_narrowing(where, remote.data, local)
    if remote.digest == local_digest or force:
        return remote.digest
    try:
        snapshot = artifact_snapshot(Manifest.decode(remote.data, what=f"remote manifest {where}"))
    except (UntrustedArtifactError, UsageError) as e:
        raise ConflictError(
            f"{where} holds something that is not a Boltzmann brain ({e.message})", hint="use another tag, or --force"
        ) from None
    if snapshot not in history:
        raise ConflictError(
            f"{where} holds snapshot {snapshot.short}, which is not in the local history: the tag has diverged",
            hint="pull it first (`brain pull REF`: your head must descend from it), or overwrite the tag with --force",
        )
    return remote.digest


def _modules_of(manifest: Manifest) -> set[MemoryType]:
    return {m for m in (mt.module_of_layer(layer.mediaType) for layer in manifest.layers) if m is not None}


def _refuse_narrowing(where: str, remote_data: bytes, local: Manifest) -> None:
    try:
        remote = Manifest.decode(remote_data, what=f"remote manifest {where}")
    except (UntrustedArtifactError, UsageError):
        return  # not a brain: the divergence check says so
    lost = _modules_of(remote) - _modules_of(local)
    if lost:
        names = ", ".join(sorted(str(m) for m in lost))
        raise ConflictError(
            f"{where} publishes module(s) {names}, which this push does not carry: it would narrow the tag",
            hint="push to another tag, or pass --allow-narrowing to publish fewer modules under it",
        )


def push(
    brain: Brain,
    ref: Reference,
    *,
    force: bool = False,
    progress: Progress | None = None,
    client: RegistryClient | None = None,
    lock_timeout: float | None = None,
    as_packed: bool = False,
    on_wait: Callable[[str], None] | None = None,
    immutable: bool = False,
    allow_narrowing: bool = False,
) -> PushResult:
    """Publish the current head under `ref.tag` (packing or re-packing it as needed; `as_packed`: the tag as is).

    Without a tag, the current branch's tag (§10.1). `on_wait` is told who holds the writer lock whenever a
    (re-)pack or clean-up waits for it. With `immutable`, a remote tag that already names another manifest is
    refused (`ConflictError`), even with `force`; so is narrowing a published tag unless `allow_narrowing`.
    """
    from brain.branches.operations import current_tag

    if ref.digest is not None:
        raise UsageError(f"cannot push to {ref}: a push names a tag, not a digest", hint="drop the @sha256:... part")
    refuse_if_unfinished(brain.path, "push")  # an interrupted redaction's bytes are never published
    if ref.tag is None:
        ref = dataclasses.replace(ref, tag=current_tag(brain))
    tag = ref.tag_or_default
    local = local_artifact(brain, tag, as_packed=as_packed, lock_timeout=lock_timeout, on_wait=on_wait)
    data, manifest, packed = local.data, local.manifest, local.created_tag or local.repacked_from is not None
    digest = OciDigest.of(data)
    snapshot = artifact_snapshot(manifest)
    try:
        client = client or RegistryClient(ref, resolve_credentials(ref.registry))
        if immutable:  # a release tag stays put: refuse before any blob is sent
            from oci.remote_tags import refuse_moving

            refuse_moving(client, tag, digest, force=False)
        replaced = check_remote_tag(
            client, tag, digest, local_history(brain, snapshot), force, manifest, allow_narrowing
        )
        uploaded = present = sent = 0
        blobs: dict[OciDigest, Descriptor] = {d.digest: d for d in (*manifest.layers, manifest.config)}
        for descriptor in blobs.values():
            opener: Callable = partial(brain.blobs.open, descriptor.digest)
            if client.push_blob(descriptor.digest, descriptor.size, opener, progress):
                uploaded, sent = uploaded + 1, sent + descriptor.size
            else:
                present += 1
        client.put_manifest(tag, data)
        signatures = push_signatures(client, brain, snapshot, digest, len(data))
    except BaseException:
        if local.created_tag:  # a refused or failed push leaves no new local tag behind (layers stay as cache)
            with contextlib.suppress(LockTimeoutError), WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
                brain.layout.remove_tag(tag)
        raise
    with contextlib.suppress(LockTimeoutError):  # the push is done; only the local record of it would be missing
        record_push(brain, ref, tag, digest, snapshot, lock_timeout=lock_timeout, on_wait=on_wait)
    return PushResult(
        reference=str(ref),
        digest=digest,
        size=len(data),
        tag=tag,
        snapshot=snapshot,
        packed=packed,
        blobs_uploaded=uploaded,
        blobs_present=present,
        bytes_uploaded=sent,
        replaced=None if replaced == digest else replaced,
        forced=force and replaced is not None and replaced != digest,
        head=brain.snapshot_digest(),
        repacked_from=local.repacked_from,
        signatures=signatures,
    )
