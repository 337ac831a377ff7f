"""`brain version`: the protocol version and the versions of the libraries that shape identity, from the real
modules."""

from __future__ import annotations

import unicodedata
import zlib
from importlib.metadata import version

from tests.cli.conftest import BrainRunner


def test_version_json(brain: BrainRunner) -> None:
    done = brain("version", "--json")
    assert done.code == 0, done
    info = done.json()
    assert info["brain"] == version("brain")
    assert info["protocol"] == "Boltzmann Protocol v1" and info["protocol_version"] == 1
    assert info["artifact_protocol_versions"] == [1, 2]
    identity = {lib["name"]: lib["version"] for lib in info["identity"]}
    assert identity["zlib"].startswith(zlib.ZLIB_RUNTIME_VERSION)
    assert identity["pypdf"] == version("pypdf")
    assert identity["unicode"] == unicodedata.unidata_version
    assert {lib["name"] for lib in info["libraries"]} >= {"blake3", "rfc8785", "oras", "pydantic"}


def test_version_for_people_and_the_flag(brain: BrainRunner) -> None:
    done = brain("version")
    assert done.stdout.splitlines()[0] == f"brain {version('brain')}"
    assert "zlib" in done.stdout and "pypdf" in done.stdout
    assert brain("--version").stdout.strip() == f"brain {version('brain')}"
