"""Identity: canonical bytes, strict parsing, the three digest kinds, timestamps, actor ids."""

from brain.identity.actor import actor_id_problem, validate_actor_id
from brain.identity.clock import parse_timestamp, utc_timestamp
from brain.identity.digest import BlockId, Digest, MerkleRoot, OciDigest, is_digest_string
from brain.identity.jcs import MAX_SAFE_INTEGER, canonicalize, is_canonical, parse_strict

__all__ = [
    "MAX_SAFE_INTEGER",
    "BlockId",
    "Digest",
    "MerkleRoot",
    "OciDigest",
    "actor_id_problem",
    "canonicalize",
    "is_canonical",
    "is_digest_string",
    "parse_strict",
    "parse_timestamp",
    "utc_timestamp",
    "validate_actor_id",
]
