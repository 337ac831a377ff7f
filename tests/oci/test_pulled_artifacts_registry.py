"""What a pull leaves behind and what it accepts, against a real registry: subset packs, tags, inflate bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.verify import verify_brain
from oci.pack import pack
from oci.pull import open_or_init, pull
from oci.push import push
from tests.oci.layer_helpers import copy_reference
from tests.oci.test_push_pull_registry import client_for
from tests.registry import RegistryServer

pytestmark = pytest.mark.registry


def test_a_subset_pack_pulls_into_a_new_brain_and_verifies(registry: RegistryServer, tmp_path: Path) -> None:
    # The head's last step removed a semantic block; its removal record lives in provenance (§7.7).
    source = Brain.open(copy_reference(tmp_path / "source"))
    packed = pack(source, "p", {MemoryType.CANONICAL, MemoryType.SEMANTIC})
    assert packed.implied == [MemoryType.PROVENANCE]
    client, ref = client_for(registry.host, "subset/brain:p")
    push(source, ref, client=client)
    target, _ = open_or_init(tmp_path / "pulled")
    result = pull(target, ref, client=client)
    assert result.head_moved and result.modules == packed.modules
    report = verify_brain(target, jobs=1)
    assert report.ok, report.problems

