"""`pdf-text`: the text of a PDF, extracted by pypdf in a child process, pages joined by a form feed.

Page N of the source is the N-th form-feed-separated piece of the view, so a locator `p.3` can be
checked. PDFs are hostile input (deep nesting, decompression bombs, endless content streams), so
extraction runs in `_pdf_worker.py` under a wall-clock timeout, an address-space limit (RLIMIT_AS) and a
CPU limit; a failure becomes a coded `NormalizationError` and the PDF is still registered as bytes.
Encrypted files that the empty password opens are extracted; others are `pdf-encrypted`.
Version `1+pypdf-<x>+unicode-<y>`: pypdf decides the extracted text, NFC is applied to every page.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from importlib.metadata import version as package_version
from pathlib import Path

from ingest.normalize.base import (
    MAX_TEXT_BYTES,
    MEMORY,
    PDF_BROKEN,
    TIMEOUT,
    UNICODE_TAG,
    VANISHED,
    NormalizationError,
    NormalizedOutput,
    Pipeline,
)

WORKER = Path(__file__).with_name("_pdf_worker.py")
DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY = 1 << 30
_EXIT_FAILED = 3


class PdfText(Pipeline):
    """The `pdf-text` pipeline."""

    name = "pdf-text"
    version = f"1+pypdf-{package_version('pypdf')}+{UNICODE_TAG}"

    def __init__(
        self, timeout: float = DEFAULT_TIMEOUT, memory_limit: int = DEFAULT_MEMORY, max_bytes: int = MAX_TEXT_BYTES
    ) -> None:
        self.timeout = timeout
        self.memory_limit = memory_limit
        self.max_bytes = max_bytes

    def accepts(self, media_type: str) -> bool:
        """PDF documents."""
        return media_type == "application/pdf"

    def normalize(self, source_path: Path) -> NormalizedOutput:
        """The text of the PDF at `source_path`, pages separated by `\\f`."""
        path = os.path.abspath(source_path)
        if not os.path.exists(path):
            raise NormalizationError(VANISHED, f"{source_path} was deleted before it could be normalized")
        command = [
            sys.executable, "-P", "-s", str(WORKER), path,
            str(self.max_bytes), str(self.memory_limit), str(math.ceil(self.timeout) + 1),
        ]  # fmt: skip
        # A fixed hash seed keeps any set/dict iteration inside pypdf identical from run to run.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        try:
            done = subprocess.run(command, capture_output=True, timeout=self.timeout, env=env, check=False)
        except subprocess.TimeoutExpired:
            raise NormalizationError(TIMEOUT, f"text extraction took longer than {self.timeout:g} s") from None
        if done.returncode == 0:
            return NormalizedOutput(done.stdout)
        if done.returncode == _EXIT_FAILED:
            try:
                report = json.loads(done.stdout)
                raise NormalizationError(str(report["code"]), str(report["detail"]))
            except (ValueError, KeyError, TypeError):
                pass
        if done.returncode == -signal.SIGXCPU:
            raise NormalizationError(TIMEOUT, f"text extraction used more than {self.timeout:g} s of CPU")
        if done.returncode < 0:
            name = signal.Signals(-done.returncode).name
            raise NormalizationError(MEMORY, f"extractor killed by {name} (likely the memory or CPU limit)")
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise NormalizationError(PDF_BROKEN, f"extractor exited with status {done.returncode}: {last[0][:300]}")
