"""The hostile suite: what an attacker or an unlucky operator hands the CLI and the servers (issue #24).

Every test here runs against the real entry points (the `brain` console script or `cli.main.main`, a real
`brain serve` process) on a private copy of the reference brain, and stays small: the whole suite is meant
to run in well under a minute on two cores.
"""

from __future__ import annotations

from tests.cli.conftest import (  # noqa: F401 - fixtures shared with the CLI tests
    BrainRunner,
    Run,
    assert_one_line_error,
    brain,
    brain_exe,
    reference_brain,
)
