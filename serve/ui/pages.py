"""The review UI's pages: each gathers the same answers the JSON routes and the CLI give, then renders a
Jinja2 template (autoescaped: every text from a document or a proposal is data, never markup).

| path | page |
|---|---|
| `/ui/` (`?q=…&type=…`) | search: highlighted excerpts, type filters, the verified-proof mark per hit |
| `/ui/blocks/{id}` | a block: fields, evidence excerpt with the cited lines marked, provenance, chain, dependents |
| `/ui/blocks/{id}/graph.svg` | the block's provenance graph |
| `/ui/sources/{id}` (`?locator=L4-L8`) | a source's normalized view with line anchors (`#L12`) |
| `/ui/branches`, `/ui/branches/{name}` | the branches; what merging one would bring (plan + gate verdicts) |
| `/ui/diff?a=…&b=…` | what changed between two snapshots or tags |
"""

from __future__ import annotations

import gc
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from brain.branches.operations import list_branches, resolve_branch
from brain.errors import BrainError, InvalidInputError, NotFoundError
from brain.identity import BlockId
from brain.module import read_block
from retrieval.passages import is_paged, pages_of, parse_locator
from retrieval.tokenize import highlight_spans, query_terms
from serve.face import BrainFace, CliJson
from serve.proposals_context import ServingBrain, StatementCache
from serve.tokens import Principal
from serve.ui.graph import provenance_graph
from serve.ui.diff import resolve, snapshot_diff
from serve.ui.review import incoming_blocks, warm

HTML = "text/html; charset=utf-8"
SVG = "image/svg+xml"
TYPES = ("canonical", "semantic", "procedural", "episodic")
MAX_LINES = 2000
CONTEXT_LINES = 3
_ID = re.compile(r"^(?:sha256:)?[0-9a-f]{4,64}$")
_REVISION = re.compile(r"^(?:sha256:)?[0-9a-f]{4,64}$|^HEAD(?:~\d{1,4})?$|^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$"
                       r"|^[A-Za-z0-9][A-Za-z0-9_-]*(?:/[A-Za-z0-9][A-Za-z0-9_-]*){1,8}$")


class ReviewUI:
    """`serve.proposals_http.Page` for `/ui/`: path, query and caller → (status, content type, body)."""

    def __init__(self, face: BrainFace, cli_json: CliJson, show: Callable[[str], Any] | None = None,
                 brain: ServingBrain | None = None) -> None:
        self.face = face
        self._cli = cli_json
        self._show_json = show if show is not None else face.show  # `brain show --json` of one block
        self._statements = StatementCache()
        # Bounded (a reviewer may look at many snapshots); shared with `show` when the server builds both.
        self._brain = brain if brain is not None else ServingBrain(face.brain_path)
        self._shown: dict[tuple[Any, str], Any] = {}
        self._answers: dict[tuple[Any, ...], Any] = {}  # branch plans and diffs, by the digests they compare
        self._lock = threading.Lock()
        self._warmed: int | None = None  # the process that started warming (forked workers warm their own)
        self.env = Environment(
            loader=PackageLoader("serve.ui", "templates"),
            autoescape=select_autoescape(["html", "svg"], default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )

    def warm(self) -> None:
        """Once per process, in the background: compile the templates, bring the search index to the served
        head, read what a first block page needs (`show`'s warm-up: the lineage log and the member sets) and
        what a first branch review needs (`serve.ui.review.warm`); every serving process calls it as it starts
        (`WriteApp.started`)."""
        with self._lock:
            if self._warmed == os.getpid():
                return
            self._warmed = os.getpid()
        threading.Thread(target=self._warm, name="ui-warm", daemon=True).start()

    def _warm(self) -> None:
        try:
            for name in self.env.list_templates():  # compiled once: a first view does not pay for it
                self.env.get_template(name)
            self.face.refresh()  # a block page's excerpts read sources through the index
            show_warm = getattr(self._show_json, "warm", None)
            if show_warm is not None:
                show_warm()
            warm(self._brain, self._statements)
            served = self._brain.snapshot_digest()
            if served is not None:  # loads the merge review's code: up to date with itself, nothing is judged
                self._cli_run(["merge", str(served), "--plan"])
            # What was read lives as long as the served snapshot: out of the cyclic collector's sight, a full
            # collection in this process (which holds every request thread still) costs microseconds, not 60 ms
            # (measured at 10^5 blocks).
            gc.freeze()
        except BrainError as e:  # the pages that need it will say so
            print(f"brain serve: warming the review UI failed: {e.message}", file=sys.stderr)

    def __call__(self, path: str, query: dict[str, list[str]], caller: Principal | None) -> tuple[HTTPStatus, str, str]:
        token = _one(query, "token")
        links = Links(token)
        segments = [s for s in path.split("/")[2:] if s]
        if any(s in (".", "..") for s in segments):
            raise InvalidInputError("path traversal is not allowed")
        try:
            return self._route(segments, query, links, caller)
        except NotFoundError as e:
            return HTTPStatus.NOT_FOUND, HTML, self._render("error.html", links, caller, title="Not found",
                                                             message=e.message, hint=e.hint)
        except BrainError as e:
            return HTTPStatus.BAD_REQUEST, HTML, self._render("error.html", links, caller, title="Cannot show this",
                                                               message=e.message, hint=e.hint)

    def _route(self, segments: list[str], query: dict[str, list[str]], links: Links, caller: Principal | None
               ) -> tuple[HTTPStatus, str, str]:
        match segments:
            case []:
                return HTTPStatus.OK, HTML, self._search(query, links, caller)
            case ["blocks", block]:
                return HTTPStatus.OK, HTML, self._block(_block_id(block), links, caller)
            case ["blocks", block, "graph.svg"]:
                return HTTPStatus.OK, SVG, self._graph(_block_id(block), links)
            case ["sources", source]:
                return HTTPStatus.OK, HTML, self._source(_block_id(source), query, links, caller)
            case ["branches"]:
                return HTTPStatus.OK, HTML, self._branches(links, caller)
            case ["branches", *name]:
                return HTTPStatus.OK, HTML, self._branch("/".join(name), links, caller)
            case ["diff"]:
                return HTTPStatus.OK, HTML, self._diff(query, links, caller)
        raise NotFoundError(f"no page {'/'.join(segments)[:80]!r}", hint="start at /ui/")

    def _render(self, template: str, links: Links, caller: Principal | None, **values: Any) -> str:
        return self.env.get_template(template).render(link=links, caller=caller, brain=self.face.brain_path.name,
                                                      **values)

    # --- pages ------------------------------------------------------------------------------------------

    def _search(self, query: dict[str, list[str]], links: Links, caller: Principal | None) -> str:
        text = (_one(query, "q") or "").strip()
        types = [t for t in query.get("type", []) if t in TYPES]
        answer = None
        if text:
            answer = self.face.search(text, limit=20, types=types)
            terms = query_terms(text)
            for match in answer["matches"]:
                for evidence in match["evidence"]:
                    evidence["marked"] = highlighted(evidence.get("excerpt") or "", terms)
                match["marked_title"] = highlighted(match.get("title") or "", terms)
        return self._render("search.html", links, caller, q=text, types=types, all_types=TYPES, answer=answer,
                            title="Search")

    def _show(self, block: str) -> Any:
        """`brain show --json` of a block, kept for the served snapshot (the block page's graph asks again)."""
        key = (self.face.brain.snapshot_digest(), block)
        with self._lock:  # request threads share the cache
            found = self._shown.pop(key, None)
        if found is None:
            found = self._show_json(block)
        with self._lock:
            self._shown[key] = found
            while len(self._shown) > 64:
                del self._shown[next(iter(self._shown))]
        return found

    def _block(self, block: str, links: Links, caller: Principal | None) -> str:
        try:
            shown = self._show(block)
        except NotFoundError:
            return self._stored_block(block, links, caller)
        ledger = shown.get("ledger") or {}
        excerpts = [self._excerpt(c["block"], c.get("locator")) | {"origin": c.get("origin"), "block": c["block"],
                                                                    "locator": c.get("locator")}
                    for c in (ledger.get("cited") or [])[:10]]
        return self._render("block.html", links, caller, shown=shown, ledger=ledger, excerpts=excerpts,
                            fields=_fields(shown.get("payload") or {}), title=_title(shown),
                            on_branch=not shown.get("member_of"))

    def _stored_block(self, block: str, links: Links, caller: Principal | None) -> str:
        """A block that is not in the served snapshot (one a branch proposes): its verified bytes, no ledger."""
        if not _FULL_ID.match(block):
            raise NotFoundError(f"no block {block} in the served snapshot", hint="give the full id of a proposed block")
        stored = read_block(self.face.brain.blobs, BlockId.parse(block if block.startswith("sha256:") else
                                                                  f"sha256:{block}"))
        payload = dict(stored.payload())
        shown = {"block_id": str(stored.block_id), "memory_type": str(stored.memory_type),
                 "schema_version": stored.schema_version, "member_of": [], "payload": payload}
        return self._render("block.html", links, caller, shown=shown, ledger={}, excerpts=[],
                            fields=_fields(payload), title=_title(shown), on_branch=True)

    def _excerpt(self, source: str, locator: str | None) -> dict[str, Any]:
        """The cited lines of a source with a few lines of context, the cited ones marked."""
        try:
            view = self.face.cat(source)
        except BrainError as e:
            return {"lines": [], "problem": e.message}
        first, last, page = _cited_range(locator)
        lines = _page_lines(view["text"], view.get("media_type") or "text/plain", page)
        if first is None:
            first, last = 1, min(len(lines), 1 + CONTEXT_LINES)
        start, end = max(1, first - CONTEXT_LINES), min(len(lines), (last or first) + CONTEXT_LINES)
        return {"lines": [(n, lines[n - 1], first <= n <= (last or first)) for n in range(start, end + 1)],
                "anchor": _anchor(page, first), "problem": None}

    def _graph(self, block: str, links: Links) -> str:
        shown = self._show(block)
        graph = provenance_graph(shown, lambda b: links.url(f"/ui/blocks/{b}"))
        return self.env.get_template("graph.svg").render(graph=graph)

    def _source(self, source: str, query: dict[str, list[str]], links: Links, caller: Principal | None) -> str:
        locator = _one(query, "locator")
        view = self.face.cat(source)
        media_type = view.get("media_type") or "text/plain"  # the source's type decides whether views have pages
        first, last, page = _cited_range(locator)
        start = _int(_one(query, "start"), 1)
        paged = is_paged(media_type)
        pages = pages_of(view["text"], media_type)
        rows, total = [], 0
        for number, text in enumerate(pages, start=1):
            for n, line in enumerate(text.split("\n"), start=1):
                total += 1
                if start <= total < start + MAX_LINES:
                    cited = first is not None and (page is None or page == number) and first <= n <= (last or first)
                    rows.append((_anchor(number if paged else None, n), n, line, cited,
                                 number if paged and n == 1 else None))
        more = start + MAX_LINES if total >= start + MAX_LINES else None
        return self._render("source.html", links, caller, view=view, rows=rows, locator=locator, more=more,
                            source=source, title=view.get("origin") or source)

    def _branches(self, links: Links, caller: Principal | None) -> str:
        branches = list_branches(self.face.brain, counts=False)
        return self._render("branches.html", links, caller, branches=branches, title="Branches")

    def _branch(self, name: str, links: Links, caller: Principal | None) -> str:
        brain = self._brain
        head = resolve_branch(brain, name)
        served = brain.snapshot_digest()
        assert served is not None
        # Content-addressed: the plan and the verdicts of one (served head, branch head) pair never change.
        key = ("branch", name, served, head)
        found = self._recall(key)
        if found is None:
            plan = self._cli_run(["merge", name, "--plan"])
            base = None
            ancestor = plan.get("ancestor") if isinstance(plan, dict) else None
            if isinstance(ancestor, str):
                base = brain.resolve_snapshot_prefix(ancestor)
            found = (plan, *incoming_blocks(brain, served, head, base, self._statements))
            self._remember(key, found)
        plan, incoming, count = found
        return self._render("branch.html", links, caller, name=name, head=head, served=served, plan=plan,
                            incoming=incoming, count=count, title=f"Branch {name}",
                            payload_json=lambda p: json.dumps(p, indent=1, ensure_ascii=False, sort_keys=True))

    def _diff(self, query: dict[str, list[str]], links: Links, caller: Principal | None) -> str:
        a, b = _revision(_one(query, "a") or "HEAD~1"), _revision(_one(query, "b") or "HEAD")
        brain = self._brain
        # The served history, first parents only (snapshot documents are small: no module is read).
        snapshots = [{"snapshot": str(d), "created_at": s.created_at,
                      "parent": None if s.first_parent is None else str(s.first_parent)}
                     for d, s in brain.history()[:30]]
        try:
            first, second = resolve(brain, a), resolve(brain, b)
            if first is not None and second is not None:
                key = ("diff", first, second)  # two snapshot digests: their diff never changes
                diff = self._recall(key)
                if diff is None:
                    diff = snapshot_diff(brain, first, second)
                    self._remember(key, diff)
            elif "/" not in a + b:  # a local tag: `brain diff` reads its manifest (never a registry REF)
                diff = self._cli_run(["diff", a, b])
            else:
                raise NotFoundError(f"no branch, snapshot or local tag {a if first is None else b!r}")
        except NotFoundError as e:
            diff = {"error": e.message}
        return self._render("diff.html", links, caller, a=a, b=b, diff=diff, snapshots=snapshots, title="Diff")

    def _recall(self, key: tuple[Any, ...]) -> Any:
        with self._lock:
            found = self._answers.pop(key, None)
            if found is not None:
                self._answers[key] = found
            return found

    def _remember(self, key: tuple[Any, ...], value: Any) -> None:
        with self._lock:
            self._answers[key] = value
            while len(self._answers) > 32:
                del self._answers[next(iter(self._answers))]

    def _cli_run(self, args: Sequence[str]) -> Any:
        """A read-only CLI command's JSON: only `merge NAME --plan` and `diff A B` are asked for here."""
        if args[0] not in ("merge", "diff") or (args[0] == "merge" and "--plan" not in args):
            raise InvalidInputError(f"{args[0]!r} is not a review command")
        return self._cli(list(args))


class Links:
    """URLs of the UI, carrying the `?token=` a loopback browser came with."""

    def __init__(self, token: str | None) -> None:
        self.token = token

    def url(self, path: str, **params: Any) -> str:
        """`path` with its query (lists repeat their key), plus the token."""
        pairs: list[tuple[str, str]] = []
        for key, value in params.items():
            if value is None:
                continue
            pairs += [(key, str(v)) for v in value] if isinstance(value, (list, tuple)) else [(key, str(value))]
        if self.token is not None:
            pairs.append(("token", self.token))
        fragment = ""
        if "#" in path:
            path, fragment = path.split("#", 1)
            fragment = "#" + quote(fragment)
        return quote(path, safe="/:") + ("?" + urlencode(pairs) if pairs else "") + fragment

    def block(self, block_id: str) -> str:
        """A block page."""
        return self.url(f"/ui/blocks/{block_id}")

    def source(self, block_id: str, locator: str | None = None) -> str:
        """A source page at a locator (anchored at its first cited line)."""
        first, _, page = _cited_range(locator)
        anchor = f"#{_anchor(page, first)}" if first is not None else ""
        return self.url(f"/ui/sources/{block_id}{anchor}", locator=locator)


def highlighted(text: str, terms: Sequence[str]) -> Markup:
    """`text` escaped, with the query's terms wrapped in `<mark>`."""
    out, at = [], 0
    for start, end in highlight_spans(text, terms):
        out.append(escape(text[at:start]))
        out.append(Markup("<mark>") + escape(text[start:end]) + Markup("</mark>"))
        at = end
    out.append(escape(text[at:]))
    return Markup("").join(out)


_FULL_ID = re.compile(r"^(?:sha256:)?[0-9a-f]{64}$")


def _block_id(segment: str) -> str:
    if not _ID.match(segment):
        raise InvalidInputError(f"{segment[:80]!r} is not a block id",
                                hint="give a block id or a prefix of 4+ hex digits")
    return segment


def _revision(text: str) -> str:
    if not _REVISION.match(text):
        raise InvalidInputError(f"{text[:80]!r} is not a snapshot, a local tag or HEAD~N")
    return text


def _one(values: dict[str, list[str]], name: str) -> str | None:
    found = values.get(name)
    return found[-1] if found else None


def _int(text: str | None, default: int) -> int:
    return int(text) if text is not None and text.isdigit() and 0 < int(text) < 10**9 else default


def _cited_range(locator: str | None) -> tuple[int | None, int | None, int | None]:
    if not locator:
        return None, None, None
    try:
        parsed = parse_locator(locator)
    except InvalidInputError:
        return None, None, None
    return parsed.first, parsed.last, parsed.page


def _anchor(page: int | None, line: int | None) -> str:
    line = line or 1
    return f"p{page}-L{line}" if page is not None else f"L{line}"


def _page_lines(text: str, media_type: str, page: int | None) -> list[str]:
    if page is not None and is_paged(media_type):
        pages = pages_of(text, media_type)
        return pages[page - 1].split("\n") if 0 < page <= len(pages) else []
    return text.split("\n")


def _fields(payload: dict[str, Any]) -> list[tuple[str, Any, bool]]:
    """(name, value, is_text) rows: strings shown as text, the rest as indented JSON (both escaped)."""
    rows = []
    for key in sorted(payload):
        value = payload[key]
        if isinstance(value, str):
            rows.append((key, value, True))
        else:
            rows.append((key, json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True), False))
    return rows


def _title(shown: dict[str, Any]) -> str:
    payload = shown.get("payload") or {}
    for key in ("label", "summary", "goal"):
        if isinstance(payload.get(key), str):
            return str(payload[key])[:120]
    return f"{shown.get('memory_type')} {str(shown.get('block_id', ''))[7:19]}"


