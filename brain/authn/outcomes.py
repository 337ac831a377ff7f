"""The §9.7 vocabulary: per-record outcomes, findings (with their blocking flag), states and roles.

These names are the reference's report vocabulary, used by the vectors; they are never stored or sent.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """What one signature record proves (§9.7 step 8, first failing test decides)."""

    VALID = "valid"
    VALID_AS_PROPOSAL = "valid_as_proposal"
    WRONG_NAMESPACE = "wrong_namespace"
    INVALID_SIGNATURE = "invalid_signature"
    FINGERPRINT_MISMATCH = "fingerprint_mismatch"
    UNSUPPORTED_KEY_TYPE = "unsupported_key_type"
    UNVERIFIABLE = "unverifiable"
    ATTRIBUTABLE_KEY = "attributable_key"
    UNAUTHORIZED_KEY = "unauthorized_key"
    RETIRED_KEY = "retired_key"
    COMPROMISED_KEY = "compromised_key"
    COMPROMISE_UNDECIDABLE = "compromise_undecidable"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    INSUFFICIENT_SCOPE = "insufficient_scope"


class FindingCode(StrEnum):
    """A finding about the snapshot as a whole."""

    CHAIN_TRUNCATED = "chain_truncated"
    PIN_BRAIN_MISMATCH = "pin_brain_mismatch"
    TRUST_ROOT_MISMATCH = "trust_root_mismatch"
    SINCE_REFUTED = "since_refuted"
    QUORUM_FAILURE = "quorum_failure"
    REVISION_CHANGED_CONTENT = "revision_changed_content"
    REVISION_REGRESSED = "revision_regressed"
    REMOVAL_INVARIANT = "removal_invariant"
    SIGNATURES_BELOW_POLICY = "signatures_below_policy"
    PROPOSED_HEAD = "proposed_head"
    UNSIGNED_BRAIN = "unsigned_brain"
    EVIDENCE_INCOMPLETE = "evidence_incomplete"
    REMOVAL_UNDECIDABLE = "removal_undecidable"
    COMPROMISED_KEY = "compromised_key"
    QUORUM_MARGIN = "quorum_margin"
    GENESIS_BELOW_QUORUM = "genesis_below_quorum"
    ATTRIBUTION_UNVERIFIED = "attribution_unverified"
    UNVERIFIABLE = "unverifiable"


BLOCKING = frozenset({
    FindingCode.CHAIN_TRUNCATED,
    FindingCode.PIN_BRAIN_MISMATCH,
    FindingCode.TRUST_ROOT_MISMATCH,
    FindingCode.SINCE_REFUTED,
    FindingCode.QUORUM_FAILURE,
    FindingCode.REVISION_CHANGED_CONTENT,
    FindingCode.REVISION_REGRESSED,
    FindingCode.REMOVAL_INVARIANT,
    FindingCode.SIGNATURES_BELOW_POLICY,
    FindingCode.PROPOSED_HEAD,
    FindingCode.UNSIGNED_BRAIN,
})


class State(StrEnum):
    """The summary of §9.7: first match wins."""

    UNSIGNED = "unsigned"
    UNAUTHORIZED = "unauthorized"
    AUTHORIZED = "authorized"
    ATTRIBUTABLE = "attributable"


class Role(StrEnum):
    """Where the snapshot sits in its chain (§9.7 step 1)."""

    GENESIS = "genesis"
    ORDINARY = "ordinary"
    REVISION = "revision"
    TRUNCATED = "truncated"


class Stance(StrEnum):
    """Judge a head (default) or an offered proposal."""

    HEAD = "head"
    OFFERED = "offered"
