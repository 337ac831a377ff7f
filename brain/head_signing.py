"""Signing the snapshot a write makes: check the key's scopes before anything is written, then sign the new
head once the write has moved it (§9.6). Every writing use case (ingest, drop, supersede, demote, redact)
does it the same way::

    signing = HeadSigning.prepare(brain, signer, {TrustScope.INGEST, TrustScope.COMMIT}, "this ingest")
    ...  # write
    signed = signing.sign_new_head()   # None when nothing was signed

The signer is any `brain.authn.signer.Signer` (the `signers` package opens key files and agent keys).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brain.brain import Brain
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.snapshot import TrustScope

if TYPE_CHECKING:
    # Deciding and signing pull in the whole authentication stack and `cryptography`: imported when a key is given.
    from brain.authn.signer import Signer


class SignedHead(FrozenModel):
    """The record a write added over the snapshot it made."""

    snapshot: OciDigest
    record: OciDigest
    key: str
    scopes: list[str]


@dataclass
class HeadSigning:
    """A signer checked against the head's trust root before a write, and the head it saw."""

    brain: Brain
    signer: Signer | None
    before: OciDigest | None

    @classmethod
    def load(cls, brain: Brain, signer: Signer | None) -> HeadSigning:
        """Remember the head (for a use case that learns the scopes it needs from its plan: then `require`)."""
        return cls(brain, signer, brain.snapshot_digest())

    @classmethod
    def prepare(cls, brain: Brain, signer: Signer | None, needed: Iterable[TrustScope], what: str) -> HeadSigning:
        """Refuse (writing nothing) a key the head's trust root does not grant `needed`."""
        signing = cls.load(brain, signer)
        signing.require(needed, what)
        return signing

    def require(self, needed: Iterable[TrustScope], what: str) -> None:
        """Raise the `RefusedError` for a key the head's trust root does not grant `needed` (before writing)."""
        if self.signer is None:
            return
        from brain.authenticity import refusal

        head = self.brain.snapshot()
        # The next snapshot is judged against the head's trust root (its first parent's).
        problem = refusal(None if head is None else head.trust_root, self.signer, set(needed), what)
        if problem is not None:
            raise problem

    def sign_new_head(
        self, *, lock_timeout: float | None = None, on_wait: Callable[[str], None] | None = None
    ) -> SignedHead | None:
        """Sign the head if the write moved it (claiming the scopes §9.6 requires); None otherwise."""
        after = self.brain.snapshot_digest()
        if self.signer is None or after is None or after == self.before:
            return None
        from brain.authenticity import sign_snapshot

        record, _ = sign_snapshot(self.brain, self.signer, after, lock_timeout=lock_timeout, on_wait=on_wait)
        return SignedHead(snapshot=after, record=record.digest, key=record.key, scopes=[str(s) for s in record.scopes])


__all__ = ["HeadSigning", "SignedHead"]
