"""The CLI runners of tests/cli, for the reconciliation's end-to-end tests."""

from tests.cli.conftest import brain, brain_exe, reference_brain  # noqa: F401 - fixtures
