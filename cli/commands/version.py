"""`brain version`: the tool's version, the protocol it speaks, and the libraries that shape identity."""

from __future__ import annotations

import platform
import sys
import unicodedata
import zlib
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version

import typer
from rich.console import RenderableType

from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result

PROTOCOL_NAME = "Boltzmann Protocol"
PROTOCOL_MAJOR = 1
# Libraries whose behaviour decides bytes that are hashed: gzip layers (zlib), PDF text views (pypdf),
# NFC of every text view (the Unicode database of this Python).
IDENTITY_NOTES = {
    "zlib": "compresses module and history layers: a different zlib can pack different layer bytes",
    "pypdf": "extracts PDF text: its version is part of a PDF view's normalizer version",
    "unicode": "decides NFC of text views (Python's unicodedata)",
}
OTHER_LIBRARIES = ("blake3", "rfc8785", "orjson", "pydantic", "oras", "requests", "typer", "rich", "openai")


class LibraryVersion(Result):
    """One library: its version (None when not installed) and why it matters, if it shapes identity."""

    name: str
    version: str | None
    note: str | None = None


class VersionResult(Result):
    """`brain version --json`."""

    brain: str | None
    protocol: str
    protocol_version: int
    artifact_protocol_versions: list[int]
    python: str
    platform: str
    identity: list[LibraryVersion]
    libraries: list[LibraryVersion]


def _installed(name: str) -> str | None:
    try:
        return package_version(name)
    except PackageNotFoundError:
        return None


def version_info() -> VersionResult:
    """What this installation is made of."""
    from oci.media_types import MAX_PROTOCOL_VERSION

    zlib_version = zlib.ZLIB_RUNTIME_VERSION
    if zlib.ZLIB_VERSION != zlib.ZLIB_RUNTIME_VERSION:
        zlib_version += f" (compiled against {zlib.ZLIB_VERSION})"
    identity = [
        LibraryVersion(name="zlib", version=zlib_version, note=IDENTITY_NOTES["zlib"]),
        LibraryVersion(name="pypdf", version=_installed("pypdf"), note=IDENTITY_NOTES["pypdf"]),
        LibraryVersion(name="unicode", version=unicodedata.unidata_version, note=IDENTITY_NOTES["unicode"]),
    ]
    return VersionResult(
        brain=_installed("brain"),
        protocol=f"{PROTOCOL_NAME} v{PROTOCOL_MAJOR}",
        protocol_version=PROTOCOL_MAJOR,
        artifact_protocol_versions=list(range(1, MAX_PROTOCOL_VERSION + 1)),
        python=f"{platform.python_implementation()} {sys.version.split()[0]}",
        platform=platform.platform(terse=True),
        identity=identity,
        libraries=[LibraryVersion(name=name, version=_installed(name)) for name in OTHER_LIBRARIES],
    )


def version(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Print the version, the protocol version and the versions of the libraries that shape identity."""
    output = cli_context(ctx).output(as_json)
    output.result(version_info(), lambda r: _render(r, output))


def _render(result: VersionResult, output: Output) -> Iterable[RenderableType]:
    yield f"brain {result.brain or '(not installed)'}"
    versions = ", ".join(map(str, result.artifact_protocol_versions))
    yield f"protocol {result.protocol} (artifact protocol-version {versions})"
    yield f"python {result.python} on {result.platform}"
    table = output.table("library", "version", "why it matters")
    for library in result.identity:
        table.add_row(library.name, library.version or "not installed", library.note or "")
    for library in result.libraries:
        table.add_row(library.name, library.version or "not installed", "")
    yield table
