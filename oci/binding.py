"""What ties a consumer brain to one authority, whatever reference it pulls from (§9.8, hardened).

The spelling of a registry reference names where bytes came from, never whom to trust: `localhost:5000`
and `127.0.0.1:5000`, a mirror, another repository all serve the same brain. So a pull is judged against
the brain's own binding:

- a pin (`boltzmann/trust.json`) binds it to the pinned trust root;
- else a governed head (a snapshot with a trust root) binds it to that root;
- else a snapshot once pulled signed and authorized (`boltzmann/remotes.json`) binds it to that snapshot's root.

A bound brain refuses (exit 6) a served history that carries no snapshot with its root (a foreign chain:
another brain, a rogue `init --trust-key`), an unsigned head, and a head that does not descend from a
snapshot of the same brain it pulled signed before (a rollback), from any reference and with `--force`.
Only `pull --re-root` leaves the binding: the served chain is then judged on its own root, the pin and the
memory are rewritten for it, and `boltzmann/trust-log.jsonl` records the change.
"""

from __future__ import annotations

from dataclasses import dataclass

from brain.authn.chain import ChainStore, first_parent_walk
from brain.authn.trust import PinSource, RemoteMemory, TrustPin
from brain.brain import Brain
from brain.identity import OciDigest, utc_timestamp
from brain.snapshot import Snapshot
from brain.store.authn_files import append_trust_log, read_pin, read_remotes, remove_pin, write_pin, write_remotes
from oci.reference import normalized_key

RE_ROOT_HINT = "`brain pull REF --re-root` adopts the served trust root instead (recorded in boltzmann/trust-log.jsonl)"


@dataclass(frozen=True)
class Binding:
    """The authority a brain is bound to: a trust root (when known), why, and the snapshots pulled signed."""

    trust_root: OciDigest | None
    why: str
    markers: dict[str, OciDigest]


def remembered_signed(brain: Brain) -> dict[str, OciDigest]:
    """`seen_signed` with normalized keys (entries written before normalization read the same)."""
    return {normalized_key(k): v for k, v in read_remotes(brain.path).seen_signed.items()}


def binding_of(brain: Brain, chain: ChainStore) -> Binding | None:
    """This brain's binding (module docstring), or None for a brain free to trust on first use."""
    markers = remembered_signed(brain)
    pin = read_pin(brain.path)
    if pin is not None:
        return Binding(pin.trust_root, f"pins trust root {pin.trust_root.short}", markers)
    head = brain.snapshot()
    if head is not None and head.trust_root is not None:
        return Binding(head.trust_root.digest, f"is governed by trust root {head.trust_root.digest.short}", markers)
    roots = [
        s.trust_root
        for s in (chain.snapshot(d) for d in markers.values())
        if s is not None and s.trust_root is not None
    ]
    if roots:
        root = max(roots, key=lambda r: r.revision).digest
        return Binding(root, f"was pulled signed under trust root {root.short}", markers)
    if markers:
        return Binding(None, "was pulled signed before", markers)
    return None


def effective_pin(brain: Brain, binding: Binding | None) -> TrustPin | None:
    """The pin the §9.7 decision runs with: the consumer's own, else one standing for the binding's root."""
    pin = read_pin(brain.path)
    if pin is not None or binding is None or binding.trust_root is None:
        return pin
    return TrustPin(pinned_at=utc_timestamp(), source=PinSource.FIRST_USE, trust_root=binding.trust_root)


def genesis_of(chain: ChainStore, digest: OciDigest, snapshot: Snapshot | None = None) -> OciDigest | None:
    """The genesis a snapshot's first-parent walk reaches, or None when the walk is truncated or it is not held."""
    snapshot = snapshot or chain.snapshot(digest)
    if snapshot is None:
        return None
    walk, truncated = first_parent_walk(chain, digest, snapshot)
    return None if truncated else walk[-1][0]


def carries(chain: ChainStore, digest: OciDigest, snapshot: Snapshot, root: OciDigest) -> bool:
    """Whether `snapshot` or a first-parent ancestor carries the trust root `root`."""
    walk, _ = first_parent_walk(chain, digest, snapshot)
    return any(s.trust_root is not None and s.trust_root.digest == root for _, s in walk)


def markers_for(
    binding: Binding, repository: str, chain: ChainStore, source: OciDigest, snapshot: Snapshot
) -> dict[str, OciDigest]:
    """The snapshots pulled signed that the served head must descend from: the one of this repository, and
    every one of the same brain (same genesis, or a genesis that cannot be told) from any reference."""
    served = genesis_of(chain, source, snapshot)
    chosen = {}
    for key, marker in binding.markers.items():
        genesis = genesis_of(chain, marker)
        if key == repository or served is None or genesis is None or genesis == served:
            chosen[key] = marker
    return chosen


def record_re_root(brain: Brain, repository: str, source: OciDigest, *, authorized: bool,
                   previous: Binding | None) -> dict[str, object]:
    """After `pull --re-root` moved the head (caller holds the writer lock): rewrite the pin and the memory
    for the new head's trust root and log the change (`previous`: the binding left); returns the log entry."""
    head = brain.snapshot()
    new_root = None if head is None or head.trust_root is None else head.trust_root.digest
    pin = read_pin(brain.path)
    if pin is not None:
        if new_root is None:
            remove_pin(brain.path)
        else:
            write_pin(brain.path, TrustPin(pinned_at=utc_timestamp(), reference=repository, source=PinSource.FIRST_USE,
                                           trust_root=new_root))
    write_remotes(brain.path, RemoteMemory(seen_signed={repository: source} if authorized else {}))
    entry: dict[str, object] = {
        "at": utc_timestamp(), "event": "re-root", "pin_replaced": pin is not None,
        "previous": None if previous is None or previous.trust_root is None else str(previous.trust_root),
        "reference": repository,
        "snapshot": str(source), "trust_root": None if new_root is None else str(new_root),
    }
    append_trust_log(brain.path, entry)
    return entry
