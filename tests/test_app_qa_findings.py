"""What an exploratory QA pass through the app found, as AppTests that assert values.

Each test is one finding, reproduced as a relevance team met it (their own files, page
after page) and asserted on the numbers and messages the pages show, across visits.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_core import EvalOptions, evaluate
from ireval_core.io import read_qrels, read_runs

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")


def _upload(at: AppTest, qrels: tuple[str, bytes], runs: list[tuple[str, bytes]]) -> AppTest:
    at.radio(key=state.SOURCE).set_value("upload").run()
    at.file_uploader(key=state.QRELS_UPLOADER).set_value((*qrels, "text/plain"))
    at.file_uploader(key=state.RUNS_UPLOADER).set_value(
        [(name, data, "text/plain") for name, data in runs])
    return at.run()


def _visit(at: AppTest, page: str) -> AppTest:
    return at.switch_page("app.py" if page == "data" else f"pages/{page}.py").run()


def _leading(cell: str) -> float:
    match = re.match(r"\s*(-?\d+\.\d+)", cell)
    assert match, cell
    return float(match[1])


def _msmarco() -> tuple[bytes, bytes]:
    """The sample's qrels and neural run with MS MARCO's ids (numbers), the qrels
    tab-separated as in ``qrels.dev.small.tsv``."""
    qids: dict[str, str] = {}
    qrels = []
    for line in (SAMPLE / "qrels.txt").read_text().splitlines():
        q, _, d, r = line.split()
        qid = qids.setdefault(q, str(1048585 + 7919 * len(qids)))
        qrels.append(f"{qid}\t0\t{int(d[1:]) * 11 + 7}\t{r}")
    run = [f"{qids[q]} Q0 {int(d[1:]) * 11 + 7} {rank} {score} msmarco-run"
           for q, _, d, rank, score, _tag in (line.split() for line in
                                              (SAMPLE / "run_neural.txt").read_text()
                                              .splitlines()) if q in qids]
    return ("\n".join(qrels) + "\n").encode(), ("\n".join(run) + "\n").encode()


def test_ms_marco_qrels_named_tsv_are_read_and_evaluated_on_every_visit() -> None:
    """``qrels.dev.small.tsv`` (TREC lines, tabs, no header) was refused on the Data page:
    "missing column(s) in header ['1048585 0 1467110 0']"."""
    qrels, run = _msmarco()
    expected = evaluate(read_qrels(qrels, name="qrels.dev.small.tsv"),
                        read_runs(run, name="run.msmarco-passage.dev.txt"),
                        ["nDCG@10", "AP"], options=EvalOptions())
    at = AppTest.from_file(APP, default_timeout=60).run()
    _upload(at, ("qrels.dev.small.tsv", qrels), [("run.msmarco-passage.dev.txt", run)])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert {m.label: m.value for m in at.metric}["Queries in qrels"] == "59"
    for page in ("metrics", "compare", "data", "metrics"):
        _visit(at, page)
        assert not at.exception and not at.error, page
        if page == "metrics":
            table = at.table[0].value
            for m in ("nDCG@10", "AP"):
                assert _leading(table.loc["msmarco-run", m]) == pytest.approx(
                    expected.mean("msmarco-run", m), abs=5e-5)
            assert "Queries averaged: msmarco-run 59" in " ".join(c.value for c in at.caption)


def test_an_excel_qrels_upload_is_read() -> None:
    """An .xlsx of qrels was refused as 'a zip archive ... (extract it first)', then with
    how to save it as CSV; its first sheet is read now (``qid`` is the query column, the
    Chinese query text beside it is left alone). Means: tests/test_app_xlsx.py."""
    openpyxl = pytest.importorskip("openpyxl")
    import io

    book = openpyxl.Workbook()
    book.active.append(["qid", "query", "docid", "rel"])
    book.active.append(["q001", "如何办理护照", "d0133373", 1])
    buffer = io.BytesIO()
    book.save(buffer)
    at = AppTest.from_file(APP, default_timeout=60).run()
    _upload(at, ("qrels.xlsx", buffer.getvalue()),
            [("run_bm25.txt", (SAMPLE / "run_bm25.txt").read_bytes())])
    assert not at.exception
    assert not at.error
    counts = {m.label: m.value for m in at.metric}
    assert (counts["Queries in qrels"], counts["Judgments"]) == ("1", "1")


def _queries_note(at: AppTest) -> str:
    [note] = [c.value for c in at.caption if "Each run's own" in c.value]
    return note.replace("\\", "")  # Markdown escapes


def test_the_queries_page_shows_the_means_it_explains_the_same_on_every_visit() -> None:
    """The Queries page ("from the means to the queries behind them") showed no mean at
    all, while its definition ended "arithmetic mean over queries". It now shows the means
    over the listed queries (the Compare page's numbers for the pair) and each run's own
    mean (the Metrics page's), each with its queries, and they hold across visits."""
    from ireval_app.keys import queries as keys

    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    res = evaluate(qrels, runs, ["nDCG@10"])
    _, va, vb = res.paired("nDCG@10", "bm25", "narrow_recall")
    assert (len(va), f"{va.mean():.4f}", f"{vb.mean():.4f}") == (58, "0.5364", "0.1611")
    assert f"{res.mean('bm25', 'nDCG@10'):.4f}" == "0.5354"
    pair = ("Means over these 58 queries: bm25 0.5364, narrow_recall 0.1611, B − A -0.3753. "
            "Each run's own nDCG@10 (Metrics page; arithmetic mean over queries): bm25 0.5354 "
            "over 59 queries, narrow_recall 0.1611 over 58 queries.")
    at = AppTest.from_file(APP, default_timeout=60).run()
    for page in ("queries", "metrics", "compare", "curves", "queries"):
        _visit(at, page)
        assert not at.exception, page
        if page == "queries":
            assert _queries_note(at) == pair
        elif page == "metrics":
            assert at.table[0].value.loc["bm25", "nDCG@10"].startswith("0.5354")
        elif page == "compare":  # the pair's means over the queries every run shares
            frame = at.dataframe[0].value
            row = frame[(frame["system_a"] == "bm25") & (frame["system_b"] == "narrow_recall")
                        & (frame["test"] == "t")].iloc[0]
            assert (f"{row['mean_a']:.4f}", f"{row['mean_b']:.4f}", row["n"]) == (
                "0.5364", "0.1611", 58)
    at.selectbox(key=keys.RUN_B).set_value("neural_rerank").run()
    _, va, vb = res.paired("nDCG@10", "bm25", "neural_rerank")
    diff = f"{(vb - va).mean():+.4f}"  # +0.2458: the means' difference before rounding
    assert _queries_note(at).startswith("Means over these 59 queries: bm25 0.5354, "
                                        f"neural_rerank 0.7813, B − A {diff}.")
    _visit(at, "metrics")
    _visit(at, "queries")
    assert at.selectbox(key=keys.RUN_B).value == "neural_rerank"  # the choice is kept
    assert "bm25 0.5354 over 59 queries, neural_rerank 0.7813 over 59" in _queries_note(at)


def test_ndcg_vs_dcg_says_which_queries_its_means_average() -> None:
    """The nDCG vs DCG table of means did not say which queries they average (narrow_recall
    58, the others 59); it now says so as the Metrics page does, visit after visit."""
    said = "Queries averaged: bm25 59, narrow_recall 58, neural_rerank 59."
    at = AppTest.from_file(APP, default_timeout=60).run()
    for page in ("ndcg_vs_dcg", "metrics", "data", "ndcg_vs_dcg"):
        _visit(at, page)
        assert not at.exception, page
        captions = " ".join(c.value for c in at.caption).replace("\\", "")
        assert (said in captions) == (page != "data"), page
        if page == "ndcg_vs_dcg":
            assert f"{at.dataframe[0].value.loc['bm25', 'nDCG@10']:.4f}" == "0.5354"
            assert at.dataframe[1].value["DCG@rank"].round(4).tolist() == [
                1.0, 1.6309, 1.6309, 1.6309]  # the worked example's column, whole


def test_trend_planning_says_its_mean_is_unweighted() -> None:
    """Trend's planning table headed "Mean DCG@10" 9.8733 for control in 2026-10, a round
    the trend above shows at DCG@10 10.2605: the first counts every query once, the second
    weights them by the query weight, and neither said so. The header now says
    "Unweighted", and its number is the trend's unweighted mean, on every visit."""
    import json

    from ireval_core.labels import read_judgments, trend

    j = read_judgments(sorted((SAMPLE / "labels").glob("labels_*.csv")))
    table = trend(j, k=10, n_resamples=200).table.set_index(["round", "system"])
    at = AppTest.from_file(APP, default_timeout=90).run()
    for page in ("labels_trend", "labels_raters", "labels_trend"):
        _visit(at, page)
        assert not at.exception, page
        if page != "labels_trend":
            continue
        # a table too wide for 1280 px is drawn in parts (ireval_app.fit), each the whole frame
        plan, *parts = [d for d in at.dataframe if "queries_needed" in d.value.columns]
        assert all(p.value.equals(plan.value) for p in parts)
        assert json.loads(plan.proto.columns)["mean"]["label"] == "Unweighted mean DCG@10"
        for row in plan.value.itertuples():
            assert row.mean == pytest.approx(table.loc[(row.round, row.system), "dcg_unweighted"],
                                             rel=1e-12)
            weighted = table.loc[(row.round, row.system), "dcg"]
            assert abs(row.mean - weighted) > 0.3  # 9.8733 vs 10.2605 for control
        caption = " ".join(c.value for c in at.caption)
        assert "every query counted once (the trend's means are weighted" in caption


def test_meeting_says_why_its_buttons_are_greyed_out() -> None:
    """With qrels and no run, both Meeting buttons were greyed out under "0 run(s)" with
    nothing saying what to do; with one run the memo was greyed out unexplained."""
    qrels = (SAMPLE / "qrels.txt").read_bytes()
    at = AppTest.from_file(APP, default_timeout=60).run()
    _upload(at, ("qrels.txt", qrels), [])
    for page in ("meeting", "metrics", "meeting"):
        _visit(at, page)
        assert not at.exception
    report, memo = at.get("download_button")
    assert report.proto.disabled and memo.proto.disabled
    [info] = at.info
    assert info.value.startswith("No runs loaded yet: the report and the memo need run files")
    _visit(at, "data")
    at.file_uploader(key=state.RUNS_UPLOADER).set_value(
        [("run_bm25.txt", (SAMPLE / "run_bm25.txt").read_bytes(), "text/plain")])
    at.run()
    _visit(at, "meeting")
    report, memo = at.get("download_button")
    assert not report.proto.disabled and memo.proto.disabled
    assert not at.info
    assert any(c.value.startswith("The decision memo compares runs: it needs at least two")
               for c in at.caption)


def test_metric_lab_calls_only_the_loaded_data_the_sample() -> None:
    """The Metric lab said "Sample data: these numbers are from the bundled synthetic sample"
    above a worked example from the seeds (not the sample) and a typed list (the user's)."""
    from ireval_app.keys import lab as lab_keys

    at = AppTest.from_file(APP, default_timeout=60).run()
    for page in ("lab", "metrics", "lab"):
        _visit(at, page)
        assert not at.exception
    assert not [i for i in at.info if "Sample data" in i.value]
    assert at.info[0].value.startswith("**Seed 0**")  # the worked example, AP = 0.7222
    assert {m.label: m.value for m in at.metric}["AP"] == "0.7222"
    at.radio(key=lab_keys.SOURCE).set_value("typed").run()
    assert not [i for i in at.info if "Sample data" in i.value]
    at.radio(key=lab_keys.SOURCE).set_value("query").run()
    assert "Sample data" in at.info[0].value  # a query of a sample run: the sample's


def test_curves_say_which_queries_the_interpolated_precision_averages() -> None:
    """The 11-point curve is a mean over queries; its caption said "averaged over the
    evaluated queries" without saying which (narrow_recall has 58, the others 59): it now
    counts them as the Metrics page does, the same after a change of option and back."""
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    at = AppTest.from_file(APP, default_timeout=60).run()
    for rel in (1.0, 2.0, 1.0):
        res = evaluate(qrels, runs, ["P@10"], options=EvalOptions(rel_level=rel))
        counts = ", ".join(f"{s} {len(res.averaged(s, 'P@10'))}" for s in res.systems)
        _visit(at, "curves")
        if at.session_state[state.OPTION_KEYS["rel_level"]] != rel:
            at.number_input(key=state.OPTION_KEYS["rel_level"]).set_value(rel).run()
        assert not at.exception
        captions = " ".join(c.value for c in at.caption).replace("\\", "")
        assert f"Queries averaged: {counts}." in captions
        _visit(at, "metrics")
        assert f"Queries averaged: {counts}." in " ".join(
            c.value for c in at.caption).replace("\\", "")
    assert counts == "bm25 59, narrow_recall 58, neural_rerank 59"


def test_label_changes_shows_where_the_change_comes_from_first() -> None:
    """At 1280 px the decomposition table scrolls sideways, and its answer (the change,
    from the lists, from the labels) was its last columns, out of sight: they come first."""
    at = AppTest.from_file(APP, default_timeout=90).run()
    for page in ("labels_changes", "labels_trend", "labels_changes"):
        _visit(at, page)
        assert not at.exception
    frame = at.dataframe[0]
    assert frame.value.columns.tolist()[:4] == ["system", "total", "from_lists", "from_labels"]
    row = frame.value.set_index("system").loc["treatment"]
    assert row["total"] == pytest.approx(row["dcg_new"] - row["dcg_old"], abs=1e-12)
    assert row["total"] == pytest.approx(row["from_lists"] + row["from_labels"], abs=1e-12)


def test_every_page_says_which_uploaded_files_were_left_out() -> None:
    """Three runs uploaded, two of them broken: the Data page named them, but Metrics,
    Compare and the rest showed one run's numbers with nothing saying two were dropped."""
    good = (SAMPLE / "run_neural.txt").read_bytes()
    bm25 = (SAMPLE / "run_bm25.txt").read_text().splitlines()
    broken = "\n".join(bm25[:41] + ["q001 Q0 d9999999 42 11.5"] + bm25[42:]) + "\n"
    at = AppTest.from_file(APP, default_timeout=60).run()
    _upload(at, ("qrels.txt", (SAMPLE / "qrels.txt").read_bytes()),
            [("run_broken.txt", broken.encode()), ("run_neural.txt", good),
             ("run_empty.txt", b"\n")])
    assert [e.value for e in at.error][0].startswith("**Could not read `run_broken.txt:42`**")
    expected = evaluate(read_qrels(SAMPLE / "qrels.txt"), read_runs(good, name="n"),
                        ["nDCG@10"])
    for page in ("metrics", "compare", "queries", "data", "metrics"):
        _visit(at, page)
        assert not at.exception
        [left_out] = [w.value for w in at.sidebar.warning]
        assert left_out == ("2 file(s) could not be read and are left out: `run_broken.txt`, "
                            "`run_empty.txt` (the Data page says why).")
        if page == "metrics":
            table = at.table[0].value
            assert table.index.tolist() == ["neural_rerank"]
            assert _leading(table.loc["neural_rerank", "nDCG@10"]) == pytest.approx(
                expected.mean("neural_rerank", "nDCG@10"), abs=5e-5)


def test_visiting_model_judge_does_not_make_a_person_the_judge() -> None:
    """With the user's own labeling files (three people, no model), opening the Model judge
    page marked the last rater, chen, as the judge: the Trend then left chen out, and its
    DCG@10 of control in 2026-08 went from 10.3010 (3 raters) to 9.0389 (2) with no choice
    made. No rater is marked now until the user picks one."""
    from ireval_app.keys import labeling
    from ireval_app.keys import labels_data as data_keys

    files = [(p.name, p.read_bytes(), "text/csv")
             for p in sorted((SAMPLE / "labels").glob("labels_2026-0[89].csv"))]
    at = AppTest.from_file(APP, default_timeout=90).run()
    _visit(at, "labels_data")
    at.radio(key=data_keys.SOURCE).set_value("upload").run()
    at.file_uploader(key=data_keys.UPLOADER).set_value(files).run()

    def control_0826() -> tuple[str, int]:
        _visit(at, "labels_trend")
        assert not at.exception
        f = next(d.value for d in at.dataframe if "dcg" in d.value.columns).set_index(
            ["round", "system"])
        return f"{f.loc[('2026-08', 'control'), 'dcg']:.4f}", int(
            f.loc[("2026-08", "control"), "raters"])

    assert control_0826() == ("10.3010", 3)
    for _ in range(2):
        _visit(at, "labels_judge")
        assert not at.exception
        assert at.selectbox(key=labeling.JUDGE).value is None
        assert at.info[-1].value.startswith("No rater is marked as a model judge.")
        _visit(at, "labels_raters")
        assert control_0826() == ("10.3010", 3)  # the same number after the visit
    _visit(at, "labels_judge")
    at.selectbox(key=labeling.JUDGE).set_value("chen").run()  # an explicit choice
    assert not at.exception
    assert control_0826() == ("9.0389", 2)


def test_the_data_page_says_how_the_query_metadata_file_was_read() -> None:
    """A query metadata file uploaded on the Data page was not mentioned there at all:
    one that could not be read (a query twice) made the Metrics page's "Split the means
    by" disappear without a word; one saved by Excel in GBK read fine but said nothing."""
    lines = (SAMPLE / "query_metadata.csv").read_text().splitlines()
    segment = lines[0].split(",").index("segment")
    names = {"head": "头部查询", "torso": "中部查询", "tail": "长尾查询"}
    rows = [lines[0]] + [",".join(names.get(c, c) if i == segment else c
                                  for i, c in enumerate(line.split(","))) for line in lines[1:]]
    gbk = ("\r\n".join(rows) + "\r\n").encode("gbk")
    for data, fine in ((gbk, True), (b"query,segment\nq001,head\nq001,tail\n", False)):
        at = AppTest.from_file(APP, default_timeout=60).run()
        _upload(at, ("qrels.txt", (SAMPLE / "qrels.txt").read_bytes()),
                [("run_bm25.txt", (SAMPLE / "run_bm25.txt").read_bytes())])
        at.file_uploader(key=state.METADATA_UPLOADER).set_value(
            ("meta.csv", data, "text/csv")).run()
        assert not at.exception
        text = " ".join(m.value for m in at.markdown)
        errors = [e.value for e in at.error]
        if fine:
            assert ("`meta.csv`: query metadata: 59 queries; categorical columns segment, "
                    "intent, language, weights from traffic; latencies of 3 system(s)") in text
            assert any("meta.csv" in w.value and "GB18030" in w.value for w in at.warning)
            assert not errors
            _visit(at, "metrics")
            from ireval_app.keys import metrics as metrics_keys

            at.selectbox(key=metrics_keys.SPLIT).set_value("segment").run()
            split = " ".join(c.value for c in at.caption)
            assert "头部查询 10; 中部查询 20; 长尾查询 28" in split
        else:
            [error] = errors
            assert error.startswith("**Could not read `meta.csv:3`**"), error
            assert "q001" in error
