"""Mechanical junk checks for proposed blocks (independent of the proposer's own rules, for the benches).

A block is junk when a reader would throw it away on sight: a statement that stops at a lead-in (`:`), a
fragment as a label, a link/badge/licence line as a fact, markup residue, flags or a table of contents as
steps, an e-mail address or a version number alone as an episode.
"""

from __future__ import annotations

import re
from typing import Any

_URL = re.compile(r"https?://\S+|www\.\S+")
_RESIDUE = re.compile(r"¶|\\f[BIRP]|^\.[A-Z]{1,2}\s|\*\*|(?<!\w)__|\]\(|!\[|\\-|:[a-z]+:`|`")
_FUNCTION = frozenset(
    ["a", "an", "the", "if", "and", "or", "but", "so", "then", "hence", "thus", "when", "while", "because", "following", "are", "is", "be", "of", "to", "in", "on", "for", "with", "as", "at", "by", "from", "this", "that", "these", "those", "it", "there", "here", "which", "what", "see", "also"]
)
_EMAIL = re.compile(r"<?\S+@\S+\.\w+>?")
# A change-log entry: "src/file.c (func): what changed", "deps: update npm", "cf-socket: improvements in ...".
_CHANGE_ENTRY = re.compile(
    r"^(?:[\w./+-]+\.\w+\s*\([^)]*\):|[\w.+-]+/[\w./+-]+:)|^[\w./-]+:\s+(?:add|fix|update|remove|bump|improve|"
    r"improvements|address|avoid|do not|don't|new|drop|use|make|support|revert|rename|move|replace|see also)\b",
    re.IGNORECASE,
)
_PARAMETER = re.compile(r"\[(?:in|out|in,\s*out)\]|^\S+:\s*[<{][\w|.]+[>}]")
_LICENCE = re.compile(
    r"\b(?:licen[cs]e[ds]?|copyright|warranty|redistribut\w+|merchantability|gpl|mit license|apache license)\b", re.IGNORECASE
)


def junk_reasons(memory_type: str, payload: dict[str, Any]) -> list[str]:
    """Why a block is junk (empty when it is not)."""
    reasons: list[str] = []
    label = str(payload.get("label") or "")
    text = str(payload.get("statement") or payload.get("summary") or "")
    if memory_type == "semantic":
        if text.rstrip().endswith(":"):
            reasons.append("dangling lead-in")
        words = label.split()
        if not words or words[0].lower() in _FUNCTION or words[-1].lower() in _FUNCTION:
            reasons.append("fragment label")
        if len(words) > 8:
            reasons.append("sentence as label")
        bare = _URL.sub("", text).strip(" :-–—()<>[]")
        if _URL.search(text) and len(bare.split()) <= len(words) + 2:
            reasons.append("link line")
        if _LICENCE.search(label):
            reasons.append("licence line")
        if len(text.split()) < 3:
            reasons.append("no statement")
        if _CHANGE_ENTRY.search(text):
            reasons.append("change-log entry as fact")
        if _PARAMETER.search(text):
            reasons.append("parameter as fact")
    elif memory_type == "procedural":
        steps = [str(s.get("action", "")) for s in payload.get("steps", [])]
        if sum(s.lstrip().startswith("-") for s in steps) * 2 >= len(steps):
            reasons.append("flags as steps")
        if sum(bool(_URL.search(s)) or s.startswith("[") for s in steps) * 2 >= len(steps):
            reasons.append("links as steps")
        if sum(len(s.split()) <= 3 and s[:1].isupper() and not s.endswith(".") for s in steps) == len(steps) > 3:
            reasons.append("table of contents as steps")
        if _LICENCE.search(" ".join(steps)):
            reasons.append("licence conditions as steps")
        text = " ".join(steps)
    elif memory_type == "episodic":
        words = _EMAIL.sub("", text).split()
        if sum(c.isalpha() for c in text) < 4 or (_EMAIL.search(text) and len(words) <= 4):
            reasons.append("no event (a name or an address)")
    if _RESIDUE.search(label) or _RESIDUE.search(text):
        reasons.append("markup residue")
    return reasons
