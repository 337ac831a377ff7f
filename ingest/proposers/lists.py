"""Lists as the heuristic reads them: the items of one list, and whether a list is a procedure.

`procedure` is the judgement of the `procedure` step of the scan (after dated items and terms had their
turn, see `table.ITEM_RULES`): at least two items, announced by a lead-in or a heading, with a procedural
cue for a bulleted list, that read as actions — not a table of contents, licence conditions, flags,
parameters, links, navigation, or statements.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ingest.proposers import rules

SUBJECT_SEPARATOR = " > "
MAX_ITEM_CHARS = 1 << 16  # a list item continued past this many characters is no step, term or change
MAX_STEPS = 25


@dataclass
class Item:
    """One list item: its lines, text, whether the list is numbered."""

    first: int
    last: int
    text: str
    ordered: bool
    more: list[str] = field(default_factory=list)
    """Continuation lines, joined onto `text` once the list is read (joining each as it came was quadratic:
    20 MB of continuation lines took two minutes)."""
    size: int = 0
    """Characters in `more`; past `MAX_ITEM_CHARS` the item is `overlong` and its lines are let go."""
    overlong: bool = False

    def continued(self, line: str, number: int) -> None:
        self.last = number
        if self.overlong:
            return
        self.size += len(line) + 1
        if self.size > MAX_ITEM_CHARS:  # no step, term or change: a careful reader would not quote it
            self.overlong, self.more = True, []
        else:
            self.more.append(line)

    def joined(self) -> Item:
        if self.more:
            self.text, self.more = " ".join([self.text, *self.more]), []
        return self


@dataclass
class PendingList:
    """The list being read, and what came before it: a lead-in that names it, one that was refused, or a
    definition that ends in `:` and may take the list as its content."""

    items: list[Item] = field(default_factory=list)
    lead_in: str | None = None
    refused: bool = False
    definition: tuple[str, str, str, int, int] | None = None

    def forget(self) -> None:
        """Nothing before the next list: what reading a prose line does when no list is open."""
        self.lead_in = self.definition = None
        self.refused = False


def procedure(
    items: list[Item], lead_in: str | None, announced: str, path: Callable[[str | None], list[str]],
    last_heading: str | None,
) -> dict[str, Any] | None:
    """The `procedural` payload of a list announced by `lead_in` or by the heading `announced`, or None.

    `path(without)` is the heading path the list sits under (without the label), `last_heading` the nearest
    heading's title.
    """
    ordered = any(item.ordered for item in items)
    # A long lead-in is a sentence about the list ("Many distributions do this for these reasons:"):
    # even a numbered list after it is steps only when it announces them.
    if lead_in is not None and len(lead_in.split()) > 6:
        if not rules.announces_steps(lead_in):
            return None
    elif not (ordered or rules.looks_procedural(announced)):
        return None
    if not steps_like(items, announced, last_heading):
        return None
    if lead_in is None and not rules.looks_procedural(announced) and rules.mostly_statements([i.text for i in items]):
        return None  # numbered, but statements ("### Benefits", "1. The component will ..."): nothing to do
    # "## Steps" under "# Deploying Lumen" is the procedure "Deploying Lumen".
    titles = [title for title in path(None) if not rules.is_generic_title(title)]
    label = lead_in if lead_in is not None else titles[-1] if titles else announced
    payload: dict[str, Any] = {
        "label": label,
        "goal": rules.procedure_goal(label),
        "steps": [{"action": rules.clean(item.text)} for item in items],
    }
    # The subject is the heading path the procedure sits under (without the label itself).
    subjects = [title for title in path(label) if not rules.is_generic_title(title)]
    if subjects:
        payload["subject"] = SUBJECT_SEPARATOR.join(subjects)
    return payload


def steps_like(items: list[Item], announced: str, last_heading: str | None) -> bool:
    """Not a table of contents, licence conditions, a flag or parameter list, or a list of links."""
    texts = [item.text for item in items]
    headings = [last_heading] if last_heading is not None else []
    if len(texts) > MAX_STEPS or rules.any_toc_title([announced, *texts, *headings]):
        return False
    if rules.is_licence_text(" ".join([announced, *texts])):
        return False
    # One pass over the items counts each kind of non-step; kinds that no item can be are not counted.
    joined = "\n".join(texts)
    links_possible, parameters_possible = rules.may_hold_links(joined), rules.may_hold_parameters(joined)
    links = menus = worded = parameters = 0
    for text in texts:
        links += text.lstrip("`*")[:1] in "-[<" or (links_possible and rules.is_link_line(text))
        menus += rules.is_menu_item(text)
        worded += rules.has_words(text)
        parameters += parameters_possible and rules.is_parameter_item(text)
    half = len(texts) / 2
    if links >= half or menus >= 0.75 * len(texts):
        return False  # flags, links; "Home", "Introduction", "Documentation": navigation, not steps
    return worded >= half and parameters < half  # symbols or code, not actions; a parameter list
