"""Trust roots in use (§9.5): looking keys up by blob, scopes held, and the consumer-side pin and memory.

The wire model of a trust root (`TrustRoot`, `TrustKey`, `TrustScope`) lives in `brain.snapshot`, where
snapshots carry it; this module adds what the decision asks of one.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from brain.authn.keys import PublicKey, parse_trust_key
from brain.blocks.fields import NonEmptyText, Timestamp, WireModel
from brain.identity import OciDigest
from brain.snapshot import TrustKey, TrustRoot, TrustScope

SCOPE_ORDER = tuple(TrustScope)


def entry_for(root: TrustRoot | None, key: PublicKey) -> TrustKey | None:
    """The entry of `root` listing `key` (compared on the full blob), or None."""
    if root is None:
        return None
    return next((entry for entry in root.keys if parse_trust_key(entry.key).blob == key.blob), None)


def held_scopes(entry: TrustKey) -> frozenset[TrustScope]:
    """The scopes an entry holds."""
    return frozenset(entry.scopes)


def is_retired(entry: TrustKey, revision: int) -> bool:
    """Whether `entry` is retired where the root in force has `revision`."""
    return entry.retired_from is not None and revision >= entry.retired_from


def govern_holders(root: TrustRoot) -> list[TrustKey]:
    """The entries of `root` that hold govern and are not retired in it."""
    return [e for e in root.keys if TrustScope.GOVERN in e.scopes and not is_retired(e, root.revision)]


def digest_of(root: TrustRoot | None) -> OciDigest | None:
    """The trust-root digest, or None for an ungoverned snapshot."""
    return None if root is None else root.digest


def sorted_scopes(scopes: frozenset[TrustScope] | set[TrustScope]) -> list[TrustScope]:
    """Scopes ascending by name (how records and reports list them)."""
    return sorted(scopes, key=str)


class PinSource(StrEnum):
    """How a pin was obtained."""

    FIRST_USE = "first_use"
    OUT_OF_BAND = "out_of_band"


class TrustPin(WireModel):
    """`boltzmann/trust.json` (§9.5): the trust root this consumer accepts for the brain."""

    boltzmann: Literal[1] = 1
    genesis: OciDigest | None = None
    pinned_at: Timestamp
    reference: NonEmptyText | None = None
    source: PinSource
    trust_root: OciDigest


class RemoteMemory(WireModel):
    """`boltzmann/remotes.json` (§9.5): references once pulled signed and authorized, with the snapshot."""

    boltzmann: Literal[1] = 1
    seen_signed: dict[str, OciDigest] = Field(default_factory=dict)
