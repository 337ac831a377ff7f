"""Sentence- and line-level rules of the heuristic proposer: pure functions from text to findings.

Each rule is deliberately narrow (precision over recall): a wrong block in a brain costs more than a
missed one, and a model-backed proposer is one flag away for recall.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

MAX_LABEL_CHARS = 80
MAX_STATEMENT_CHARS = 600

# Subjects that are pronouns or determiners make statements about nothing nameable.
_NOT_A_SUBJECT = frozenset(
    "it this that there these those he she they we i you what which who whom whose here one each all some "
    "any both either neither such its their our my your his her".split()
)
_DEFINITION = re.compile(
    r"(?:(?P<article>The|A|An)\s+)?"
    r"(?P<label>[^\s,;:()\[\]]+(?:\s+[^\s,;:()\[\]]+){0,5}?)"
    r"\s+(?P<verb>is|are|means|refers to)\s+(?P<rest>\S.*)",
    re.DOTALL,
)
_ARTICLE_START = re.compile(r"(?:a|an|the)\s", re.IGNORECASE)
_TERM_ITEM = re.compile(r"(?P<label>[^:]{1,80}?)\s*(?::\s|\s[—–]\s)\s*(?P<definition>\S.*)")
_NOT_A_TERM = re.compile(r"(?:step|phase|stage|note|tip|warning|caution|example|todo|see|e\.g|i\.e)\b", re.I)
_DATED = re.compile(
    r"[\[(]?(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[T ](?P<h>[0-9]{2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?:\.[0-9]+)?"
    r"(?P<tz>Z|[+-][0-9]{2}:?[0-9]{2})?)?[\])]?"
    r"(?=$|[\s:,;|)\]–—-])"
)
_CLOCK = re.compile(r"(?P<h>[0-9]{1,2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?:\s*(?:UTC|Z))?(?=$|[\s:,;|)\]–—-])")
_DATE_IN_TEXT = re.compile(r"(?<![0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])")
_GENERIC_TITLE = re.compile(r"(?:steps|procedure|process|checklist|instructions|how[ -]to|usage)", re.IGNORECASE)
_SUMMARY_LEAD = re.compile(r"[\s:,;|\-–—)\]]+")
# Possessive: the same spans as `(?:[^.!?]|[.!?](?!\s|$))+[.!?]?`, without a backtracking entry per character
# (that form took ~120 bytes of regex stack per character: 1.7 GB for one 14 MB line).
_SENTENCE = re.compile(r"(?:[^.!?]++|[.!?](?!\s|$))++[.!?]?")
_PROCEDURE_CUE = re.compile(
    r"\b(?:how|steps?|procedures?|install\w*|set ?up|configur\w*|deploy\w*|build\w*|run\w*|usage|"
    r"getting started|instructions?|checklist|to)\b",
    re.IGNORECASE,
)
_HOW_TO = re.compile(r"(?:how to|to)\s+(?=\S)", re.IGNORECASE)
_MARKUP = str.maketrans("", "", "*`")


def clean(text: str) -> str:
    """Inline Markdown emphasis and code marks removed, whitespace collapsed."""
    if "*" in text or "`" in text:
        text = text.translate(_MARKUP)
    if "__" in text:
        text = text.replace("__", "")
    return " ".join(text.split())


def sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of a paragraph (a sentence ends at `.`, `!` or `?` before a space)."""
    spans = []
    for match in _SENTENCE.finditer(text):
        start, end = match.span()
        while start < end and text[start].isspace():
            start += 1
        if start < end:
            spans.append((start, end))
    return spans


def definition(sentence: str) -> tuple[str, str] | None:
    """`(kind, label)` when the sentence defines something ("X is a ...", "X means ...", "The X is ...")."""
    if len(sentence) > MAX_STATEMENT_CHARS or sentence.endswith("?"):
        return None
    match = _DEFINITION.fullmatch(sentence)
    if match is None:
        return None
    label = clean(match["label"])
    first = label.split(" ", 1)[0].lower()
    if not label or first in _NOT_A_SUBJECT or len(label) > MAX_LABEL_CHARS:
        return None
    if match["article"] is None and not (label[0].isupper() or label[0].isdigit()):
        return None
    verb, rest = match["verb"], match["rest"]
    if verb in ("means", "refers to") or _ARTICLE_START.match(rest):
        return "concept", label
    if match["article"] == "The":
        return "fact", label
    return None


def term_item(item: str) -> tuple[str, str] | None:
    """`(label, statement)` for a glossary-style list item: "Term: definition" or "Term — definition"."""
    match = _TERM_ITEM.fullmatch(item)
    if match is None:
        return None
    label = clean(match["label"])
    if not any(c.isalpha() for c in label) or len(label.split()) > 6 or _NOT_A_TERM.match(label) or label[-1] in ".!?":
        return None
    statement = clean(item)
    if len(statement) > MAX_STATEMENT_CHARS or not any(c.isalnum() for c in match["definition"]):
        return None
    return label, statement


def dated(line: str) -> tuple[str, str] | None:
    """`(occurred_at, summary)` for a line that starts with a valid date or timestamp; the time is UTC."""
    if not line or not (line[0].isdigit() or line[0] in "[("):
        return None
    match = _DATED.match(line)
    if match is None:
        return None
    try:
        moment = datetime(
            int(match["y"]), int(match["mo"]), int(match["d"]),
            int(match["h"] or 0), int(match["mi"] or 0), int(match["s"] or 0),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    tz = match["tz"]
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        moment -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        if not 1 <= moment.year <= 9999:
            return None
    rest = line[match.end() :]
    lead = _SUMMARY_LEAD.match(rest)
    summary = clean(rest[lead.end() :] if lead else rest)
    if not any(c.isalpha() for c in summary) or len(summary) > MAX_STATEMENT_CHARS:
        return None
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}Z", summary


def date_in(text: str) -> str | None:
    """The first valid `YYYY-MM-DD` date mentioned anywhere in `text` (e.g. a heading), as given."""
    for match in _DATE_IN_TEXT.finditer(text):
        if _valid_date(int(match[1]), int(match[2]), int(match[3])):
            return match[0]
    return None


def clock_line(line: str, date: str) -> tuple[str, str] | None:
    """`(occurred_at, summary)` for a time-only line ("09:12 the deploy started") on a known `date` (UTC)."""
    if not line or not line[0].isdigit():
        return None
    match = _CLOCK.match(line)
    if match is None:
        return None
    return dated(f"{date}T{int(match['h']):02d}:{match['mi']}:{match['s'] or '00'}Z{line[match.end():]}")


def _valid_date(year: int, month: int, day: int) -> bool:
    try:
        datetime(year, month, day)
    except ValueError:
        return False
    return True


def is_generic_title(title: str) -> bool:
    """Headings like "Steps" or "Checklist" that name a list, not what it achieves."""
    return _GENERIC_TITLE.fullmatch(title.strip().rstrip(":")) is not None


def procedure_goal(label: str) -> str:
    """The goal stated by a procedure's heading: "How to deploy" → "deploy"."""
    match = _HOW_TO.match(label)
    goal = label[match.end() :] if match else label
    return goal.rstrip(":").strip() or label


def looks_procedural(label: str) -> bool:
    """Whether a heading or lead-in announces steps (bulleted lists need this cue; numbered ones do not)."""
    return _PROCEDURE_CUE.search(label) is not None
