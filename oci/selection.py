"""Which modules a pack publishes or a pull installs: the one rule both apply (§6.7, §6.8).

Pure logic. The rule: with no `--module`, everything available; otherwise exactly the modules asked for
(each must be available, at least one) plus `provenance` whenever it is available, because the ledger is
what explains the installed blocks and lets a consumer check removals (§7.7). Publishing adds §6.7's
constraint: a subset holding `semantic` or `procedural` must hold `canonical` too (derived blocks cite
canonical evidence). Installing does not add it: a consumer installs exactly what it asked for (§6.8),
and a block whose evidence was left out says so when it is shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.errors import InvalidInputError, NotFoundError


@dataclass(frozen=True)
class ModuleSelection:
    """The chosen modules, those added without being asked for, and those left out (all in module order)."""

    chosen: tuple[MemoryType, ...]
    implied: tuple[MemoryType, ...]
    left_out: tuple[MemoryType, ...]


def select_modules(
    available: Iterable[MemoryType], wanted: set[MemoryType] | None, *, publishing: bool, holder: str
) -> ModuleSelection:
    """Apply the rule to the modules `holder` (e.g. "the brain", "the artifact") has available.

    Raises `NotFoundError` for a module `holder` lacks and `InvalidInputError` for an empty request or a
    publication §6.7 forbids.
    """
    have = [t for t in MODULE_ORDER if t in set(available)]
    if wanted is None:
        return ModuleSelection(tuple(have), (), ())
    if not wanted:
        raise InvalidInputError("name at least one module with --module")
    missing = sorted((str(t) for t in wanted if t not in have), key=lambda name: MODULE_ORDER.index(MemoryType(name)))
    if missing:
        listed = ", ".join(str(t) for t in have) or "none"
        raise NotFoundError(
            f"{holder} has no {', '.join(missing)} module (it has: {listed})",
            hint="choose among the modules it has, or leave out --module",
        )
    if publishing:
        derived = [str(t) for t in MODULE_ORDER if t in wanted and t.is_derived]
        if derived and MemoryType.CANONICAL not in wanted:
            raise InvalidInputError(
                f"a subset with {', '.join(derived)} must include canonical "
                "(derived blocks cite canonical evidence, §6.7)",
                hint="add --module canonical",
            )
    chosen = set(wanted) | ({MemoryType.PROVENANCE} & set(have))
    return ModuleSelection(
        chosen=tuple(t for t in have if t in chosen),
        implied=tuple(t for t in have if t in chosen and t not in wanted),
        left_out=tuple(t for t in have if t not in chosen),
    )
