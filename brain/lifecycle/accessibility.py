"""Accessibility (§7.2): membership is what the root commits to; accessibility is what retrieval returns.

A block is accessible unless a demotion names it or a supersession names it as the loser. A supersession is
in effect only while its winner is still a member: once the winner is dropped, the loser is the best the
brain holds on that matter and is accessible again (the reference hides it forever, which leaves a question
with no answer).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from brain.identity import BlockId


def is_accessible(
    block_id: BlockId,
    winners: Mapping[BlockId, Collection[BlockId]],
    demoted: Collection[BlockId],
    is_member: Callable[[BlockId], bool] | None = None,
) -> bool:
    """Whether `block_id` is accessible; `is_member` None treats every winner as a member."""
    if block_id in demoted:
        return False
    claimed = winners.get(block_id, ())
    if is_member is None:
        return not claimed
    return not any(is_member(winner) for winner in claimed)
