"""What signs: the `Signer` protocol (implementations in the top-level `signers` package) and record making.

A signer holds or reaches a private key and signs the SSHSIG signed data; the private key never crosses
this interface, so it can never enter a record, a log or an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from brain.authn.keys import PublicKey
from brain.authn.records import SignatureRecord
from brain.authn.sshsig import NAMESPACE, armor, outer_blob, signed_data
from brain.authn.trust import sorted_scopes
from brain.identity import OciDigest
from brain.snapshot import TrustScope


class Signer(Protocol):
    """An Ed25519 key that can sign."""

    @property
    def public_key(self) -> PublicKey:
        """The public half (its blob is what trust roots list)."""
        ...

    def sign(self, data: bytes) -> bytes:
        """The raw 64-byte Ed25519 signature over `data`."""
        ...


def armored_signature(signer: Signer, message: bytes) -> str:
    """The armored SSHSIG over `message`, byte-identical to `ssh-keygen -Y sign -n boltzmann.snapshot.v1`."""
    raw = signer.sign(signed_data(message))
    return armor(outer_blob(signer.public_key, raw))


def make_record(signer: Signer, message: bytes, scopes: Iterable[TrustScope]) -> SignatureRecord:
    """A record over the snapshot whose stored bytes are `message`, claiming `scopes` (sorted)."""
    return SignatureRecord(
        key=signer.public_key.fingerprint,
        namespace=NAMESPACE,
        scopes=tuple(sorted_scopes(set(scopes))),
        signature=armored_signature(signer, message),
        snapshot=OciDigest.of(message),
    )
