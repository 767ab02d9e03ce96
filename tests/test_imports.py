"""Import only what a command needs: importing the package loads none of scipy, plotly,
pandas or Streamlit, and the everyday `eval` path none of scipy, plotly or Streamlit (each
costs a few hundred milliseconds of start-up on every call).

pandas does arrive on the `eval` path, imported by pyarrow itself: pyarrow 2x imports it
on the first conversion between Arrow and numpy (``to_numpy``, ``pa.array(ndarray)``),
which every reader does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"

_PROBE = """
import sys
{code}
heavy = sorted(m for m in ("scipy", "plotly", "pandas", "streamlit") if m in sys.modules)
print(",".join(heavy))
"""


def _loaded_after(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE.format(code=code)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return [m for m in done.stdout.strip().split(",") if m]


def test_importing_the_package_loads_no_heavy_module() -> None:
    assert _loaded_after("import ireval_core") == []


def test_the_eval_command_loads_no_heavy_module() -> None:
    code = (
        "from ireval_core import cli\n"
        "import io\n"
        f"status = cli.main(['eval', r'{SAMPLE / 'qrels.txt'}', r'{SAMPLE / 'run_bm25.txt'}',"
        " '-m', 'map', '-m', 'ndcg_cut_10', '-m', 'P@10', '-m', 'bpref', '-q'],"
        " out=io.StringIO())\n"
        "assert status == 0\n"
    )
    assert _loaded_after(code) in ([], ["pandas"])  # pandas: pyarrow's own import


def test_intervals_still_work_when_asked_for() -> None:
    code = (
        "from ireval_core import Qrels, Run, evaluate\n"
        "q = Qrels.from_dict({'a': {'d': 1}, 'b': {'d': 1}})\n"
        "r = Run.from_dict({'a': {'d': 1.0}, 'b': {'e': 1.0}}, name='r')\n"
        "low, high = evaluate(q, r, ['P@1']).intervals()\n"
        "assert low.loc['r', 'P@1'] == 0.0\n"
    )
    assert _loaded_after(code) == ["pandas", "scipy"]
