"""The public API stays: what `brain` and `sdk` export, the documented imports, the seed's ledger calls run verbatim,
and each error family's exit code. A name that disappears (or a documented import that breaks) fails here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import brain
import sdk
from brain import errors

ROOT = Path(__file__).resolve().parents[1]

BRAIN_EXPORTS = {
    "BlockId", "Brain", "CanonicalBlock", "EpisodicBlock", "MemoryType", "MerkleRoot", "OciDigest", "ProceduralBlock",
    "SemanticBlock", "SemanticKind", "Step", "utc_timestamp",
}  # fmt: skip
SDK_EXPORTS = {"Brain", "BrainError"}
SDK_BRAIN_METHODS = {
    "init", "open", "pull", "ingest", "search", "drop", "supersede", "demote", "prune", "verify", "diff", "log",
    "sign", "pin", "pack", "push", "resolve", "modules", "ledger", "snapshot", "snapshot_digest",
}  # fmt: skip


def test_brain_exports() -> None:
    assert BRAIN_EXPORTS <= set(brain.__all__)
    assert all(hasattr(brain, name) for name in BRAIN_EXPORTS)


def test_sdk_exports() -> None:
    assert SDK_EXPORTS <= set(sdk.__all__)
    assert all(callable(getattr(sdk.Brain, name, None)) for name in SDK_BRAIN_METHODS)


def test_documented_imports() -> None:
    # The seed's documentation of memory types shows these imports.
    from brain import CanonicalBlock, EpisodicBlock, MemoryType, ProceduralBlock, SemanticBlock, SemanticKind, Step
    from brain.blocks import NormalizedView, Relation
    from brain.module import Ledger
    from ingest import PROPOSABLE_MEMORY_TYPES

    assert {CanonicalBlock, EpisodicBlock, ProceduralBlock, SemanticBlock, SemanticKind, Step, NormalizedView, Relation}
    assert MemoryType.SEMANTIC in PROPOSABLE_MEMORY_TYPES and MemoryType.CANONICAL not in PROPOSABLE_MEMORY_TYPES
    assert Ledger.__module__ == "brain.ledger"


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A brain of fixtures/corpus/notes, ingested with the heuristic."""
    root = tmp_path_factory.mktemp("api")
    shutil.copytree(ROOT / "fixtures" / "corpus" / "notes", root / "notes")
    made = sdk.Brain.init(root / "brain", actor="curator@example.org")
    made.ingest([root / "notes"], license="CC0-1.0")
    return root / "brain"


def test_the_seed_ledger_calls_verbatim(ingested: Path) -> None:
    from brain.blocks.provenance import Producer, ProducerKind
    from brain.module import Ledger

    brain = sdk.Brain.open(ingested).core
    ledger = Ledger.of(brain.modules())
    locators = ledger.locators
    evidence = ledger.evidence
    dependents = ledger.dependents
    derived = next(iter(evidence))
    source = evidence[derived][0]
    assert derived in locators
    assert derived in dependents[source]
    assert derived in ledger.closure(source)
    producer = ledger.producer[derived]
    assert isinstance(producer, Producer) and producer.kind in set(ProducerKind)
    assert derived in ledger.made_by(producer)
    assert ledger.superseded_by == {}
    assert ledger.is_accessible(derived)


# The exit code of each family, as the README documents them (cli/exit_codes.py names them).
FAMILY_CODES = {
    errors.ProblemsFoundError: 1,
    errors.BrainUnreadableError: 2,
    errors.UsageError: 3,
    errors.NotFoundError: 4,
    errors.ConflictError: 5,
    errors.RefusedError: 5,
    errors.UntrustedArtifactError: 6,
    errors.RemoteError: 7,
    errors.LocalStorageError: 8,
}


def _all_subclasses(base: type[errors.BrainError]) -> set[type[errors.BrainError]]:
    found: set[type[errors.BrainError]] = set(base.__subclasses__())
    for sub in list(found):
        found |= _all_subclasses(sub)
    return found


def test_every_error_carries_its_family_exit_code() -> None:
    import cli.main  # noqa: F401 - loads the commands, and with them most error classes
    import oci.pull  # noqa: F401
    from cli.exit_codes import ExitCode, exit_code_for

    for error in _all_subclasses(errors.BrainError):
        family = next((f for f in FAMILY_CODES if issubclass(error, f)), None)
        expected = 70 if family is None else FAMILY_CODES[family]
        assert error.exit_code == expected, error
    assert exit_code_for(errors.LifecycleRefusedError("x", "b", "d", "f")) is ExitCode.CONFLICT
    assert exit_code_for(errors.BrainError("a bug")) is ExitCode.INTERNAL
