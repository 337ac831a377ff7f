"""The CLI runners of `tests/cli` (in-process and console script) and a writable reference brain."""

from tests.cli.conftest import brain, brain_exe, reference_brain  # noqa: F401 - fixtures
