"""What a brain manifest's annotations must say, given what its config and layers hold (§6.1, §6.2).

Pure logic shared by `pull` (which refuses an artifact whose annotations lie) and `verify --tag` (which
reports the same findings as problems), so the two can never disagree about one artifact. Each check
returns a one-line description of the lie, or None.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from brain.identity import OciDigest, canonicalize
from brain.snapshot import TrustRoot
from oci import media_types as mt
from oci.manifest import Descriptor, Manifest


def source_snapshot_lie(manifest: Manifest, source: OciDigest) -> str | None:
    """The `source-snapshot` annotation must name the snapshot the config is (or projects)."""
    stated = manifest.annotations.get(mt.SOURCE_SNAPSHOT)
    if stated == str(source):
        return None
    kind = "snapshot config" if manifest.config.mediaType == mt.SNAPSHOT_CONFIG else "projection's source"
    return f"source-snapshot {stated} is not the {kind} {source}"


def trust_root_lies(manifest: Manifest, trust_root: TrustRoot | None) -> list[str]:
    """`protocol-version` is 2 exactly with a trust root, and `trust-root` names its digest."""
    lies: list[str] = []
    if manifest.annotations.get(mt.PROTOCOL_VERSION) != ("2" if trust_root is not None else "1"):
        lies.append("protocol-version does not match the snapshot's trust root")
    stated = manifest.annotations.get(mt.TRUST_ROOT)
    expected = None if trust_root is None else str(trust_root.digest)
    if stated != expected:
        lies.append(f"trust-root is {stated}, the snapshot's trust root is {expected}")
    return lies


def snapshot_count_lie(layer: Descriptor, count: int) -> str | None:
    """The history layer's `snapshot-count` must equal its number of `snapshots/` members."""
    claimed = layer.annotation(mt.SNAPSHOT_COUNT)
    return None if claimed == str(count) else f"snapshot-count says {claimed}, the layer has {count}"


def schema_versions_lie(
    manifest: Manifest, found: Mapping[str, Iterable[int]], checked: Iterable[str] | None = None
) -> str | None:
    """`schema-versions` must list each module's distinct block schema versions (empty modules omitted).

    `checked` names the modules whose blocks were read (a selective install reads only some); None means
    every module was, and the whole annotation must then match exactly.
    """
    actual = {name: sorted(set(versions)) for name, versions in found.items() if versions}
    stated_text = manifest.annotations.get(mt.SCHEMA_VERSIONS)
    if checked is None:
        if stated_text == canonicalize(actual).decode():
            return None
        return f"schema-versions is {stated_text!r}, the layers hold {canonicalize(actual).decode()}"
    try:
        stated = json.loads(stated_text or "")
    except ValueError:
        return f"schema-versions is {stated_text!r}, not a JSON object"
    if not isinstance(stated, dict):
        return f"schema-versions is {stated_text!r}, not a JSON object"
    for name in checked:
        if stated.get(name) != actual.get(name):
            return f"schema-versions says {name} holds {stated.get(name)}, its layer holds {actual.get(name)}"
    return None
