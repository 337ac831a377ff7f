"""Every artifact problem code `oci/` can report is documented in the README with a meaning and a fix."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE_PREFIXES = ("manifest", "config", "layer", "module-layer", "history", "annotation")


def _codes_in_source() -> set[str]:
    pattern = re.compile(r'"((?:%s)-[a-z-]+)"' % "|".join(CODE_PREFIXES))
    codes: set[str] = set()
    for path in (ROOT / "oci").glob("*.py"):
        codes.update(pattern.findall(path.read_text(encoding="utf-8")))
    return codes


def test_every_artifact_code_is_in_the_readme_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z-]+)` \| [^|]+\| [^|]+\|$", readme, flags=re.MULTILINE))
    codes = _codes_in_source()
    assert len(codes) > 15, "the pattern no longer finds the artifact codes"
    assert codes - documented == set()
