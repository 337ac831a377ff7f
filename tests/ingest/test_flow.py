"""The ingest flow (`ingest.record`): one frozen record per source, through the named stages in order.

These fail if a stage goes back to editing shared state: a mutable field on a record, job or answer (a
list to append problems to, a dict of counts), a stage that edits the record it was given, a source that
skips the commit or visits a stage twice out of order.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brain.brain import Brain
from ingest.answers import Answer, Job
from ingest.commit import Members, Stager, acting_actor
from ingest.fingerprints import FingerprintIndex
from ingest.lineage import read_lineage
from ingest.record import STAGES, SourceRecord, StageName, StageOrderError
from ingest.register import Normalized, Registered, Registrar, RegisterOptions
from ingest.replace import RunLineage
from ingest.run import IngestOptions, ingest
from ingest.sources import SourceFile, SourceProblem

ACTOR = "curator@example.org"
NOTE = "# Caches\n\nA shard is a slice of the cache that one node owns.\n"
MUTABLE = (list, dict, set, bytearray)


@pytest.fixture(autouse=True)
def _pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")


def _write(root: Path, files: dict[str, str]) -> Path:
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        past = path.stat().st_mtime - 3600  # a fresh mtime makes fingerprints racy
        os.utime(path, (past, past))
    return root


def _types_in(hint: Any) -> Iterator[Any]:
    yield typing.get_origin(hint) or hint
    for argument in typing.get_args(hint):
        yield from _types_in(argument)


@pytest.mark.parametrize("flowing", [Job, Answer])
def test_what_flows_between_stages_is_frozen_with_slots_and_holds_nothing_mutable(flowing: type) -> None:
    params = flowing.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen and vars(flowing)["__slots__"] and flowing.__dictoffset__ == 0  # no per-instance __dict__
    for name, hint in typing.get_type_hints(flowing).items():
        mutable = [t for t in _types_in(hint) if isinstance(t, type) and issubclass(t, MUTABLE)]
        assert not mutable, f"{flowing.__name__}.{name}: {hint} can be edited by the next stage"


@pytest.mark.parametrize("handed_on", [SourceRecord, Registered, Normalized])
def test_records_and_what_register_hands_on_are_tuples_of_immutable_parts(handed_on: type) -> None:
    assert issubclass(handed_on, tuple)
    for name, hint in typing.get_type_hints(handed_on).items():
        assert not [t for t in _types_in(hint) if isinstance(t, type) and issubclass(t, MUTABLE)], name


def test_a_stage_returns_a_new_record_and_never_goes_back(tmp_path: Path) -> None:
    root = _write(tmp_path / "src", {"a.md": NOTE})
    stat = (root / "a.md").stat()
    source = SourceFile(path=root / "a.md", relpath="a.md", size=stat.st_size, mtime_ns=stat.st_mtime_ns)
    discovered = SourceRecord.discovered(source, "a.md")
    brain = Brain.init(tmp_path / "brain")
    with brain.writer(ACTOR) as writer:
        members = Members(writer)
        lineage = RunLineage(brain.path, None, lambda: read_lineage(brain.path, [], []), members.has)
        stager = Stager(writer, acting_actor(ACTOR), members, lineage, lambda d: None)
        registrar = Registrar(stager, FingerprintIndex.load(brain.path), RegisterOptions(), brain.blobs.path, lineage)
        registered, view = registrar.register(discovered)
    assert (discovered.stage, discovered.status, discovered.block, discovered.problems) == ("discover", None, None, ())
    assert (registered.stage, registered.status, registered.source) == ("register", "registered", source)
    assert view == NOTE.encode() and registered.block is not None and isinstance(registered.problems, tuple)
    with pytest.raises(AttributeError):
        registered.status = "failed"  # type: ignore[misc]
    with pytest.raises(StageOrderError, match="a.md: the register stage cannot follow commit"):
        registered.advance("commit").advance("register")
    problem = SourceRecord.of_problem(SourceProblem(relpath="empty.md", code="empty", detail="0 bytes"))
    assert (problem.stage, problem.status, [p.stage for p in problem.problems]) == ("discover", "skipped", ["discover"])
    with pytest.raises(StageOrderError, match="only a discovered file"):
        registrar.register(problem)


def test_every_source_passes_the_stages_in_order_and_ends_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, list[StageName]] = {}
    advance = SourceRecord.advance

    def watched(self: SourceRecord, stage: StageName, **changes: Any) -> SourceRecord:
        stages = seen.setdefault(self.relpath, [self.stage])
        if stages[-1] != stage:
            stages.append(stage)
        return advance(self, stage, **changes)

    monkeypatch.setattr(SourceRecord, "advance", watched)
    root = _write(tmp_path / "src", {"a.md": NOTE, "b.md": NOTE, "empty.md": "", "c.md": NOTE.replace("shard", "node")})
    brain = Brain.init(tmp_path / "brain")
    result = ingest(brain, [root], IngestOptions(checkpoint=2), actor=ACTOR)
    assert [(o.relpath, o.status) for o in result.outcomes] == [
        ("a.md", "registered"), ("b.md", "duplicate"), ("c.md", "registered"), ("empty.md", "skipped"),
    ]  # fmt: skip
    assert seen == {
        "a.md": ["discover", "register", "ask", "judge", "stage", "commit"],
        "b.md": ["discover", "register", "commit"],  # a duplicate is not asked
        "c.md": ["discover", "register", "ask", "judge", "stage", "commit"],
        "empty.md": ["discover", "commit"],
    }
    assert all(stages == sorted(stages, key=STAGES.index) for stages in seen.values())
    seen.clear()
    again = ingest(brain, [root], IngestOptions(), actor=ACTOR)  # nothing new: registered, never asked again
    assert [o.status for o in again.outcomes] == ["unchanged", "duplicate", "unchanged", "skipped"]
    assert seen["a.md"] == seen["c.md"] == ["discover", "register", "commit"]
