"""Trust-root revisions (§9.5): the new root a rotation or revocation makes, and the revision snapshot.

A revision keeps the head's modules and labels verbatim, takes a new `created_at`, and carries a root
whose `revision` is one higher; its records claim `govern`, and the head moves only once the previous
root's quorum is met (judged by `brain.authn.decision`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from brain.authn.keys import PublicKey, parse_trust_key
from brain.errors import InvalidInputError, NotFoundError
from brain.identity import OciDigest
from brain.snapshot import Snapshot, TrustKey, TrustRoot, TrustScope


@dataclass
class RootChange:
    """What a revision changes in the root in force."""

    add: list[TrustKey] = field(default_factory=list)
    remove: list[PublicKey] = field(default_factory=list)
    scopes: dict[bytes, tuple[TrustScope, ...]] = field(default_factory=dict)
    retire: list[PublicKey] = field(default_factory=list)
    compromised: dict[bytes, OciDigest] = field(default_factory=dict)
    quorum: int | None = None

    @property
    def empty(self) -> bool:
        return not (
            self.add or self.remove or self.scopes or self.retire or self.compromised or self.quorum is not None
        )


def _blob(entry: TrustKey) -> bytes:
    return parse_trust_key(entry.key).blob


def _require_listed(root: TrustRoot, keys: Iterable[bytes], what: str) -> None:
    listed = {_blob(e) for e in root.keys}
    for blob in keys:
        if blob not in listed:
            raise NotFoundError(
                f"cannot {what} key {PublicKey.from_blob(blob).fingerprint}: "
                f"trust root revision {root.revision} does not list it"
            )


def revise(root: TrustRoot, change: RootChange) -> TrustRoot:
    """The next revision of `root` (raises `InvalidInputError` if the result breaks a §9.5 rule)."""
    if change.empty:
        raise InvalidInputError(
            "a rotation must change something: add, remove, re-scope, retire or compromise a key, or the quorum"
        )
    revision = root.revision + 1
    removed = {k.blob for k in change.remove}
    retired = {k.blob for k in change.retire}
    _require_listed(root, removed | retired | set(change.scopes) | set(change.compromised), "change")
    entries: list[TrustKey] = []
    for entry in root.keys:
        blob = _blob(entry)
        if blob in removed:
            continue
        update: dict[str, object] = {}
        if blob in change.scopes:
            update["scopes"] = change.scopes[blob]
        if blob in retired and entry.retired_from is None:
            update["retired_from"] = revision
        if blob in change.compromised:
            update["compromised_from"] = change.compromised[blob]
        entries.append(TrustKey.model_validate({**entry.model_dump(exclude_none=True), **update}) if update else entry)
    listed = {_blob(e) for e in entries}
    for entry in change.add:
        if _blob(entry) in listed or _blob(entry) in removed:
            raise InvalidInputError(f"key {parse_trust_key(entry.key).fingerprint} is already listed")
        entries.append(entry.model_copy(update={"since": revision}))
    try:
        return TrustRoot(
            govern_quorum=change.quorum or root.govern_quorum, keys=tuple(entries), namespace=root.namespace,
            revision=revision,
        )
    except ValueError as e:
        raise InvalidInputError(f"the rotated trust root would be invalid: {e}") from None


def revision_snapshot(parent_digest: OciDigest, parent: Snapshot, root: TrustRoot, created_at: str) -> Snapshot:
    """The revision: first parent = the head, modules and labels verbatim, the new root."""
    return Snapshot(
        created_at=created_at, modules=dict(parent.modules), parent=parent_digest, labels=parent.labels, trust_root=root
    )
