"""Settings for the whole test session."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# The app saves uploads to a workspace; tests never touch a real one (the default is
# data/workspace.db in the repository). Tests that need their own set IREVAL_WORKSPACE.
_WORKSPACE = Path(tempfile.mkdtemp(prefix="ireval-test-workspace-")) / "workspace.db"
os.environ["IREVAL_WORKSPACE"] = str(_WORKSPACE)
os.environ.pop("IREVAL_DATA_DIR", None)  # the app opens the bundled sample in tests

# trec_eval 10.0 built from source once per session (see tests/trec_eval_oracle.py)
from trec_eval_oracle import trec_eval_10, trec_eval_10_precise  # noqa: E402, F401
