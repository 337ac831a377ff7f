"""`brain pull` / `brain fetch`: bring a remote artifact into a brain, downloading only what is missing.

One manifest request makes the plan (which blobs are new, which are already stored intact); missing
blobs are streamed into the blob store with size and digest checked; then `oci.install` verifies every
layer, block and annotation and moves the head last (or not at all for `fetch`). Blobs fetched for an
artifact that install refuses are removed again; an interrupted pull keeps what it verified, so the next
one resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.branches.names import DEFAULT_MAIN_TAG, MAIN, decode_tag
from brain.branches.pointers import BranchPull
from brain.brain import Brain
from brain.errors import (
    ConflictError,
    NotABrainError,
    RedactedBytesRefusedError,
    UntrustedArtifactError,
    UsageError,
)
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.store import Head
from brain.store.redaction import refuse_if_unfinished
from oci import media_types as mt
from oci.auth import resolve_credentials
from oci.authenticate import PullAuthentication, PullPolicy, authenticate_pull, both
from oci.install import install_artifact, installed_from, verify_published
from oci.manifest import Descriptor, Manifest
from brain.queries import local_history
from oci.reference import Reference
from oci.selection import select_modules
from oci.transport import Progress, RegistryClient


class PlannedBlob(FrozenModel):
    """One blob of the artifact and whether the local store already holds it intact."""

    digest: OciDigest
    size: int
    media_type: str
    memory_type: MemoryType | None = None
    stored: bool


class _Pulled(FrozenModel):
    """The artifact a pull is about and which of its modules it installs."""

    reference: str
    digest: OciDigest
    snapshot: OciDigest
    modules: list[MemoryType]
    left_out: list[MemoryType]


class PullPlan(_Pulled):
    """What a pull will download and install, decided from the manifest alone."""

    blobs: list[PlannedBlob]

    @property
    def missing(self) -> list[PlannedBlob]:
        """The blobs to download."""
        return [b for b in self.blobs if not b.stored]


class PullResult(_Pulled):
    """What `pull` or `fetch` did; `snapshot` is the published snapshot, `head` what the head names now.

    They differ after a partial install, whose head is a new local snapshot of the installed modules.
    """

    head: OciDigest
    blobs_fetched: int
    blobs_reused: int
    bytes_fetched: int
    head_moved: bool
    # The pulled snapshot already was the head: nothing moved (see `oci.install.next_head`).
    already_head: bool = False
    # The local index.json name of the pulled manifest (None when untagged or not recorded).
    tag: str | None = None
    recorded: bool = False
    initialized: bool = False
    authenticity: PullAuthentication | None = None
    # The branch pulled into, when it was not the current one: the pull switched to it (§10.2).
    switched_to: str | None = None


def open_or_init(path: Path) -> tuple[Brain, bool]:
    """The brain at `path`, created first when `path` is missing or an empty directory."""
    path = Path(path)
    if not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return Brain.init(path), True
    if not path.is_dir():
        raise NotABrainError(f"{path} is a file, not a brain directory", hint="pull into a new or empty directory")
    try:
        return Brain.open(path), False
    except NotABrainError as e:
        raise NotABrainError(e.message, hint="pull into a new or empty directory, or into an existing brain") from e


@contextlib.contextmanager
def brain_to_pull_into(path: Path) -> Iterator[tuple[Brain, bool]]:
    """`open_or_init(path)`; a brain created here is removed again if the pull fails before storing a blob.

    So a mistyped tag or an unreachable registry leaves no empty brain behind, while an interrupted
    download keeps what it verified for the next try.
    """
    path = Path(path)
    existed = path.exists()
    brain, created = open_or_init(path)
    try:
        yield brain, created
    except BaseException:
        if created and not _holds_blobs(brain):
            if existed:
                for child in path.iterdir():
                    shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
            else:
                shutil.rmtree(path, ignore_errors=True)
        raise


def _holds_blobs(brain: Brain) -> bool:
    # Temporary files count too: a concurrent pull into the same new directory may be downloading.
    try:
        with os.scandir(brain.blobs.directory) as entries:
            return next(entries, None) is not None
    except FileNotFoundError:
        return False


def artifact_modules(manifest: Manifest) -> list[MemoryType]:
    """The modules an artifact carries a layer for, in module order."""
    return [t for t in MODULE_ORDER if any(mt.module_of_layer(layer.mediaType) is t for layer in manifest.layers)]


def _descriptors(manifest: Manifest, modules: list[MemoryType]) -> list[tuple[Descriptor, MemoryType | None]]:
    chosen: list[tuple[Descriptor, MemoryType | None]] = [(manifest.config, None)]
    for layer in manifest.layers:
        memory_type = mt.module_of_layer(layer.mediaType)
        if layer.mediaType == mt.VECTOR_INDEX_LAYER:
            name = layer.annotation(mt.MEMORY_TYPE)
            memory_type = MemoryType(name) if name in {str(t) for t in modules} else None
            if memory_type is None:
                continue
        elif memory_type is not None and memory_type not in modules:
            continue
        chosen.append((layer, memory_type))
    return chosen


def plan_pull(
    brain: Brain, reference: Reference, digest: OciDigest, manifest: Manifest, wanted: set[MemoryType] | None
) -> PullPlan:
    """Decide which blobs to download (a stored blob counts only if it re-hashes to its name)."""
    selection = select_modules(artifact_modules(manifest), wanted, publishing=False, holder="the artifact")
    modules, left_out = list(selection.chosen), list(selection.left_out)
    blobs = [
        PlannedBlob(
            digest=d.digest, size=d.size, media_type=d.mediaType, memory_type=t,
            stored=brain.blobs.has(d.digest)
            and brain.blobs.size(d.digest) == d.size
            and brain.blobs.verify_file(d.digest),
        )
        for d, t in _descriptors(manifest, modules)
    ]
    return PullPlan(
        reference=str(reference), digest=digest, snapshot=manifest.config.digest,
        modules=modules, left_out=left_out, blobs=blobs,
    )


def _refuse_divergence(brain: Brain) -> Callable[[Head | None, OciDigest], None]:
    """A head guard: the pulled snapshot must descend from the current head (else local work is dropped).

    An untouched partial install stands for the snapshot it was installed from, so pulling that snapshot
    whole, or a later one, moves on from it.
    """

    def guard(current: Head | None, incoming: OciDigest) -> None:
        if current is None:
            return
        position = installed_from(brain, current) or current.snapshot
        if position in local_history(brain, incoming):
            return
        if incoming in local_history(brain, position):
            raise ConflictError(
                f"the pulled snapshot {incoming.short} is an ancestor of the local head {current.snapshot.short}: "
                "the brain already holds it and pulling would move the head back",
                hint="nothing to do; pull with --force to roll the head back to it",
            )
        raise ConflictError(
            f"the local head {current.snapshot.short} is not in the history of the pulled snapshot {incoming.short}",
            hint="pull with --force to move the head anyway (the old head stays retained and `brain log` lists it), "
            "or pull into another directory to compare",
        )

    return guard


def pull_target(brain: Brain, reference: Reference, branch: str | None) -> BranchPull | None:
    """The branch a pull installs into when it is not the current one (None: the current branch)."""
    from brain.branches.names import validate_branch_name
    from brain.branches.operations import branches

    refs = branches(brain)
    if branch is not None:
        target: str | None = validate_branch_name(branch)
    else:
        main_tag = DEFAULT_MAIN_TAG if refs is None else refs.main_tag
        target = None if reference.tag is None else decode_tag(reference.tag, main_tag)
    current = MAIN if refs is None else refs.current
    if target is None or target == current:
        return None
    return BranchPull(target, reference.tag, str(reference))


def pull(
    brain: Brain,
    reference: Reference,
    modules: set[MemoryType] | None = None,
    *,
    fetch_only: bool = False,
    force: bool = False,
    progress: Progress | None = None,
    client: RegistryClient | None = None,
    lock_timeout: float | None = None,
    max_inflate: int | None = None,
    on_wait: Callable[[str], None] | None = None,
    authn: PullPolicy | None = None,
    on_warning: Callable[[str], None] | None = None,
    branch: str | None = None,
) -> PullResult:
    """Download what `reference`'s artifact adds and install it (moving the head unless `fetch_only`).

    `on_wait` is told who holds the writer lock while the install waits for it. The pull goes into `branch`,
    else the branch the tag names (§10.1), else the current branch; into another branch than the current
    one it switches to that branch (§10.2), creating it if needed.
    """
    if fetch_only and modules is not None:
        raise UsageError("fetch brings the whole artifact's history and blocks; --module applies to pull only")
    refuse_if_unfinished(brain.path, "pull" if not fetch_only else "fetch")  # an interrupted redaction comes first
    into = None if fetch_only else pull_target(brain, reference, branch)  # a bad --branch before any request
    client = client or RegistryClient(reference, resolve_credentials(reference.registry))
    fetched = client.get_manifest(reference.manifest_reference)
    manifest = Manifest.decode(fetched.data, what=f"manifest of {reference}")
    plan = plan_pull(brain, reference, fetched.digest, manifest, modules)
    # §9.8: config, history and signatures are judged before any module layer is downloaded.
    gate = authenticate_pull(
        brain, client, fetched.digest, manifest, authn, on_warning=on_warning, fetch_only=fetch_only
    )
    # Pulled by tag: the local index.json names it the same; pinned to a digest alone: an untagged entry.
    local_tag = reference.tag if reference.digest is not None else reference.tag_or_default
    added: list[OciDigest] = list(gate.prefetched)  # removed again if the artifact is refused
    def stored(descriptor: Descriptor) -> Path:  # every blob is downloaded before it is read
        return brain.blobs.path(descriptor.digest)


    def download(blobs: list[PlannedBlob]) -> None:
        for blob in blobs:
            if blob.digest in gate.prefetched:
                continue
            client.fetch_blob(blob.digest, blob.size, brain.blobs, progress)
            added.append(blob.digest)

    try:
        # 1. The config and the history layer: what is published, checked against every annotation.
        download([b for b in plan.missing if b.memory_type is None and b.media_type != mt.VECTOR_INDEX_LAYER])
        published = verify_published(fetched.data, stored, max_inflate=max_inflate)
        # -- Config and history are verified (and authenticated, above); no module layer is downloaded yet.
        # 2. The module layers (and vector indexes) of the modules to install.
        download([b for b in plan.missing if b.memory_type is not None or b.media_type == mt.VECTOR_INDEX_LAYER])
        brain.blobs.sync()
        outcome = install_artifact(
            brain,
            fetched.data,
            stored,
            None if modules is None else set(plan.modules),
            reference=reference.canonical,
            tag=reference.tag,
            fetch_only=fetch_only,
            lock_timeout=lock_timeout,
            on_wait=on_wait,
            guard=both(None if force else _refuse_divergence(brain), gate.guard),
            max_inflate=max_inflate,
            record=True,
            record_tag=local_tag,
            branch=into,
        )
        # -- The new head is verified and written (or, for fetch, the artifact is stored verified).
    except (UntrustedArtifactError, RedactedBytesRefusedError):
        # Nothing a refused artifact brought stays (an interrupted pull, by contrast, keeps its verified blobs).
        for digest in added:
            with contextlib.suppress(FileNotFoundError):
                brain.blobs.path(digest).unlink()
        raise
    authenticity = gate.commit(brain, lock_timeout, on_wait, head_moved=not fetch_only)
    if outcome.head_moved:
        from oci.redaction import honour_tombstones

        honour_tombstones(brain)  # only now: the new head is verified, authenticated and current
    return PullResult(
        reference=str(reference),
        digest=fetched.digest,
        snapshot=published.source,
        head=outcome.head,
        modules=plan.modules,
        left_out=plan.left_out,
        blobs_fetched=len(added),
        blobs_reused=len(plan.blobs) - len(added),
        bytes_fetched=sum(b.size for b in plan.missing),
        head_moved=outcome.head_moved,
        already_head=outcome.already_head,
        tag=local_tag if outcome.recorded else None,
        recorded=outcome.recorded,
        authenticity=authenticity,
        switched_to=None if into is None else into.target,
    )
