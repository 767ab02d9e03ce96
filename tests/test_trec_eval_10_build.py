"""The trec_eval 10.0 oracle itself: built from source, it prints NIST's expected outputs.

Every command of the quicktest table in ``../shared/conformance/trec_eval-10.0/README.md``
(its Makefile's ``quicktest``: 12 commands and 3 variants reading the same data with comment
lines) is run with the binary the ``trec_eval_10`` fixture built, in the conformance folder,
and its output compared byte for byte with the expected file. A failure here means the
oracle build is wrong, not ireval.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trec_eval_oracle import CONFORMANCE_10, quicktest_commands, run

if not (CONFORMANCE_10 / "README.md").is_file():
    pytest.skip(f"trec_eval 10.0 conformance files not found at {CONFORMANCE_10}",
                allow_module_level=True)

COMMANDS = quicktest_commands()


def test_readme_table_lists_the_makefile_quicktest() -> None:
    """12 rows and 3 "also with" variants: the 15 diffs of trec_eval 10.0's quicktest."""
    assert len(COMMANDS) == 15
    assert len({c.expected for c in COMMANDS}) == 12
    assert all((CONFORMANCE_10 / c.expected).is_file() for c in COMMANDS)
    assert all((CONFORMANCE_10 / a).is_file() for c in COMMANDS for a in c.args[-2:])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: f"{c.expected}[{c.args[-2]}]")
def test_built_binary_reproduces_quicktest(trec_eval_10: Path, command) -> None:
    printed = run(trec_eval_10, list(command.args), cwd=CONFORMANCE_10)
    assert printed == (CONFORMANCE_10 / command.expected).read_text(encoding="utf-8")
