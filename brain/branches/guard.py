"""Every head move of a governed brain by checkout or `branch create --at` is authenticated (§9.7, §10.8 item 6).

The reference installs any held snapshot there; we judge the target as a head with the brain's pin and the
current head's trust root as the newest known, and also refuse a target whose first-parent history reaches
another genesis than the head's (a merge never unions two key lists, and neither does a checkout).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brain.brain import Brain
from brain.errors import UntrustedArtifactError
from brain.identity import OciDigest
from brain.snapshot import Snapshot

if TYPE_CHECKING:
    from brain.authn.outcomes import State


def governed(*snapshots: Snapshot | None) -> bool:
    """Whether any of `snapshots` carries a trust root."""
    return any(s is not None and s.trust_root is not None for s in snapshots)


def authenticate_move(brain: Brain, target: OciDigest, what: str) -> State | None:
    """The §9.7 state of `target` when the brain or the target is governed (None when neither is).

    Raises `UntrustedArtifactError` (exit 6) unless `target` is `authorized`; nothing has moved then.
    """
    head_digest = brain.snapshot_digest()
    head = brain.snapshot()
    snapshot = brain.snapshot(target)
    if snapshot is None or not governed(head, snapshot):
        return None
    # Only a governed brain pays for the §9.7 machinery (a checkout is otherwise a few pointer writes).
    from brain.authn.outcomes import State
    from brain.authenticity import judge

    if head is not None and head_digest is not None and head_digest != target:
        ours, theirs = _genesis(brain, head_digest, head), _genesis(brain, target, snapshot)
        if ours != theirs:
            raise UntrustedArtifactError(
                f"{what}: snapshot {target.short} descends from another genesis ({_short(theirs)}) than the head "
                f"({_short(ours)}); nothing moved",
                hint="a brain has one trust root lineage: pull or merge it into another directory",
            )
    auth = judge(brain, target)
    if auth.state is not State.AUTHORIZED:
        codes = ", ".join(f.code for f in auth.blocking) or "no valid signature"
        raise UntrustedArtifactError(
            f"{what}: snapshot {target.short} is {auth.state} as a head ({codes}); nothing moved",
            hint=f"sign it with a key the trust root authorizes (`brain sign {target.short} --sign-with KEY`), "
                 "then retry",
        )
    return auth.state


def _genesis(brain: Brain, digest: OciDigest, snapshot: Snapshot) -> OciDigest | None:
    from brain.authn.chain import first_parent_walk
    from brain.authenticity import chain_of

    walk, truncated = first_parent_walk(chain_of(brain), digest, snapshot)
    return None if truncated else walk[-1][0]


def _short(digest: OciDigest | None) -> str:
    return "not held" if digest is None else digest.short


__all__ = ["authenticate_move", "governed"]
