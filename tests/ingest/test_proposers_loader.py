"""Loading proposers by spec, including a real third-party entry point from a dist-info on sys.path."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from brain.errors import UsageError
from brain.identity import BlockId
from ingest.proposers.base import SourceText
from ingest.proposers.candidates import Task
from ingest.proposers.exec import ExecProposer
from ingest.proposers.heuristic import HeuristicProposer
from ingest.proposers.loader import ProposerOptions, available_proposers, load_proposer
from ingest.proposers.openai import OpenAIProposer

PLUGIN = '''
from ingest.proposers.base import ProposalResult
from ingest.proposers.candidates import Candidate, CandidateSet


class EchoProposer:
    id = "acme/echo"
    version = "2.0"
    model = None

    def __init__(self, argument, options):
        self.parameters = {"argument": argument}

    def propose(self, task, source):
        candidate = Candidate(memory_type="semantic", evidence=(str(task.source),),
                              payload={"kind": "fact", "label": self.parameters["argument"] or "echo",
                                       "statement": source.text})
        return ProposalResult(CandidateSet(task_id=task.task_id, candidates=(candidate,)))


def not_a_proposer(argument, options):
    return object()


def explodes(argument, options):
    raise RuntimeError("plugin bug")
'''


@pytest.fixture
def plugin_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed distribution `acme-brain-plugins` 1.2.3 with three `brain.proposers` entry points."""
    (tmp_path / "acme_brain_plugins.py").write_text(PLUGIN)
    info = tmp_path / "acme_brain_plugins-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-brain-plugins\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(textwrap.dedent("""
        [brain.proposers]
        echo = acme_brain_plugins:EchoProposer
        broken = acme_brain_plugins:not_a_proposer
        explodes = acme_brain_plugins:explodes
        missing = acme_brain_plugins_gone:Nothing
        heuristic = acme_brain_plugins:EchoProposer
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("acme_brain_plugins", None)


def test_builtins() -> None:
    assert isinstance(load_proposer("heuristic"), HeuristicProposer)
    proposer = load_proposer(f"exec:{sys.executable} -c pass", ProposerOptions(timeout=3.0))
    assert isinstance(proposer, ExecProposer) and proposer.timeout == 3.0
    openai = load_proposer("openai:llama3", ProposerOptions(environ={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}))
    assert isinstance(openai, OpenAIProposer) and openai.model == "llama3"


@pytest.mark.parametrize("spec", ["nope", "exec", "exec:", "heuristic:x", "openai"])
def test_bad_specs(spec: str) -> None:
    with pytest.raises(UsageError):
        load_proposer(spec, ProposerOptions(environ={}))


def test_entry_point_proposer_runs(plugin_on_path: Path) -> None:
    proposer = load_proposer("echo:hello")
    assert (proposer.id, proposer.version, proposer.parameters) == ("acme/echo", "2.0", {"argument": "hello"})
    source = BlockId("1" * 64)
    result = proposer.propose(
        Task(source=source, allowed_memory_types=["semantic"]), SourceText.of(source, "text/plain", "hi")
    )
    assert result.candidates.candidates[0].payload["label"] == "hello"


def test_misbehaving_entry_points(plugin_on_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a Proposer"):
        load_proposer("broken")
    with pytest.raises(UsageError, match="RuntimeError: plugin bug"):
        load_proposer("explodes")
    with pytest.raises(UsageError, match="failed to load"):
        load_proposer("missing")
    assert isinstance(load_proposer("heuristic"), HeuristicProposer)


def test_available_lists_builtins_and_entry_points(plugin_on_path: Path) -> None:
    listed = {(info.name, info.source): info for info in available_proposers()}
    assert [name for name, source in listed if source == "builtin"] == ["heuristic", "exec", "openai"]
    echo = listed[("echo", "entry point")]
    assert echo.version == "1.2.3" and "acme-brain-plugins" in echo.description and not echo.shadowed
    assert listed[("heuristic", "entry point")].shadowed


def test_available_without_plugins() -> None:
    assert {info.name for info in available_proposers() if info.source == "builtin"} == {"heuristic", "exec", "openai"}
