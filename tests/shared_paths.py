"""Where the protocol's shared material (spec fixtures) lives: beside the repository, as CI lays it out.

CI clones the repository into a folder with a copy of `shared/` beside it; a developer's checkout sits in
`/work/main` next to `/work/shared`. `BRAIN_SHARED_DIR` overrides both.
"""

from __future__ import annotations

import os
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]


def _shared_dir() -> Path:
    override = os.environ.get("BRAIN_SHARED_DIR")
    candidates = [Path(override)] if override else []
    candidates += [_REPO.parent / "shared", Path("/work/shared")]
    return next((c for c in candidates if (c / "fixtures" / "reference-brain").is_dir()), candidates[0])


SHARED_DIR = _shared_dir()
REFERENCE_BRAIN = SHARED_DIR / "fixtures" / "reference-brain"
REFERENCE_BLOBS = REFERENCE_BRAIN / "blobs" / "sha256"
