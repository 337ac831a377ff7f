"""The gate's per-block checks (§7.6), each a pure function returning the issues it found.

Membership questions are asked through callables, so the same checks judge a proposer's candidate against
the head (ingest, serve) and an incoming block against a reconciliation's result M (§10.5).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping
from typing import Any

from brain.blocks import Block
from brain.gate.codes import Issue
from brain.gate.context import ContradictionKey, statement_key
from brain.identity import BlockId, OciDigest, is_digest_string

_BARE_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*")


def evidence_issues(cited: Iterable[str], canonical: Container[BlockId] | None) -> list[Issue]:
    """Cited evidence that is not a canonical member (one issue per missing id)."""
    issues = []
    for cited_id in cited:
        if canonical is None or not is_digest_string(cited_id) or BlockId.parse(cited_id) not in canonical:
            where = "no canonical module is installed" if canonical is None else "not a canonical member"
            issues.append(Issue("evidence-not-found", f"evidence {cited_id}: {where}"))
    return issues


def relation_issues(payload: Mapping[str, Any], anywhere: Callable[[BlockId], bool]) -> list[Issue]:
    """Semantic relations whose target is not a member of any module."""
    return [
        Issue("relation-target-not-found", f"relation target {target} is not a member of any module")
        for target in relation_targets(payload)
        if not anywhere(target)
    ]


def semantic_issues(
    payload: Mapping[str, Any],
    block: Block | None,
    held: Callable[[ContradictionKey], Iterable[tuple[str, BlockId]]],
) -> list[Issue]:
    """A catalog declaration (never proposable), and statements contradicting held ones."""
    issues = []
    if block is not None and block.schema_version == 3:
        issues.append(Issue("catalog-declaration-not-allowed", "catalog structure (semantic v3) cannot be proposed"))
    key, statement = statement_key(payload)
    for held_statement, held_id in held(key) if key is not None else ():
        if held_statement != statement:
            issues.append(Issue("contradiction", f"conflicts with {held_id}: {held_statement!r}"))
    return issues


def content_issues(content: Any, blob_size: Callable[[OciDigest], int | None] | None) -> list[Issue]:
    """A v2 `content` whose media type is not bare lowercase, or whose stored bytes have another size."""
    if not isinstance(content, dict):
        return []
    issues = []
    media_type = content.get("media_type")
    if isinstance(media_type, str) and _BARE_MEDIA_TYPE.fullmatch(media_type) is None:
        detail = f"content media type {media_type!r} is not a bare lowercase type/subtype"
        issues.append(Issue("content-mismatch", detail))
    blob, size = content.get("blob"), content.get("size")
    if blob_size is not None and is_digest_string(blob) and isinstance(size, int) and not isinstance(size, bool):
        stored = blob_size(OciDigest.parse(blob))
        if stored is not None and stored != size:
            issues.append(Issue("content-mismatch", f"content {blob} is {stored} bytes, the payload says {size}"))
    return issues


def relation_targets(payload: Mapping[str, Any]) -> list[BlockId]:
    """The distinct well-formed relation targets of a semantic payload, in order."""
    relations = payload.get("relations")
    if not isinstance(relations, list):
        return []
    # Malformed targets are the `schema` check's business.
    targets = [r["target"] for r in relations if isinstance(r, dict) and is_digest_string(r.get("target"))]
    return [BlockId.parse(t) for t in dict.fromkeys(targets)]
