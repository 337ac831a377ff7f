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
    [
        "a", "an", "the", "if", "and", "or", "but", "so", "then", "hence", "thus", "when", "while", "because",
        "following", "are", "is", "be", "of", "to", "in", "on", "for", "with", "as", "at", "by", "from", "this", "that",
        "these", "those", "it", "there", "here", "which", "what", "see", "also",
    ]
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
    r"\b(?:licen[cs]e[ds]?|copyright|warranty|redistribut\w+|merchantability|gpl|mit license|apache license)\b",
    re.IGNORECASE
)


def junk_reasons(memory_type: str, payload: dict[str, Any]) -> list[str]:
    """Why a block is junk (empty when it is not)."""
    label = str(payload.get("label") or "")
    if memory_type == "semantic":
        text = str(payload.get("statement") or "")
        reasons = _semantic_reasons(label, text)
    elif memory_type == "procedural":
        steps = [str(s.get("action", "")) for s in payload.get("steps", [])]
        reasons, text = _procedural_reasons(steps), " ".join(steps)
    else:
        text = str(payload.get("summary") or "")
        reasons = _episodic_reasons(text) if memory_type == "episodic" else []
    if _RESIDUE.search(label) or _RESIDUE.search(text):
        reasons.append("markup residue")
    return reasons


def _semantic_reasons(label: str, text: str) -> list[str]:
    reasons = []
    words = label.split()
    checks = [
        (text.rstrip().endswith(":"), "dangling lead-in"),
        (not words or words[0].lower() in _FUNCTION or words[-1].lower() in _FUNCTION, "fragment label"),
        (len(words) > 8, "sentence as label"),
        (_URL.search(text) is not None and len(_URL.sub("", text).strip(" :-–—()<>[]").split()) <= len(words) + 2,
         "link line"),
        (_LICENCE.search(label) is not None, "licence line"),
        (len(text.split()) < 3, "no statement"),
        (_CHANGE_ENTRY.search(text) is not None, "change-log entry as fact"),
        (_PARAMETER.search(text) is not None, "parameter as fact"),
    ]  # fmt: skip
    reasons += [reason for failed, reason in checks if failed]
    return reasons


def _procedural_reasons(steps: list[str]) -> list[str]:
    half = len(steps) / 2
    checks = [
        (sum(s.lstrip().startswith("-") for s in steps) >= half, "flags as steps"),
        (sum(bool(_URL.search(s)) or s.startswith("[") for s in steps) >= half, "links as steps"),
        (sum(len(s.split()) <= 3 and s[:1].isupper() and not s.endswith(".") for s in steps) == len(steps) > 3,
         "table of contents as steps"),
        (_LICENCE.search(" ".join(steps)) is not None, "licence conditions as steps"),
    ]  # fmt: skip
    return [reason for failed, reason in checks if failed]


def _episodic_reasons(text: str) -> list[str]:
    words = _EMAIL.sub("", text).split()
    if sum(c.isalpha() for c in text) < 4 or (_EMAIL.search(text) and len(words) <= 4):
        return ["no event (a name or an address)"]
    return []
