"""Sentence- and line-level rules of the heuristic proposer: pure functions from text to findings.

Each rule is deliberately narrow (precision over recall): a wrong block in a brain costs more than a
missed one, and a model-backed proposer is one flag away for recall.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

MAX_LABEL_CHARS = 80
MAX_STATEMENT_CHARS = 600

# Subjects that are pronouns or determiners make statements about nothing nameable.
NOT_A_SUBJECT = frozenset(
    [
        "it", "this", "that", "there", "these", "those", "he", "she", "they", "we", "i", "you", "what", "which",
        "who", "whom", "whose", "here", "one", "each", "all", "some", "any", "both", "either", "neither", "such",
        "its", "their", "our", "my", "your", "his", "her"
    ]
)
_DEFINITION = re.compile(
    r"(?:(?P<article>The|A|An)\s+)?"
    r"(?P<label>[^\s,;:()\[\]]+(?:\s+[^\s,;:()\[\]]+){0,5}?)"
    r"\s+(?P<verb>is defined as|are defined as|is|are|was|were|means|refers to|occurs when|occur when|happens when)"
    r"\s+(?P<rest>\S.*)",
    re.DOTALL,
)
# Words that start a clause, not a name: "If there is ...", "When the path is ...", "Returns true if ...".
_NOT_A_LABEL_START = frozenset(
    [
        "if", "when", "whenever", "while", "where", "because", "since", "although", "though", "unless", "until",
        "once", "after", "before", "hence", "thus", "so", "then", "and", "or", "but", "nor", "also", "only", "even",
        "just", "not", "no", "yes", "however", "therefore", "otherwise", "instead", "usually", "often", "returns",
        "return", "creates", "gets", "sets", "checks", "adds", "removes", "makes", "uses", "allows", "provides",
        "contains", "following", "above", "below", "be", "please", "consider", "remember", "ensure", "try", "don't",
        "e.g", "i.e", "etc"
    ]
)
# Words that end a clause fragment rather than a name ("are met", "part of", "the same as").
_NOT_A_LABEL_END = frozenset(
    ["of", "to", "in", "on", "for", "with", "as", "at", "by", "from", "and", "or", "the", "a", "an", "than", "that",
     "which"]
)  # fmt: skip
_SYMBOLS = frozenset("#=<>{}|$\\@%^~\"")
_SYMBOL = re.compile("[" + re.escape("".join(sorted(_SYMBOLS))) + "]")  # one search, not a set lookup per character
_LETTER = re.compile(r"[^\W\d_]")
# Lowercase single words too vague to name a fact on their own ("The format is ...", "The aim is ...").
_CHANGE_VERB = re.compile(
    r"(?:address|avoid|do|don't|ensure|handle|improvements?|cleanup|clarify|correct|enable|disable|introduce|"
    r"prevent|reduce|replace|restore|simplify|skip|switch|tidy|see also|new (?:function|variable|file|option)|"
    r"add|added|adds|fix|fixed|fixes|update|updated|updates|remove|removed|removes|bump|bumped|support|"
    r"make|made|use|drop|dropped|deprecate|deprecated|improve|improved|rename|renamed|change|changed|revert|"
    r"reverted|upgrade|upgraded|allow|allowed|implement|implemented|move|moved|refactor|refactored)\b",
    re.IGNORECASE,
)
# The same words matched case-sensitively, for lowercased ASCII text (see `_folded_match`).
_CHANGE_VERB_FOLDED = re.compile(_CHANGE_VERB.pattern)
_PARAMETER_ITEM = re.compile(r"\[(?:in|out|in,\s*out|in/out)\]|<[A-Za-z|]+>|\{[A-Za-z|.\[\]]+\}")
_ARTICLE_START = re.compile(r"(?:a|an|the)\s", re.IGNORECASE)
# numpydoc's parameter lines ("delim : chr, optional", "tee : bool, optional"): a name, a spaced colon, a type
# followed by a comma, "or", or nothing.
_NUMPYDOC_PARAMETER = re.compile(
    r"`?\*{0,2}[\w.]+`? : (?:int|float|complex|str|string|bool|boolean|chr|bytes|dict|list|tuple|set|callable|"
    r"object|array(?:[-_]like)?|ndarray|iterable|sequence|mapping|file|function|numeric|number|any|none|optional|"
    r"type|class)(?:,|\s+or\s|\s*$)",  # "list of events" is a definition; "list, optional" a type
    re.IGNORECASE,
)
_TERM_ITEM = re.compile(r"(?P<label>[^:]{1,80}?)\s*(?::\s|\s[—–]\s)\s*(?P<definition>\S.*)")
_NOT_A_TERM = re.compile(
    r"(?:step|phase|stage|note|tip|warning|caution|example|todo|see|e\.g|i\.e|returns?|extends|type|default|since|"
    r"added in|deprecated|stability|version|changes|source code|homepage|documentation|download|repository|"
    r"bug tracker|issues|website|author|maintainer|email|e-mail|license|licence)\b",
    re.IGNORECASE,
)
# A type's declaration in code names its parent, it defines nothing: "IntervalHistogram extends Histogram",
# "Foo implements Serializable" (`Class: ...` headings of API references).
_DECLARATION = re.compile(r"`?[\w.$]+`?\s+(?:extends|implements)\s+`?[\w.$<>]+`?")
_NOT_A_TERM_FOLDED = re.compile(_NOT_A_TERM.pattern)
_FOLD_CHARS = 40  # longer than any word of `_CHANGE_VERB` and `_NOT_A_TERM`, and the character after it
_DATED = re.compile(
    r"[\[(]?(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[T ](?P<h>[0-9]{2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?:\.[0-9]+)?"
    r"(?P<tz>Z|[+-][0-9]{2}:?[0-9]{2})?)?[\])]?"
    r"(?=$|[\s:,;|)\]–—-])"
)
_CLOCK = re.compile(r"(?P<h>[0-9]{1,2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2}))?(?:\s*(?:UTC|Z))?(?=$|[\s:,;|)\]–—-])")
_DATE_IN_TEXT = re.compile(r"(?<![0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])")
_GENERIC_TITLE = re.compile(r"(?:steps|procedure|process|checklist|instructions|how[ -]to|usage)", re.IGNORECASE)
_GENERIC_TITLES = frozenset(["steps", "procedure", "process", "checklist", "instructions", "how to", "how-to", "usage"])
_SUMMARY_LEAD = re.compile(r"[\s:,;|\-–—)\]]+")
# Possessive: the same spans as `(?:[^.!?]|[.!?](?!\s|$))+[.!?]?`, without a backtracking entry per character
# (that form took ~120 bytes of regex stack per character: 1.7 GB for one 14 MB line).
_SENTENCE = re.compile(r"(?:[^.!?]++|[.!?](?!\s|$))++[.!?]?")
# A full stop after these (or after an initial) does not end a sentence ("by D. J. Bernstein", "e.g. this").
_ABBREVIATIONS = frozenset(["e.g", "i.e", "etc", "vs", "cf", "Dr", "Mr", "Mrs", "Ms", "Prof", "St", "No", "Fig", "Sec",
                            "approx", "resp", "incl"])  # fmt: skip
_PROCEDURE_CUE = re.compile(
    r"\b(?:how|steps?|procedures?|install\w*|set ?up|configur\w*|deploy\w*|build\w*|run\w*|usage|"
    r"getting started|instructions?|checklist|to)\b",
    re.IGNORECASE,
)
_HOW_TO = re.compile(r"(?:how to|to)\s+(?=\S)", re.IGNORECASE)
_MARKUP = str.maketrans("", "", "*`¶")
_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\([^)\s]*\)")
_RST_ROLE = re.compile(r":[a-z][a-z:+-]*:(?=`)")
_RST_LINK = re.compile(r"`([^`<]*?)\s*(?:<[^>`]*>)?`__?")
_URL = re.compile(r"https?://\S+|www\.\S+")
_RST_REFERENCE = re.compile(r"(?<![\w_])([A-Za-z][\w-]*?)_(?=[\s.,;:!?)]|$)")
_BADGE_WORDS = ("badge", "shields.io", "travis-ci", "coveralls", "codecov", "appveyor", "circleci")


# Every kind of markup `clean` removes needs one of these (":" only in `:role:`, which needs "`").
_MAYBE_MARKUP = re.compile(r"[\\\]`*¶_]")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>])")


def _may_hold(text: str, stems: tuple[str, ...]) -> bool:
    """False only when `text` is ASCII and holds none of `stems` (lowercase), each a part of every word some
    case-insensitive pattern matches, so that it cannot match: a few substring tests cost a fraction of such
    a search. (Non-ASCII text is left to the pattern: case-insensitive matching folds more than `lower`.)"""
    if not text.isascii():
        return True
    lowered = text.lower()
    for stem in stems:  # a loop, not any(<generator>): this runs for every heading and sentence
        if stem in lowered:
            return True
    return False


def clean(text: str) -> str:
    """Inline Markdown/reST markup removed (emphasis, code marks, links keep their text), whitespace collapsed."""
    if _MAYBE_MARKUP.search(text) is None:
        return " ".join(text.split())  # the common case: one scan instead of one per kind of markup
    if "\\" in text:
        text = _ESCAPE.sub(r"\1", text)
    if "](" in text:
        text = _LINK.sub(lambda m: "" if m[1] else m[2], text)
    if ":`" in text:
        text = _RST_ROLE.sub("", text)
    if "`_" in text:
        text = _RST_LINK.sub(r"\1", text)
    if "*" in text or "`" in text or "¶" in text:
        text = text.translate(_MARKUP)
    if "__" in text:
        text = text.replace("__", "")
    if "_" in text:
        text = _RST_REFERENCE.sub(r"\1", text)  # reST `Jansson_` is a link to "Jansson"
    return " ".join(text.split())


def is_link_line(text: str) -> bool:
    """A line that is a link, badge or URL with little else ("Coveralls: https://...")."""
    if "![" in text or "image::" in text:
        return True  # an image: in a README, a badge
    if "://" not in text and "www." not in text:
        return False
    lowered = text.lower()
    if any(word in lowered for word in _BADGE_WORDS):
        return True
    return len(_URL.sub("", text).split()) <= 4


def sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of a paragraph (a sentence ends at `.`, `!` or `?` before a space)."""
    return list(_sentence_spans(text))


def _sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    for match in _SENTENCE.finditer(text):
        start, end = match.span()
        while start < end and text[start].isspace():
            start += 1
        if start < end:
            yield start, end


def whole_sentences(text: str) -> Iterator[tuple[int, int]]:
    """`sentences`, with a span that ends in an abbreviation or an initial joined to the next one (lazily:
    a paragraph may be a 50 MB line)."""
    pending: tuple[int, int] | None = None
    for start, end in _sentence_spans(text):
        first = pending[0] if pending is not None else start
        if text[end - 1] == ".":
            word = text[text.rfind(" ", first, end - 1) + 1 : end - 1].lstrip("(")
            if (len(word) == 1 and word.isalpha()) or word in _ABBREVIATIONS:
                pending = (first, end)
                continue
        pending = None
        yield first, end
    if pending is not None:
        yield pending


def is_fragment_label(label: str) -> bool:
    """A label that is a clause fragment or code, not a name ("If there", "For EventTargets this", "a # b")."""
    lowered = label.lower().split()  # as many words as `label` has: lowercasing adds no space
    if not lowered or len(label) > MAX_LABEL_CHARS:
        return True
    if lowered[0].strip(".,'\"") in _NOT_A_LABEL_START or lowered[-1].strip(".,'\"") in _NOT_A_LABEL_END:
        return True
    if not NOT_A_SUBJECT.isdisjoint(lowered):
        return True
    return _SYMBOL.search(label) is not None or label[0] in "[(-" or _LETTER.search(label) is None


def definition(sentence: str, names: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """`(kind, label)` when the sentence defines something ("X is a ...", "X means ...", "The X is <value>",
    "X is defined as ...", "X occurs when ..."); None for lead-ins (`...:`) and fragments.

    Without an article the label must be capitalized ("Kubernetes is ...", not "running is a verb"), unless
    it is one of `names`: the lowercased words of the document's title ("tmux is a terminal multiplexer").
    """
    if len(sentence) > MAX_STATEMENT_CHARS or sentence.endswith(("?", ":", ",", ";")):
        return None
    match = _DEFINITION.fullmatch(sentence)
    if match is None:
        return None
    label = clean(match["label"])
    if is_fragment_label(label):
        return None
    if match["article"] is None and not (label[0].isupper() or label[0].isdigit() or label in names):
        return None
    if _VAGUE.issuperset(label.lower().split()):
        return None  # "The first is a database handle and the second ...": the first what?
    verb, rest = match["verb"], match["rest"]
    if rest.rstrip().endswith(":"):
        return None  # "The API is extremely minimal:" — the content was in what followed
    if rest[:10].lower() == "as follows":
        return None  # "The sequence is as follows:" announces steps, it defines nothing
    if verb.endswith("when"):
        return "fact", label
    if verb in ("was", "were"):
        return ("fact", label) if match["article"] == "The" else None  # "X was ..." tells a story
    if verb in ("means", "refers to") or verb.endswith("defined as") or _ARTICLE_START.match(rest):
        return "concept", label
    if match["article"] is not None and rest[0].isdigit():
        return "fact", label  # "A nautical mile is 1852 metres."
    if match["article"] == "The":
        if (" " not in label and label.islower()) or _VAGUE.issuperset(label.lower().split()):
            return None  # "The format is the same as ...", "The next two are ...": which?
        return "fact", label
    return None


def _folded_match(pattern: re.Pattern[str], folded: re.Pattern[str], text: str) -> bool:
    """Whether case-insensitive `pattern` matches at the start of `text`. ASCII text is lowercased and matched
    by `folded` (the same words, case-sensitive): a long case-insensitive alternation tries every word in
    full, a case-sensitive one skips a word on its first letter."""
    if text.isascii():
        return folded.match(text[:_FOLD_CHARS].lower()) is not None
    return pattern.match(text) is not None


def has_word_count(text: str, count: int) -> bool:
    """At least `count` words of letters (hyphens and surrounding punctuation allowed); stops at the `count`th."""
    found = 0
    for word in text.split():
        if word.strip(".,;:()'\"").replace("-", "").isalpha():
            found += 1
            if found == count:
                return True
    return False


_QUOTE_MARK = re.compile(r"(?<![^\W\d_])'|'(?![^\W\d_])|\"")  # not an apostrophe inside a word ("Node's")


_FILE_NAME = re.compile(r"(?:[\w.+-]+/)*[\w+-][\w.+-]*\.(\w{1,4})(?:\s*\([^)]*\))?")
_CODE_EXTENSIONS = frozenset(["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "py", "js", "go", "rs", "java", "scm", "el",
                              "am", "ac", "in", "m4", "mk", "mms", "po", "pl", "pm", "sh", "y", "l", "s"])  # fmt: skip


def _is_source_file(label: str) -> bool:
    """A path with a directory, or a source file ("unix/unxcfg.h", "ubz2err.c", "Makefile.am (SUBDIRS)"); not
    an API name ("Buffer.from(array)", "package.json") or a media type ("application/vnd.x+json")."""
    found = _FILE_NAME.fullmatch(label)
    return found is not None and ("/" in label or found[1].lower() in _CODE_EXTENSIONS)


def _open_quote(text: str) -> bool:
    """A quotation opened and not closed in `text` (an odd number of quote marks)."""
    return ("'" in text or '"' in text) and len(_QUOTE_MARK.findall(text)) % 2 == 1


def term_item(item: str) -> tuple[str, str] | None:
    """`(label, statement)` for a glossary-style list item: "Term: definition" or "Term — definition".

    Not: parameter lists (`[in] buf: ...`, `name <string>`), change-log entries (`deps: update npm`), links,
    and items whose "definition" has fewer than three words of prose — a name, a call or a declaration
    (`ID: util.isBuffer()`, `Extends: {EventEmitter}`, `Class: Foo extends Bar`).
    """
    match = _TERM_ITEM.fullmatch(item)
    if match is None or (" : " in item[:90] and _NUMPYDOC_PARAMETER.match(item) is not None):
        return None
    label = clean(match["label"])
    if not label or label[-1] in ".!?" or label[0] in "[(<{" or label.count(" ") > 5 or _LETTER.search(label) is None:
        return None
    if _open_quote(label):
        return None  # cut inside a quotation: "Sending a 'Connection: keep-alive' will ..."
    if _is_source_file(label):
        return None  # the GNU ChangeLog convention "src/copy.c (copy_reg): Handle ...": a change to a file
    if _SYMBOL.search(label) or _folded_match(_NOT_A_TERM, _NOT_A_TERM_FOLDED, label):
        return None
    if _PARAMETER_ITEM.search(item, 0, 120):
        return None
    described = clean(match["definition"])
    if not has_word_count(described, 3) or _DECLARATION.fullmatch(described):
        return None  # a name, a call or a declaration is no definition: `ID: fs.lchmod(path, mode)`, `X extends Y`
    if _folded_match(_CHANGE_VERB, _CHANGE_VERB_FOLDED, described):
        return None
    if _URL.search(described) or is_fragment_label(label):
        return None
    statement = clean(item)  # (the definition has letters: `described`, made from it, has three words)
    if len(statement) > MAX_STATEMENT_CHARS:
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
    # Formatted field by field: a `strftime` format costs more than the rest of this function.
    day = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    stamp = f"{day}T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    return stamp, summary


def may_be_dated(text: str) -> bool:
    """The prefilter of `episode` and `dated`: a date, a timestamp or a time starts with a digit or a bracket."""
    return bool(text) and (text[0].isdigit() or text[0] in "[(")


def episode(text: str, day_of_heading: Callable[[], str | None]) -> tuple[str, str] | None:
    """`(occurred_at, summary)` of a line, heading or list item that starts with a date or timestamp (`dated`),
    or with a time of day under a heading that names the day (`clock_line`; `day_of_heading` is asked only
    then); None without a word in the summary, or for an address ("2026-03-02 <jo@example.org>")."""
    if not may_be_dated(text):
        return None
    found = dated(text)
    if found is None and text[:1].isdigit():
        day = day_of_heading()
        found = clock_line(text, day) if day is not None else None
    if found is None:
        return None
    words = found[1].split()
    if not any(word[:1].isalpha() for word in words) or "@" in words[0]:
        return None
    return found


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
    title = title.strip().rstrip(":")
    if title.isascii():  # the same answer as the pattern, by a set lookup (this runs for every procedure)
        return title.lower() in _GENERIC_TITLES
    return _GENERIC_TITLE.fullmatch(title) is not None


def procedure_goal(label: str) -> str:
    """The goal stated by a procedure's heading: "How to deploy" → "deploy"."""
    match = _HOW_TO.match(label)
    goal = label[match.end() :] if match else label
    return goal.rstrip(":").strip() or label


def looks_procedural(label: str) -> bool:
    """Whether a heading or lead-in announces steps (bulleted lists need this cue; numbered ones do not)."""
    return _PROCEDURE_CUE.search(label) is not None


# Release headings: "## [1.2.0] - 2026-03-14", "Version 1.2 (2026-03-14)", "* Noteworthy changes in release 2.3
# (2026-01-02) [stable]", "2026-03-14, Version 20.1.0 (Current), @someone".
_VERSION = re.compile(r"(?<![\w.])v?([0-9]+(?:\.[0-9]+)+(?:[-+~][0-9A-Za-z.~+-]+)?)(?![\w.])")
_MONTHS = {
    m: i + 1 for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])
}
_MONTH_NAMES = frozenset(
    [*_MONTHS, "sept"]
    + ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
       "december"]  # fmt: skip
)
_WORD_DATE = re.compile(
    r"\b(?:(?P<d1>[0-9]{1,2})\s+(?P<m1>[A-Za-z]{3,9})\.?,?\s+(?P<y1>[0-9]{4})"
    r"|(?P<m2>[A-Za-z]{3,9})\.?\s+(?P<d2>[0-9]{1,2}),?\s+(?P<y2>[0-9]{4}))\b"
)
_CHANGELOG_TITLE = re.compile(r"\b(?:change ?log|changes|news|release notes|history|what's new)\b", re.IGNORECASE)
_CHANGELOG_STEMS = ("change", "news", "release notes", "history", "what's new")  # see `_may_hold`
# Debian changelog: "pkg (1.2-3) unstable; urgency=medium" ... " -- Name <mail>  Mon, 02 Mar 2026 10:00:00 +0100".
DEBIAN_ENTRY = re.compile(r"([a-z0-9][a-z0-9+.-]+) \(([^()\s]+)\) [^;]*;.*urgency=\w+")
DEBIAN_TRAILER = re.compile(
    r" -- (?P<who>.+?) <[^>]*>\s+(?P<date>\w{3}, +[0-9]{1,2} \w{3} [0-9]{4} [0-9:]{8} [+-][0-9]{4})"
)


def any_date(text: str) -> str | None:
    """A valid date anywhere in `text` (ISO `YYYY-MM-DD`, "14 Mar 2026" or "March 14, 2026"), as `YYYY-MM-DD`."""
    iso = date_in(text)
    if iso is not None:
        return iso
    for match in _WORD_DATE.finditer(text):
        if match["d1"]:
            day, month, year = match["d1"], match["m1"], match["y1"]
        else:
            day, month, year = match["d2"], match["m2"], match["y2"]
        number = _MONTHS.get(month[:3].lower())
        if number is not None and month.lower() in _MONTH_NAMES and _valid_date(int(year), number, int(day)):
            return f"{int(year):04d}-{number:02d}-{int(day):02d}"
    return None


def release(title: str) -> tuple[str, str] | None:
    """`(version, YYYY-MM-DD)` when a heading names a dated release, else None."""
    if "." not in title:
        return None  # every version has a dot
    found = _VERSION.search(_DATE_IN_TEXT.sub(" ", title))
    if found is None or len(title) > MAX_LABEL_CHARS + 40:
        return None
    day = any_date(title)
    return (found[1], day) if day is not None else None


def is_changelog_title(title: str) -> bool:
    """A heading that announces a list of changes ("Changelog", "NEWS", "Notable changes", "Release notes")."""
    return _may_hold(title, _CHANGELOG_STEMS) and _CHANGELOG_TITLE.search(title) is not None


# GNU ChangeLog entry headers: "2022-10-10  Werner Koch  <wk@gnupg.org>", "Mon Dec  9 00:49:22 GMT 2013  Name  <m>".
GNU_ENTRY = re.compile(
    r"(?:(?P<iso>[0-9]{4}-[0-9]{2}-[0-9]{2})(?:[ T][0-9:]{5,8}(?:\s*[+-][0-9]{4}|\s*[A-Z]{2,5})?)?"
    r"|[A-Z][a-z]{2} (?P<month>[A-Z][a-z]{2}) +(?P<day>[0-9]{1,2}) [0-9:]{8}(?: [A-Z]{2,5})? (?P<year>[0-9]{4}))"
    r"(?P<gap>\s+)(?P<who>[^<>\s][^<>]*?)(?:\s+(?P<mail><[^<>\s]+@[^<>\s]+>))?\s*"
)
# `git log` output: "commit <sha>", "Author: ...", "Date:   Wed Nov 21 12:40:21 2018 +0100", then the message.
GIT_COMMIT = re.compile(r"commit [0-9a-f]{40}\b.*")
GIT_DATE = re.compile(r"Date: +(?:[A-Z][a-z]{2} )?(?P<rest>.+)")


# Where an entry header may start: at the text's start, or after a newline. Searched as "\n" + pattern: a
# literal first character is found by a fast scan, while `^` under re.MULTILINE is tried at every position.
_GNU_HINT_AT = r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[ T]|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} )"
_GNU_HINT_FIRST = re.compile(_GNU_HINT_AT)
_GNU_HINT = re.compile("\n" + _GNU_HINT_AT)
GNU_HINT_CHARS = 8_192
# A line that may be an entry header (a necessary condition of `gnu_entry_date`, with its caller's weekday
# test): a date then a space or `T`, or a weekday and a month, and on the same line two spaces (GNU style
# between date and name) or an address. Searched after a newline, as the hint above; lines that fail it
# (a dated log line: "2026-03-02 10:21 deployed") cost no parse.
_GNU_HEADER_AT = (
    r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[^\S\n]|T)|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} )"
    r"[^\n]{0,4096}?(?:[^\S\n]{2}|@)"  # within the line's first characters, as far as headers are read
)
_GNU_HEADER_FIRST = re.compile(_GNU_HEADER_AT)
_GNU_HEADER = re.compile("\n" + _GNU_HEADER_AT)


def may_hold_gnu_entry(text: str) -> bool:
    """One search of the opening characters before testing lines: does any line start like an entry header?"""
    return (
        _GNU_HINT_FIRST.match(text, 0, GNU_HINT_CHARS) is not None
        or _GNU_HINT.search(text, 0, GNU_HINT_CHARS) is not None
    )


def gnu_header_starts(text: str, end: int) -> Iterator[int]:
    """The offsets of the lines of `text[:end]` that may be GNU ChangeLog entry headers, in order."""
    if _GNU_HEADER_FIRST.match(text, 0, end) is not None:
        yield 0
    for match in _GNU_HEADER.finditer(text, 0, end):
        yield match.start() + 1


GNU_COMMIT_LINE = re.compile(r"\+ commit [0-9a-f]{7,40}")
_CO_AUTHOR = re.compile(r"[^<>*:]{2,80}?\s*<[^<>\s]+@[^<>\s]+>")


_LEADING_CLOCK = re.compile(r"[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?\s+")


def is_entry_lead_in(line: str) -> bool:
    """A line of a GNU ChangeLog entry that introduces the changes below it rather than being one: a short
    line ending in `:` that names no file ("From Jo Doe:", "Patch by J. Doe:", "Merged from trunk:",
    "Reported by Jo:"); a change names its file first ("* src/io.c (read_all):")."""
    if not line.endswith(":") or line.startswith(("* ", "- ")) or len(line.split()) > 6:
        return False
    return _FILE_NAME.search(line) is None and "(" not in line


def is_co_author_line(line: str) -> bool:
    """A GNU ChangeLog line naming one more author of an entry: "Name  <mail@example.org>"."""
    return _CO_AUTHOR.fullmatch(line) is not None


def gnu_entry_date(line: str) -> tuple[str, str] | None:
    """`(YYYY-MM-DD, author)` of a GNU ChangeLog entry header, or None."""
    match = GNU_ENTRY.fullmatch(line)
    if match is None or (match["mail"] is None and (len(match["gap"]) < 2 or len(match["who"].split()) > 4)):
        return None  # without an address, GNU style separates date and name by two spaces
    if match["iso"]:
        day = date_in(match["iso"])
    else:
        day = any_date(f"{match['day']} {match['month']} {match['year']}")
    who = _LEADING_CLOCK.sub("", match["who"].strip())  # "2015-06-10  13:50  Christos Zoulas"
    return (day, who) if day is not None and who else None


def git_date(line: str) -> str | None:
    """The UTC time of a `git log` "Date:" line ("Date:   Wed Nov 21 12:40:21 2018 +0100"), or None."""
    match = GIT_DATE.fullmatch(line.strip())
    if match is None:
        return None
    for form in ("%b %d %H:%M:%S %Y %z", "%Y-%m-%d %H:%M:%S %z"):
        try:
            moment = datetime.strptime(" ".join(match["rest"].split()), form)
        except ValueError:
            continue
        return f"{moment.astimezone(UTC):%Y-%m-%dT%H:%M:%S}Z"
    return None


def debian_trailer_time(line: str) -> str | None:
    """The UTC timestamp of a Debian changelog trailer line (" -- Name <mail>  RFC 2822 date"), or None."""
    match = DEBIAN_TRAILER.match(line)
    if match is None:
        return None
    try:
        moment = datetime.strptime(" ".join(match["date"].split()), "%a, %d %b %Y %H:%M:%S %z")
    except ValueError:
        return None
    return f"{moment.astimezone(UTC):%Y-%m-%dT%H:%M:%S}Z"


def is_title_line(text: str) -> bool:
    """A short line that reads as a title: a few words, capitalized, no closing punctuation, not a URL."""
    words = text.split()
    return (
        0 < len(words) <= 10
        and len(text) <= MAX_LABEL_CHARS
        and text[0].isupper()
        and text[-1] not in ".,;:!?"
        and not _URL.search(text)
        and any(c.isalpha() for c in text)
    )


def change_text(text: str) -> str:
    """A change-log entry without its links and commit hashes, at most about a line long."""
    text = _URL.sub("", clean(text))
    text = re.sub(r"\[[0-9a-f]{7,40}\]|<>|\(\s*\)|#[0-9]+", "", text)
    text = " ".join(text.split()).strip(" ,;:-").rstrip(".")
    return text if len(text) <= 160 else text[:157].rsplit(" ", 1)[0] + " …"


def is_menu_item(text: str) -> bool:
    """A navigation entry: at most three words, each long word capitalized, no sentence punctuation."""
    words = text.split()
    return 0 < len(words) <= 3 and text[-1] not in ".:;!?" and all(w[0].isupper() for w in words if len(w) > 3)


_STEPS_CUE = re.compile(
    r"^(?:to|how to)\s|\b(?:steps?|as follows|the following (?:commands?|steps?|procedure)|procedure|instructions?)\b",
    re.IGNORECASE,
)
_PARAMETER_HEADINGS = frozenset(["parameters", "arguments", "args", "params", "return value", "return values",
                                 "returns", "fields", "members", "attributes"])  # fmt: skip
_WORD = re.compile(r"[^\W\d_]{2,}")
_VAGUE = frozenset(["next", "previous", "same", "other", "former", "latter", "rest", "one", "two", "three", "first",
                    "second", "third", "last", "following", "above", "below", "former", "latter", "whole"])  # fmt: skip


# Endings that leave a lead-in's label dangling: prepositions, articles, auxiliaries and verbs that wanted
# the list as their object ("Major issues include", "A typical workflow looks like", "the TSC will").
_DANGLING_END = frozenset(["to", "of", "on", "in", "for", "with", "as", "at", "by", "from", "and", "or", "the", "a",
                           "an", "than", "that", "which", "like", "include", "includes", "including", "is", "are",
                           "be", "will", "would", "can", "could", "should", "must", "may", "need", "needs",
                           "following", "these", "this", "those"])  # fmt: skip
_AS_FOLLOWS = re.compile(r"\s+(?:(?:is|are)\s+)?(?:as\s+)?follows$|\s+(?:is|are)$", re.IGNORECASE)


def lead_in_label(label: str) -> str | None:
    """The name a lead-in gives the list it introduces, or None when it names nothing.

    "To onboard an ambassador, a member of the TSC will" names "To onboard an ambassador"; "The basic sequence
    of operations is as follows" names "The basic sequence of operations". Not names: a sentence adverb or an
    introductory phrase before a comma ("However, there are some differences", "In particular, it",
    "Specifically, for each file, the tests"), "Note how ...", and a clause cut before its object.
    """
    if "," in label:
        head = label.split(",", 1)[0]
        if _HOW_TO.match(head) is not None and len(head.split()) >= 2:
            label = head  # the purpose clause names the procedure
        elif len(head.split()) <= 3:
            return None  # "However,", "In particular,", "For example,", "Once installed,"
    label = _AS_FOLLOWS.sub("", label).rstrip()
    words = label.split()
    if not words or words[0].lower() in ("note", "see", "notice") or words[-1].lower() in _DANGLING_END:
        return None
    return label


# Words a statement starts with and an instruction does not ("The component will ...", "There is no ...").
_STATEMENT_START = frozenset(["the", "a", "an", "there", "it", "this", "these", "those", "its", "their", "our",
                              "some", "many", "most", "each", "every", "no", "any", "less", "more"])  # fmt: skip


def mostly_statements(items: list[str]) -> bool:
    """Whether at least half the items are statements about something, not actions: a numbered list of
    benefits or challenges under a heading is no procedure."""
    starts = [item.split(maxsplit=1)[0].strip("*`_").lower() for item in items if item.split()]
    return sum(word in _STATEMENT_START for word in starts) >= len(items) / 2


def announces_steps(lead_in: str) -> bool:
    """A long lead-in that announces steps ("To build it, run:", "The following steps are needed ..."), not
    a sentence about the list ("Node.js requires some per-process state in order to run:")."""
    return _STEPS_CUE.search(lead_in) is not None


def is_parameter_heading(title: str) -> bool:
    """A heading over a function's parameters or return values."""
    return title.strip().rstrip(":").lower() in _PARAMETER_HEADINGS


def has_words(text: str) -> bool:
    """Text with at least one word of two letters or more (an action, not `=` or `-`)."""
    return text[:2].isalpha() or _WORD.search(text) is not None  # most items start with a word


def is_toc_title(title: str) -> bool:
    """Headings of a table of contents or an index: lists under them are links, not steps."""
    return title.strip().rstrip(":").lower() in _TOC_TITLES


def any_toc_title(titles: list[str]) -> bool:
    """Whether one of `titles` is a table of contents' title (`is_toc_title`), in one pass."""
    return not _TOC_TITLES.isdisjoint([title.strip().rstrip(":").lower() for title in titles])


_TOC_TITLES = frozenset(["contents", "table of contents", "toc", "index", "on this page", "in this article",
                         "navigation", "links", "see also", "resources"])  # fmt: skip


_LICENCE_TITLE = re.compile(
    r"\b(?:licen[cs]e|copying|copyright|terms and conditions|eula)\b", re.IGNORECASE
)

_LICENCE_TITLE_STEMS = ("licen", "copying", "copyright", "terms and conditions", "eula")  # see `_may_hold`


def is_licence_title(title: str) -> bool:
    """The title of a licence text ("GNU General Public License", "COPYING", "Apache License 2.0")."""
    if not _may_hold(title, _LICENCE_TITLE_STEMS):
        return False
    return _LICENCE_TITLE.search(title) is not None and len(title.split()) <= 10


def is_licence_text(text: str) -> bool:
    """Licence conditions and boilerplate ("Redistributions of source code must retain ...")."""
    return _may_hold(text, _LICENCE_STEMS) and _LICENCE.search(text) is not None


# See `_may_hold`.
_LICENCE_STEMS = ("licen", "copyright", "warrant", "redistribut", "merchantability", "liabilit", "patent")
_LICENCE = re.compile(
    r"\b(?:licen[cs]e[ds]?|copyright|warrant(?:y|ies)|redistribut\w+|merchantability|liabilit(?:y|ies)|"
    r"sublicense|patent)\b",
    re.IGNORECASE,
)


# Possessive (the name's characters cannot be what follows it): no backtracking through the first word.
_PARAMETER_SHAPE = re.compile(r"`?+[\w.$\[\]-]++`?+\s*(?:[:({<]|\s[—–-]\s)")


def may_hold_parameters(text: str) -> bool:
    """False when no item in `text` can be a parameter (`is_parameter_item` needs one of these characters)."""
    for char in ":({<[—–-":
        if char in text:
            return True
    return False


def may_hold_links(text: str) -> bool:
    """False when no line in `text` can be a link line (`is_link_line` needs one of these)."""
    return "![" in text or "image::" in text or "://" in text or "www." in text


def is_parameter_item(text: str) -> bool:
    """An item of a parameter list: `name (type): ...`, `[in] buf: ...`, `path {string}`, `name <int>`."""
    if _PARAMETER_SHAPE.match(text) is not None:
        return True
    # `_PARAMETER_ITEM` needs a bracket; three substring tests are cheaper than its search.
    return ("[" in text or "<" in text or "{" in text) and _PARAMETER_ITEM.search(text) is not None


# "X provides ...", "X lets you ...", "This library implements ...": what the document's subject does. The verbs
# are a closed list (what a program, library or format does): an open `\w+s` took plural nouns for verbs
# ("Node.js buffers accept ...", "Pull requests should ...").
_DOES_VERBS = ("provides|offers|implements|lets|allows|enables|helps|makes|supports|contains|includes|defines|"
               "detects|reads|writes|parses|converts|generates|creates|builds|manages|handles|exposes|wraps|extends|"
               "adds|brings|gives|ships|stores|derives|serves|describes|covers|consists|comprises|features|produces|"
               "computes|validates|checks|formats|renders|transforms|compiles|translates|encodes|decodes|"
               "compresses|sends|receives|grants|reports|accepts|lists|finds|installs|runs|uses|relies|"
               "keeps")  # fmt: skip
_DOES = re.compile(
    r"(?P<label>[^\s,;:()\[\]]+(?:\s+[^\s,;:()\[\]]+){0,3}?)\s+(?P<verb>" + _DOES_VERBS + r")\s+(?P<rest>\S.*)",
    re.DOTALL,
)
# How a document names itself instead of by its title ("This library ...", "The module ...").
_SELF_NOUNS = frozenset(["library", "package", "module", "project", "plugin", "tool", "program", "repository",
                         "crate", "extension", "application", "utility", "framework", "software"])  # fmt: skip


def self_reference(label: str, title: str, names: frozenset[str], *, opening: bool) -> str | None:
    """The name `label` gives the document's subject, or None when it names something else: the title itself
    ("The Present Extension" names "Present Extension"), or the one word of a short title ("Wget" in "GNU
    Wget"); in the opening section (before any heading below the title) also "This library", "The package"."""
    words = clean(label).strip("*`'\"").split()
    lowered = [word.lower() for word in words]
    if not words:
        return None
    name = " ".join(words)
    if name.lower() == title.lower():
        return without_article(name)
    if lowered[0] in ("this", "the") and 2 <= len(lowered) <= 3 and lowered[-1] in _SELF_NOUNS:
        if len(lowered) == 3 and lowered[1].strip("\"'`") != title.lower():
            return None  # "The containers/image library" names a library, not this document's subject
        return without_article(title) if opening and len(title.split()) <= MAX_SELF_TITLE_WORDS else None
    if (
        len(words) == 1 and lowered[0] in names and len(title.split()) <= MAX_SELF_TITLE_WORDS and len(name) > 2
        and lowered[0] not in _NOT_A_LABEL_END and lowered[0] not in _NOT_A_LABEL_START
        and lowered[0] not in NOT_A_SUBJECT
    ):
        return name
    return None


MAX_SELF_TITLE_WORDS = 4  # a longer title is a sentence (an untitled document's opening words), not a name


def without_article(name: str) -> str:
    """A name without its leading article ("The Present Extension" -> "Present Extension")."""
    first, _, rest = name.partition(" ")
    return rest if rest and first.lower() in ("the", "a", "an") else name


def self_description(
    sentence: str, title: str | None, names: frozenset[str], *, opening: bool
) -> tuple[str, str] | None:
    """`(kind, label)` of a sentence saying what the document's subject is or does: "aiosqlite provides a
    friendly, async interface to sqlite databases." (a fact), "This library helps you deal with boolean
    expressions." (a fact), "This is a little HTTP/1.1 library ..." (a concept, in the opening section only);
    else None. The subject must be the document's own (`self_reference`): a sentence about anything else
    defines nothing here."""
    if title is None or len(sentence) > MAX_STATEMENT_CHARS or sentence[-1:] not in ".!":
        return None
    if sentence[:8] == "This is ":
        rest = sentence[8:]
        if not opening or len(title.split()) > MAX_SELF_TITLE_WORDS:
            return None
        if not (_ARTICLE_START.match(rest) or rest.startswith(("just ", "only "))):
            return None
        return "concept", without_article(title)
    match = _DOES.fullmatch(sentence)
    if match is None:
        return None
    label = self_reference(match["label"], title, names, opening=opening)
    if label is None or not has_word_count(match["rest"], 3) or _URL.fullmatch(match["rest"].strip()):
        return None
    return "fact", label


# Words that make a sentence a clause rather than a tagline (a finite verb, a pronoun, a request).
_CLAUSE_WORDS = frozenset(["is", "are", "was", "were", "be", "been", "can", "could", "will", "would", "should", "must",
                           "may", "might", "do", "does", "did", "has", "have", "had", "you", "we", "i", "it", "they",
                           "he", "she", "please", "if", "when", "see", "note"])  # fmt: skip


_FINITE_VERB = re.compile(r"\b(?:" + _DOES_VERBS + r"|means|refers|names|documents|explains|addresses|aims|include|"
                          r"obtains|describes|lists)\b")
_NAME_TOKEN = re.compile(r"[a-z][\w.+-]*|[A-Z][\w+-]*(?:[A-Z0-9_.+-][\w.+-]*)")


def is_name_token(title: str) -> bool:
    """A title that is a package's or program's name, not a word of prose: one token, lowercase or with an inner
    capital, digit or hyphen ("psmisc", "PySocks", "langchain-protocol"; not "Glossary", "Distribution", "NAME")."""
    return _NAME_TOKEN.fullmatch(title) is not None and not (title.isupper() and title.isalpha())  # not "NAME"


def tagline(sentence: str, title: str | None) -> str | None:
    """The statement of a document's tagline, the phrase its opening paragraph is ("A project to manage
    callbacks in asyncio projects.", "Data validation using Python type hints."), as `title: phrase`; None for
    a clause (a finite verb, a pronoun, a request), a fragment, a link or a title of more than a few words."""
    if title is None or not is_name_token(title) or sentence[-1:] != "." or len(sentence) > 300:
        return None
    words = clean(sentence).rstrip(".").split()
    if not 4 <= len(words) <= 30 or not words[0][:1].isupper() or _URL.search(sentence) or sentence.endswith("e.g."):
        return None
    if not _CLAUSE_WORDS.isdisjoint(word.strip(",;:()'\"").lower() for word in words) or "'re " in sentence:
        return None
    if _FINITE_VERB.search(sentence) is not None or words[0].lower() in ("this", "these", "those"):
        return None  # "Auk means ...", "This folder contains ...", "The module provides ...": a clause
    if words[-1].lower().strip(",;:") in _NOT_A_LABEL_END or not has_word_count(sentence, 3):
        return None  # cut before its object ("Library to apply JSON Patches according to")
    return f"{without_article(title)}: {clean(sentence)}"


def list_lead_in(label: str) -> str | None:
    """The name a short lead-in line gives the list after it ("To deploy the app", "Checklist"), or None: a
    capitalized line of at most 12 words that does not start with a pronoun, is no link and names its list
    (`lead_in_label`; not "This boils down to several options", "However, there are ...")."""
    words = label.split()
    if not words or len(words) > 12 or not (label[0].isupper() or label[0].isdigit()):
        return None
    if words[0].lower() in NOT_A_SUBJECT or is_link_line(label):
        return None
    return lead_in_label(label)


# --- prefilters: cheap tests that let a paragraph skip the rules that cannot match it ---------------------

# The verbs `definition` needs; one search instead of a substring test per verb (a pass over the paragraph
# each: they took ~8% of the proposer on ordinary text).
_DEFINING_VERB = re.compile(r" (?:is |are |mean|refers to |occur|happens |was |were )")


def may_define(text: str) -> bool:
    """A cheap test before looking for definitions: the text holds one of the verbs `definition` needs."""
    return _DEFINING_VERB.search(text) is not None


def self_names(title: str | None, names: frozenset[str]) -> re.Pattern[str] | None:
    """A sentence saying what the document's subject does names it (`self_description`): one search for its
    names ("This", "The", the title's words) before the sentences are parsed; None without a title."""
    if title is None:
        return None
    words = sorted({title, *(name for name in names if len(name) > 1)}, key=len, reverse=True)
    return re.compile(r"\b(?:This|The|(?i:" + "|".join(re.escape(word) for word in words) + r"))\b")
