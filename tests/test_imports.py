"""Import only what a command needs: importing the package loads none of scipy, plotly,
pandas or Streamlit, and the everyday `eval` path none of scipy, plotly or Streamlit (each
costs a few hundred milliseconds of start-up on every call).

pyarrow would import pandas itself on the first conversion between Arrow and numpy
(``to_numpy``, ``pa.array(ndarray)``, a Python scalar in a compute call); the readers and
the join convert through the arrays' buffers instead (``ireval_core._arrow``), so the
`eval` command loads no pandas either, in every output format and with every option.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("extra", [
    ["-m", "map", "-m", "ndcg_cut_10", "-m", "P@10", "-m", "bpref", "-q"],
    ["-c", "-J", "-M", "100", "-l", "2", "-m", "all_trec", "-q"],  # IPrec, options
    ["-m", "map", "--format", "csv", "-q"],
    ["-m", "P@10", "--format", "json", "-q"],
])
def test_the_eval_command_loads_no_heavy_module(extra: list[str]) -> None:
    runs = [str(SAMPLE / "run_bm25.txt"), str(SAMPLE / "run_neural.txt")]
    code = (
        "from ireval_core import cli\n"
        "import io\n"
        f"status = cli.main(['eval', r'{SAMPLE / 'qrels.txt'}', *{runs!r}, *{extra!r}],"
        " out=io.StringIO())\n"
        "assert status == 0\n"
    )
    assert _loaded_after(code) == []


def test_csv_inputs_load_no_heavy_module_either(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.csv", tmp_path / "run.csv"
    qrels.write_text("qid,docid,rel\nq1,d1,1\nq1,d2,0\nq2,d3,2\n")
    run.write_text("qid,docid,score,tag\nq1,d1,0.5,a\nq1,d2,0.7,a\nq2,d3,0.1,a\n"
                   "q1,d1,0.1,b\n")
    code = (
        "from ireval_core import cli\n"
        "import io\n"
        f"status = cli.main(['eval', r'{qrels}', r'{run}', '-m', 'map', '-q'],"
        " out=io.StringIO())\n"
        "assert status == 0\n"
    )
    assert _loaded_after(code) == []


def test_intervals_still_work_when_asked_for() -> None:
    code = (
        "from ireval_core import Qrels, Run, evaluate\n"
        "q = Qrels.from_dict({'a': {'d': 1}, 'b': {'d': 1}})\n"
        "r = Run.from_dict({'a': {'d': 1.0}, 'b': {'e': 1.0}}, name='r')\n"
        "low, high = evaluate(q, r, ['P@1']).intervals()\n"
        "assert low.loc['r', 'P@1'] == 0.0\n"
    )
    assert _loaded_after(code) == ["pandas", "scipy"]
