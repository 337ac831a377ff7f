"""Pull authorization (§9.8, and what §9.10 says the reference gets wrong): decide before the head moves.

`authenticate_pull` runs after the manifest is read and before any module layer is downloaded: it reads
the config and the history layer, discovers the signature records (`oci.referrers`), and refuses what
can already be refused — a pin that does not match, a rejected revision, a head that does not descend
from the snapshot this brain last pulled signed from the same repository, an unsigned head where a
signed one is expected. Its `guard` runs once every layer is verified, just before the head moves,
with the full §9.7 decision: any state but `authorized` is refused (exit 6, nothing installed) unless
`allow_unauthorized`, which says so. `commit` then stores the records and remembers an authorized pull
in `boltzmann/remotes.json`.

Which remote a pull comes from never decides trust: a brain bound to an authority (`oci.binding`: pinned,
governed, or once pulled signed) judges every served head against that authority, whatever the spelling
of the reference and with `--force`; only `--re-root` leaves it, and says so in the trust log.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import Field

from brain.authn.chain import ChainStore, descends_from, first_parent_walk
from brain.authn.decision import Authentication, authenticate
from brain.authn.outcomes import FindingCode, Outcome, State
from brain.authn.records import SignatureRecord
from brain.brain import Brain
from brain.errors import BrainError, UntrustedArtifactError
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.snapshot import Projection, Snapshot, TrustRoot
from brain.store import Head
from brain.store.authn_files import (
    read_signature_index,
    store_records,
    write_remotes,
)
from brain.store.chain import StoreChain
from brain.store.lock import WriterLock
from brain.authn.trust import RemoteMemory, TrustPin
from oci import media_types as mt
from oci.binding import (
    RE_ROOT_HINT, Binding, binding_of, carries, effective_pin, markers_for, record_re_root, remembered_signed,
)
from oci.manifest import Manifest
from oci.referrers import fetch_signature_records
from oci.transport import RegistryClient
from oci.unpack import Staging, unpack_history

# Refused before any module layer: what the config, the history and the records already decide (§9.8 step 1).
EARLY_REFUSALS = frozenset({
    FindingCode.PIN_BRAIN_MISMATCH, FindingCode.TRUST_ROOT_MISMATCH, FindingCode.QUORUM_FAILURE,
    FindingCode.REVISION_CHANGED_CONTENT, FindingCode.REVISION_REGRESSED, FindingCode.SINCE_REFUTED,
    FindingCode.CHAIN_TRUNCATED,
})
# Outcomes that the provenance still to be downloaded may settle either way.
_MAY_BECOME_VALID = frozenset({Outcome.VALID, Outcome.VALID_AS_PROPOSAL, Outcome.INSUFFICIENT_EVIDENCE})
_ESCAPE = "--allow-unauthorized installs it anyway (and says so)"


class PullPolicy(FrozenModel):
    """What a pull accepts besides an `authorized` head."""

    require_signed: bool = False
    allow_unauthorized: bool = False
    # Judge the served chain on its own trust root and adopt it (logged): leaves this brain's binding.
    re_root: bool = False


class PullAuthentication(FrozenModel):
    """What the pull decided about authenticity (reported with the pull result)."""

    snapshot: OciDigest
    state: State
    records: int
    stored: int = 0
    remembered: bool = False
    re_rooted: bool = False
    warnings: list[str] = Field(default_factory=list)


class _PulledChain:
    """The local store plus records that arrived with the pull (not stored yet)."""

    def __init__(self, local: StoreChain, pulled: Sequence[SignatureRecord]) -> None:
        self.local = local
        self.pulled = pulled
        self.snapshot = local.snapshot
        self.member_ids = local.member_ids
        self.ledger_facts = local.ledger_facts

    def records(self, snapshot: OciDigest) -> list[SignatureRecord]:
        held = {r.digest: r for r in self.local.records(snapshot)}
        for record in self.pulled:
            if record.snapshot == snapshot:
                held.setdefault(record.digest, record)
        return list(held.values())


def repository_key(client: RegistryClient) -> str:
    """How `remotes.json` names a remote: registry and repository, normalized (`Reference.repository_key`)."""
    return client.reference.repository_key


@dataclass
class PullGate:
    """The decision of one pull, before and after its module layers arrive."""

    brain: Brain
    repository: str
    source: OciDigest
    records: list[SignatureRecord]
    policy: PullPolicy
    newest: TrustRoot | None
    warnings: list[str] = field(default_factory=list)
    state: State = State.UNSIGNED
    # Blobs `authenticate_pull` downloaded (config, history): the pull does not fetch them again.
    prefetched: set[OciDigest] = field(default_factory=set)
    on_warning: Callable[[str], None] | None = None
    # What ties this brain to an authority (None: trust on first use; ignored with --re-root), and the pin
    # the decision runs with (None with --re-root: the served chain is judged on its own root).
    binding: Binding | None = None
    pin: TrustPin | None = None

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        if self.on_warning is not None:
            self.on_warning(text)

    def _refuse(self, text: str) -> None:
        if self.policy.allow_unauthorized:
            self._warn(f"--allow-unauthorized: installing although {text}")
            return
        raise UntrustedArtifactError(f"refused {self.source.short}: {text}", hint=_ESCAPE)

    def chain(self) -> _PulledChain:
        return _PulledChain(StoreChain(self.brain.blobs, read_signature_index(self.brain.path).entries), self.records)

    def decide(self) -> Authentication:
        return authenticate(self.chain(), self.source, pin=self.pin, newest=self.newest)

    def guard(self, current: Head | None, incoming: OciDigest) -> None:
        """The full §9.7 decision with every layer stored, under the writer lock, before the head moves."""
        if incoming != self.source:
            return
        auth = self.decide()
        self.state = auth.state
        if auth.state is State.UNSIGNED:
            return  # decided before the download (`authenticate_pull`)
        if auth.state is not State.AUTHORIZED:
            self._refuse(_describe(auth))

    def commit(self, brain: Brain, lock_timeout: float | None = None, on_wait: Callable[[str], None] | None = None,
               head_moved: bool = True) -> PullAuthentication:
        """Store the pulled records; remember an authorized pull. Call after a successful install."""
        stored = 0
        remembered = re_rooted = False
        with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
            stored = store_records(brain.path, brain.blobs, [r for r in self.records if brain.blobs.has(r.snapshot)])
            authorized = self.state is State.AUTHORIZED
            if head_moved and self.policy.re_root:
                record_re_root(brain, self.repository, self.source, authorized=authorized, previous=self.binding)
                remembered, re_rooted = authorized, True
            elif head_moved and authorized:
                write_remotes(
                    brain.path, RemoteMemory(seen_signed={**remembered_signed(brain), self.repository: self.source})
                )
                remembered = True
        return PullAuthentication(snapshot=self.source, state=self.state, records=len(self.records), stored=stored,
                                  remembered=remembered, re_rooted=re_rooted, warnings=list(self.warnings))


def _describe(auth: Authentication) -> str:
    blocking = ", ".join(f"{f.code} ({f.detail})" for f in auth.blocking)
    outcomes = ", ".join(f"{v.embedded_key or v.key}: {v.outcome}" for v in auth.signatures)
    return (
        f"its head is {auth.state}"
        + (f": {blocking}" if blocking else "")
        + (f"; signatures: {outcomes}" if outcomes else "")
    )


def _source(config: bytes, manifest: Manifest) -> OciDigest:
    try:
        if manifest.is_projection:
            return Projection.decode(config, manifest.config.digest).source
        return Snapshot.decode(config, manifest.config.digest).digest
    except BrainError as e:
        raise UntrustedArtifactError(
            f"the artifact's config is not a valid {mt.SNAPSHOT_CONFIG}: {e.message}"
        ) from None


def authenticate_pull(
    brain: Brain,
    client: RegistryClient,
    manifest_digest: OciDigest,
    manifest: Manifest,
    policy: PullPolicy | None = None,
    *,
    on_warning: Callable[[str], None] | None = None,
    fetch_only: bool = False,
) -> PullGate:
    """Read config, history and records of a remote artifact and refuse early what §9.8 refuses (see module doc)."""
    policy = policy or PullPolicy()
    history = manifest.history_layer()
    if history is None:
        raise UntrustedArtifactError(f"manifest {manifest_digest} has no history layer")
    prefetched: list[OciDigest] = []
    for blob in (manifest.config, history):
        if not (brain.blobs.has(blob.digest) and brain.blobs.verify_file(blob.digest)):
            client.fetch_blob(blob.digest, blob.size, brain.blobs)
            prefetched.append(blob.digest)
    staging = Staging(brain.blobs)
    try:
        source = _source(brain.blobs.get(manifest.config.digest), manifest)
        with open(brain.blobs.path(history.digest), "rb") as stream:
            snapshots = unpack_history(stream, history, staging)
        snapshot = snapshots.get(source)
        if snapshot is None:
            raise UntrustedArtifactError(f"history layer {history.digest} lacks the published snapshot {source}")
        local = StoreChain(brain.blobs, read_signature_index(brain.path).entries)
        walk, _ = first_parent_walk(local, source, snapshot)
        discovered = fetch_signature_records(client, manifest_digest, {d for d, _ in walk})
        head = brain.snapshot()
        newest = snapshot.trust_root
        if (
            head is not None
            and head.trust_root is not None
            and (newest is None or head.trust_root.revision > newest.revision)
        ):
            newest = head.trust_root
        binding = binding_of(brain, local)
        gate = PullGate(brain, repository_key(client), source, discovered.records, policy, newest,
                        prefetched=set(prefetched), on_warning=on_warning, binding=binding,
                        pin=None if policy.re_root else effective_pin(brain, binding))
        for reason in discovered.skipped:
            gate._warn(f"skipped a referrer: {reason}")
        if not fetch_only:
            _early(gate, local, snapshot)
    except BaseException:
        staging.rollback()
        for digest in prefetched:
            with contextlib.suppress(FileNotFoundError):
                brain.blobs.path(digest).unlink()
        raise
    staging.rollback()  # the install adopts them again, under the writer lock
    return gate


def _early(gate: PullGate, local: ChainStore, snapshot: Snapshot) -> None:
    binding = None if gate.policy.re_root else gate.binding
    markers = {} if binding is None else markers_for(binding, gate.repository, gate.chain(), gate.source, snapshot)
    if (
        binding is not None
        and binding.trust_root is not None
        and not carries(gate.chain(), gate.source, snapshot, binding.trust_root)
    ):
        # Not an unauthorized head of this brain but another authority: --allow-unauthorized does not cover it.
        raise UntrustedArtifactError(
            f"refused {gate.source.short}: a foreign chain (trust_root_mismatch): this brain {binding.why}, "
            "and no snapshot of the served "
            "history carries it (another brain, or another trust root)", hint=RE_ROOT_HINT,
        )
    for key, marker in markers.items():
        if not descends_from(gate.chain(), gate.source, snapshot, marker):
            gate._refuse(f"this brain last pulled {key} signed at {marker.short}, and the served head "
                         "does not descend from it (a different or rewritten history)")
    over_head = [r for r in gate.records if r.snapshot == gate.source]
    if not over_head:
        if gate.policy.require_signed:
            gate._refuse("its head is unsigned and --require-signed was given")
        elif gate.repository in markers:
            gate._refuse(f"its head is unsigned, but {gate.repository} was pulled signed before (signatures stripped?)")
        elif binding is not None:
            gate._refuse(f"its head is unsigned, but this brain {binding.why} (signatures stripped?)")
        else:
            gate._warn(f"installing an unsigned head {gate.source.short}: nothing vouches for who published it")
        return
    auth = gate.decide()
    early = [f for f in auth.blocking if f.code in EARLY_REFUSALS]
    if early:
        gate._refuse(_describe(auth.model_copy(update={"findings": early})))
    elif not any(v.outcome in _MAY_BECOME_VALID for v in auth.signatures):
        # No record can turn valid once the module layers arrive (a stranger's key, a bad signature...).
        gate._refuse(_describe(auth))


def both(first: Callable[[Head | None, OciDigest], None] | None, second: Callable[[Head | None, OciDigest], None]):  # type: ignore[no-untyped-def]
    """A head guard running `first` (if any), then `second`."""

    def guard(current: Head | None, incoming: OciDigest) -> None:
        if first is not None:
            first(current, incoming)
        second(current, incoming)

    return guard
