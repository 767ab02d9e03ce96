"""AppTest of the Metrics page's preference and judgment-group measures.

The page computes them from the loaded qrels as trec_eval ``-R qrels_prefs`` / ``-R qrels_jg``
does; the expected values here come from the CLI's own readers of the same file
(``read_prefs(kind="qrels_prefs")``, ``read_qrels_jg``), the path tested against trec_eval
10.0 (test_preferences, test_judgment_groups), not from the app's derivation.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import evaluation, prefs_and_groups_glue
from ireval_app.keys import metrics as keys
from ireval_core.io import read_qrels, read_runs
from ireval_core.io.prefs import read_prefs
from ireval_core.io.qrels_jg import read_qrels_jg
from ireval_core.judgment_groups import evaluate_judgment_groups
from ireval_core.measures import parse_measure
from ireval_core.preferences import evaluate_preferences

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")

PREFS = ["PrefSimp", "PrefPair", "PrefAvgJG", "PrefSimpRet", "NumPrefs", "NumPrefsFulRet"]
GROUPS = ["APAvgJG", "PAvgJG@10", "RprecAvgJG(mult=0.2)"]


@pytest.fixture
def grouped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sample with its qrels' second column set to one of three judgment groups per
    line (seeded), opened as ``IREVAL_DATA_DIR``."""
    rng = random.Random(19)
    lines = []
    for line in (SAMPLE / "qrels.txt").read_text().splitlines():
        qid, _, doc, rel = line.split()
        lines.append(f"{qid} {rng.choice('ABC')} {doc} {rel}\n")
    (tmp_path / "qrels.txt").write_text("".join(lines))
    for run in sorted(SAMPLE.glob("run_*.txt")):
        (tmp_path / run.name).write_bytes(run.read_bytes())
    monkeypatch.setenv("IREVAL_DATA_DIR", str(tmp_path))
    return tmp_path


def _runs(folder: Path) -> list:
    return [r for p in sorted(folder.glob("run_*.txt")) for r in read_runs(p)]


def _leading(cell: str) -> float:
    match = re.match(r"\s*(-?\d+\.\d+)", cell)
    assert match, cell
    return float(match[1])


def _metrics(measures: list[str], typed: str = "") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/metrics.py").run()
    at.multiselect(key=keys.MEASURES).set_value(measures)
    at.text_input(key=keys.EXTRA).set_value(typed).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def _check(table, res) -> None:
    assert list(table.columns) == [str(m) for m in res.measures]
    assert sorted(table.index) == sorted(res.systems)
    for system in res.systems:
        for m in res.measures:
            want = res.mean(system, m)
            assert _leading(table.loc[system, str(m)]) == pytest.approx(want, abs=5e-5), (
                system, str(m))


def test_grouped_qrels_give_trec_eval_values(grouped: Path) -> None:
    # the picker's choices, and a measure typed by its trec_eval name
    at = _metrics(["P@10", *PREFS, *GROUPS[:2]], typed="Rprec_mult_avgjg_0.20")
    runs = _runs(grouped)
    assert read_qrels(grouped / "qrels.txt").groups is not None  # the groups were kept
    prefs = evaluate_preferences(read_prefs(grouped / "qrels.txt", kind="qrels_prefs"), runs,
                                 PREFS)
    groups = evaluate_judgment_groups(read_qrels_jg(grouped / "qrels.txt"), runs, GROUPS)
    assert len(at.table) == 3  # the qrels measures, the preference ones, the group ones
    assert list(at.table[0].value.columns) == ["P@10"]
    _check(at.table[1].value, prefs)
    _check(at.table[2].value, groups)
    # three groups: the per-group mean is not P@10 on the qrels taken as one
    for system in runs:
        assert _leading(at.table[2].value.loc[system.name, "PAvgJG@10"]) < _leading(
            at.table[0].value.loc[system.name, "P@10"])
    subheaders = [s.value for s in at.subheader]
    assert "Preference measures" in subheaders and "Judgment-group measures" in subheaders
    text = " ".join(m.value for m in at.markdown)
    for m in [*PREFS, *GROUPS]:
        spec = str(parse_measure(m))
        assert re.sub(r"\\(.)", r"\1", text).count(f"**{spec}**:") == 1
    shown = re.sub(r"\\(.)", r"\1", text)
    assert prefs.definition("PrefSimp") in shown and groups.definition("APAvgJG") in shown
    assert "needs preference judgments: -R prefs" in shown
    assert "needs judgments in judgment groups: -R qrels_jg" in shown


def test_sample_with_only_preference_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    """One judgment group (the sample's iter is 0 on every line): no qrels measure chosen,
    the preference table alone; PrefAvgJGRnonrel, undefined in trec_eval on these grades
    (levels below 0), is an error on the page, not a traceback."""
    at = _metrics(["PrefSimp", "NumPrefs"])
    runs = _runs(SAMPLE)
    want = evaluate_preferences(read_prefs(SAMPLE / "qrels.txt", kind="qrels_prefs"), runs,
                                ["PrefSimp", "NumPrefs"])
    assert len(at.table) == 1
    _check(at.table[0].value, want)
    assert want.mean("bm25", "NumPrefs") == 29754.0  # summed over queries
    assert any("(NumPrefs: the sum over queries)" in c.value for c in at.caption)
    at.multiselect(key=keys.MEASURES).set_value(["PrefAvgJGRnonrel", "AP"]).run()
    assert not at.exception
    assert [e.value for e in at.error] and "reads past its data" in at.error[0].value
    assert list(at.table[0].value.columns) == ["AP"]


def test_other_pages_refuse_them_saying_where_they_are() -> None:
    specs, errors = evaluation.parse_specs(["AP", "prefs_simp", "map_avgjg"])
    assert specs == ("AP",)
    assert len(errors) == 2 and all("the Metrics page shows it" in e for e in errors)
    assert "-R prefs" in errors[0] and "-R qrels_jg" in errors[1]
    specs, errors = evaluation.parse_specs(["AP", "prefs_simp"],
                                           judgments=("qrels", "prefs"))
    assert specs == ("AP", "PrefSimp") and not errors
    assert prefs_and_groups_glue.split_specs(specs) == {"qrels": ("AP",), "prefs": ("PrefSimp",),
                                                 "qrels_jg": ()}
