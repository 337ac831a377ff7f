"""Planning a supersession or demotion (§3.7, §7.2): members stay members, only accessibility changes.

Refused: a block that is not a member, a provenance record (the brain's own record), a supersession across
modules or of a block by itself, a second winner for the same loser (a precedence conflict, §7.1), and a
cycle (the winner is already, transitively, superseded by the loser). Repeating a supersession or demotion
that is already recorded is not an error: there is nothing to write.
"""

from __future__ import annotations

from collections.abc import Iterable

from brain.blocks.memory_type import MemoryType
from brain.errors import LifecycleRefusedError
from brain.identity import BlockId
from brain.lifecycle.drop import Members, module_of
from brain.lifecycle.graph import DependencyGraph
from brain.lifecycle.records import ascending


def _member(block: BlockId, members: Members, verb: str) -> MemoryType:
    memory_type = module_of(block, members)
    if memory_type is None:
        raise LifecycleRefusedError(
            "not-a-member", str(block), f"block {block} is not a member of any module of the current snapshot",
            f"only members can be {verb}; check the id with `brain ls --all`",
        )
    if memory_type is MemoryType.PROVENANCE:
        raise LifecycleRefusedError(
            "provenance-record", str(block), f"block {block.short} is a provenance record, the brain's own history",
            f"records are never {verb}; name the block the record is about",
        )
    return memory_type


def plan_supersession(old: BlockId, new: BlockId, members: Members, graph: DependencyGraph) -> bool:
    """Whether `new` superseding `old` needs a record (False: it is already recorded); raises when refused."""
    if old == new:
        raise LifecycleRefusedError(
            "self-supersession", str(old), f"block {old.short} cannot supersede itself", "name two different blocks"
        )
    old_type, new_type = _member(old, members, "superseded"), _member(new, members, "superseded")
    if old_type is not new_type:
        raise LifecycleRefusedError(
            "modules-differ", str(old), f"block {old.short} is {old_type} but {new.short} is {new_type}",
            "a supersession names two members of the same module (§3.7)",
        )
    claimed = graph.winners(old)
    if new in claimed:
        return False
    if claimed:
        winner = claimed[-1]
        raise LifecycleRefusedError(
            "second-winner", str(old), f"block {old.short} is already superseded by {winner.short}",
            f"a loser has one winner: supersede the winner instead (`brain supersede {winner.short} {new.short}`)",
        )
    if _superseded_transitively(new, old, graph):
        raise LifecycleRefusedError(
            "supersession-cycle", str(new), f"block {new.short} is already superseded (transitively) by {old.short}",
            "a supersession cycle would leave neither block accessible; supersede in one direction only",
        )
    return True


def _superseded_transitively(block: BlockId, by: BlockId, graph: DependencyGraph) -> bool:
    seen: set[BlockId] = set()
    frontier = [block]
    while frontier:
        for winner in graph.winners(frontier.pop()):
            if winner == by:
                return True
            if winner not in seen:
                seen.add(winner)
                frontier.append(winner)
    return False


def plan_demotion(blocks: Iterable[BlockId], members: Members, graph: DependencyGraph) -> tuple[BlockId, ...]:
    """The blocks that need a demotion record (members not yet demoted), ascending; raises when refused."""
    named = ascending(blocks)
    for block in named:
        _member(block, members, "demoted")
    return tuple(b for b in named if not graph.is_demoted(b))
