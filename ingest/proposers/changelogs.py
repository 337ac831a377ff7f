"""Change logs in formats of their own, each read by its own reader: one episode per entry.

* Debian `changelog`: "pkg (1.2-3) unstable; urgency=medium", its `* change` lines, the " -- Name <mail>  date"
  trailer (the time, UTC).
* GNU `ChangeLog`: "2022-10-10  Name  <mail>" headers and their `* file (func): what` lines; lines naming
  people (co-authors, credits) or commits are no changes.
* `git log` output: "commit <sha>", "Date: ...", and the first line of each message.

`reader_for` tells the format by the text's opening lines; Markdown, reST and plain-text change logs (Keep a
Changelog, NEWS) are read by the general scan in `heuristic`, which knows their release headings.
"""

from __future__ import annotations

from collections.abc import Callable
import re

from ingest.proposers import rules
from ingest.proposers.base import SourceText
from ingest.proposers.candidates import Candidate
from ingest.proposers.emit import Emitter, Seen, joined, lines, summary

HEAD_LINE_CHARS = 4_096  # change-log headers are found in the first characters of a line
SHORT_TEXT = 1 << 16
CHANGELOG_WINDOW = 30  # a GNU ChangeLog has an entry header within its first lines (after a preface)
_EPISODIC = "episodic"
Reader = Callable[[SourceText, frozenset[str], list[Candidate], Seen], None]


# The first non-empty one of the opening `CHANGELOG_WINDOW` lines, cut at `HEAD_LINE_CHARS`.
_FIRST_LINE = re.compile(f"\n{{0,{CHANGELOG_WINDOW - 1}}}([^\n]{{1,{HEAD_LINE_CHARS}}})")


# The opening `CHANGELOG_WINDOW` lines (the last without its newline).
_OPENING = re.compile(f"(?:[^\n]*\n){{0,{CHANGELOG_WINDOW - 1}}}[^\n]*")


def first_line(text: str) -> str:
    """The first non-empty line of the text's opening (change-log formats are told by it), or ""."""
    found = _FIRST_LINE.match(text)
    return found[1] if found is not None else ""


def opens_gnu_changelog(text: str) -> bool:
    """Whether one of the first `CHANGELOG_WINDOW` lines (cut at `HEAD_LINE_CHARS`) is a GNU ChangeLog entry
    header. Only the lines that start like one are parsed (a test of every line cost ~7% on ordinary text)."""
    # A short text is searched to its end: cheaper than finding where its window of lines ends.
    window = None if len(text) <= SHORT_TEXT else _OPENING.match(text)
    end = len(text) if window is None else window.end()
    line_number, counted_to = 0, 0
    for start in rules.gnu_header_starts(text, end):
        line_number += text.count("\n", counted_to, start)
        counted_to = start
        if line_number >= CHANGELOG_WINDOW:
            return False
        cut = text.find("\n", start, start + HEAD_LINE_CHARS)
        line = text[start : cut if cut != -1 else start + HEAD_LINE_CHARS]
        if rules.gnu_entry_date(line) is not None:
            return True
    return False


def debian_changelog(source: SourceText, allowed: frozenset[str], out: list[Candidate], seen: Seen) -> None:
    """One episode per entry of a Debian `changelog`: the upload, its changes, the trailer's time (UTC)."""
    scan = Emitter(source, allowed, None, out, seen)
    title: str | None = None
    entry: tuple[int, str, str] | None = None
    changes: list[str] = []
    for number, raw in enumerate(lines(source.text), start=1):
        header = rules.DEBIAN_ENTRY.match(raw)
        if header is not None:
            entry, changes = (number, header[1], header[2]), []
            title = f"{header[1]} changelog"
            continue
        stripped = raw.strip()
        if entry is None:
            continue
        if stripped.startswith(("* ", "- ", "+ ")):
            changes.append(rules.change_text(stripped[2:]))
        elif stripped and raw.startswith("    ") and changes:
            changes[-1] = rules.change_text(f"{changes[-1]} {stripped}")
        occurred_at = rules.debian_trailer_time(raw) if raw.startswith(" -- ") else None
        if occurred_at is not None:
            line, package, version = entry
            said = summary(f"Uploaded {package} {version}", changes)
            payload = {"summary": said, "occurred_at": occurred_at, "context": title or package}
            scan.emit(_EPISODIC, ("episodic", occurred_at, said), payload, (line, number))
            entry = None


def gnu_changelog(source: SourceText, allowed: frozenset[str], out: list[Candidate], seen: Seen) -> None:
    """One episode per entry of a GNU `ChangeLog`: its date, author and changes (`* file (func): what`)."""
    scan = Emitter(source, allowed, None, out, seen)
    entry: tuple[int, str, str] | None = None
    changes: list[str] = []

    def close(last: int) -> None:
        if entry is None or not changes:
            return
        line, day, author = entry
        # The summary says what changed (an author is not an event); who changed it is context.
        said = joined(changes)
        payload = {"summary": said, "occurred_at": f"{day}T00:00:00Z", "context": f"ChangeLog, {author}"}
        scan.emit(_EPISODIC, ("episodic", payload["occurred_at"], said), payload, (line, last))

    last = 0
    for number, raw in enumerate(lines(source.text), start=1):
        header = rules.gnu_entry_date(raw) if raw[:1].isalnum() else None
        if header is not None:
            close(last)
            entry, changes = (number, *header), []
            continue
        stripped = raw.strip()
        if not stripped or entry is None:
            continue
        last = number
        if (
            rules.is_co_author_line(stripped) or rules.GNU_COMMIT_LINE.fullmatch(stripped)
            or rules.is_entry_lead_in(stripped)
        ):
            continue  # "Lulu Cheng  <lc@example.org>", "From Jo Doe:" (a lead-in), "+ commit 5751c48..." (a reference)
        if stripped.startswith("* "):
            changes.append(rules.change_text(stripped[2:]))
        elif changes and raw[:1].isspace():
            changes[-1] = rules.change_text(f"{changes[-1]} {stripped}")
        else:
            changes.append(rules.change_text(stripped))
    close(last)


def git_log(source: SourceText, allowed: frozenset[str], out: list[Candidate], seen: Seen) -> None:
    """One episode per commit of `git log` output: its date (UTC) and the first line of its message."""
    scan = Emitter(source, allowed, None, out, seen)
    start, occurred_at, subject = 0, None, None
    for number, raw in enumerate(lines(source.text), start=1):
        if rules.GIT_COMMIT.fullmatch(raw):
            start, occurred_at, subject = number, None, None
        elif occurred_at is None and raw.startswith("Date:"):
            occurred_at = rules.git_date(raw)
        elif occurred_at is not None and subject is None and raw.startswith("    ") and raw.strip():
            subject = rules.change_text(raw)
            if not any(c.isalnum() for c in subject):
                continue  # a message of punctuation ("."): no event to name (an empty summary fails the schema)
            payload = {"summary": subject, "occurred_at": occurred_at, "context": "git log"}
            scan.emit(_EPISODIC, ("episodic", occurred_at, subject), payload, (start, number))


def reader_for(text: str) -> Reader | None:
    """The reader of a change log in a format of its own (told by its opening lines), or None."""
    opening = first_line(text)
    if rules.DEBIAN_ENTRY.match(opening):
        return debian_changelog
    if rules.GIT_COMMIT.fullmatch(opening):
        return git_log
    if opens_gnu_changelog(text) and rules.may_hold_gnu_entry(text):
        return gnu_changelog
    return None
