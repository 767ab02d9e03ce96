"""Query metadata (ireval_core.metadata): reading, segments, weights, latency, Pareto front.

Numbers are checked against hand-computed values and against independent oracles:
``evaluate`` on qrels and runs restricted to a segment's queries, ``np.average`` for
weighted means, ``stats.paired_t_test`` + ``correct_pvalues`` for per-segment tests, a
brute-force dominance check for the front. Bad-input tests read files written to disk
that really have the problem.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ireval_core import EvalOptions, FormatError, Qrels, Run, charts, evaluate, stats
from ireval_core.io import read_qrels, read_runs
from ireval_core.metadata import (
    LATENCY_DEFINITION,
    NO_METADATA,
    NO_VALUE,
    by_segment,
    compare_by_segment,
    efficiency_points,
    front_sentence,
    latency_summary,
    pareto_front,
    read_metadata,
    weighted_definition,
    weighted_mean,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
SAMPLE_META = SAMPLE / "query_metadata.csv"


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# ----------------------------------------------------------------------------- reading


def test_wide_csv(tmp_path: Path) -> None:
    path = _write(tmp_path, "meta.csv",
                  "query,segment,intent,traffic,latency_ms_bm25,neural_latency_ms\n"
                  "007,head,nav,100,12.5,80\n"
                  "q2,tail,,2.5,30,\n"
                  "1.0,torso,info,,7,90.25\n")
    m = read_metadata(path)
    assert m.source == "meta.csv" and m.layout == "wide"
    assert m.queries.tolist() == ["007", "q2", "1.0"]  # ids as written, never normalised
    assert m.columns == ("segment", "intent")
    assert m.segment("segment").tolist() == ["head", "tail", "torso"]
    assert m.segment("intent").tolist() == ["nav", None, "info"]
    assert m.segments("intent") == ("nav", "info", NO_VALUE)
    assert m.weight_column == "traffic"
    np.testing.assert_array_equal(m.weights, [100.0, 2.5, np.nan])
    assert m.systems == ("bm25", "neural")
    assert m.latency.to_dict("list") == {
        "query": ["007", "q2", "1.0", "007", "1.0"],
        "system": ["bm25", "bm25", "bm25", "neural", "neural"],
        "latency_ms": [12.5, 30.0, 7.0, 80.0, 90.25]}


def test_tsv_gzip_bom_and_aliases(tmp_path: Path) -> None:
    text = "\ufeffTopic\tLanguage\tFrequency\tLATENCY_MS_x\n01\tde\t3\t5\n02\tja\t1\t6\n"
    m = read_metadata(_write(tmp_path, "meta", gzip.compress(text.encode())))
    assert m.queries.tolist() == ["01", "02"]
    assert m.columns == ("Language",)
    assert m.weight_column == "Frequency"
    assert m.weights.tolist() == [3.0, 1.0]
    assert m.systems == ("x",)


def test_long_layout(tmp_path: Path) -> None:
    path = _write(tmp_path, "long.csv",
                  "qid,segment,weight,system,latency_ms\n"
                  "q1,head,5,bm25,10\n"
                  "q1,head,5,neural,50\n"
                  "q2,tail,1,bm25,12\n"
                  "q3,tail,,,\n")  # metadata only: no system, no latency
    m = read_metadata(path)
    assert m.layout == "long"
    assert m.queries.tolist() == ["q1", "q2", "q3"]
    assert m.columns == ("segment",)
    np.testing.assert_array_equal(m.weights, [5.0, 1.0, np.nan])
    assert m.latency.to_dict("list") == {"query": ["q1", "q1", "q2"],
                                         "system": ["bm25", "neural", "bm25"],
                                         "latency_ms": [10.0, 50.0, 12.0]}


def test_parquet(tmp_path: Path) -> None:
    table = pa.table({"query_id": ["a", "b"], "segment": ["head", None],
                      "traffic_weight": [2.0, 0.0], "latency_ms_r": [1.5, None]})
    path = tmp_path / "meta.bin"
    pq.write_table(table, path)
    m = read_metadata(path)
    assert m.queries.tolist() == ["a", "b"]
    assert m.segment("segment").tolist() == ["head", None]
    assert m.weights.tolist() == [2.0, 0.0]
    assert m.latency.to_dict("list") == {"query": ["a"], "system": ["r"], "latency_ms": [1.5]}


def test_results_are_read_only(tmp_path: Path) -> None:
    m = read_metadata(SAMPLE_META)
    for a in (m.queries, m.weights, m.latency_values, m.segment("segment")):
        assert not a.flags.writeable
    frame = m.latency
    frame.loc[0, "latency_ms"] = -1.0  # a fresh frame: the metadata is unchanged
    assert m.latency.loc[0, "latency_ms"] != -1.0
    with pytest.raises(TypeError):
        m.values["segment"] = np.array([])  # type: ignore[index]


BAD_FILES = [
    # (file name, content, expected "file:line", words in the message)
    ("dup.csv", "query,segment\nq1,head\nq2,tail\nq1,torso\n", "dup.csv:4",
     ["duplicate query 'q1'", "first at line 2"]),
    ("negative.csv", "query,traffic\nq1,3\nq2,-0.5\n", "negative.csv:3",
     ["weight >= 0", "'-0.5'"]),
    ("text_weight.csv", "query,weight\nq1,lots\n", "text_weight.csv:2", ["weight >= 0", "'lots'"]),
    ("nan_latency.tsv", "query\tlatency_ms_bm25\nq1\t4\nq2\tslow\n", "nan_latency.tsv:3",
     ["latency in ms", "'slow'"]),
    ("inf_latency.csv", "query,latency_ms_bm25\nq1,inf\n", "inf_latency.csv:2", ["'inf'"]),
    ("neg_latency.csv", "query,bm25_latency_ms\nq1,-3\n", "neg_latency.csv:2", ["'-3'"]),
    ("no_query.csv", "id,segment\n1,head\n", "no_query.csv:1", ["missing query column"]),
    ("empty_id.csv", "query,segment\nq1,head\n,tail\n", "empty_id.csv:3", ["empty query id"]),
    ("fields.csv", "query,segment\nq1,head\nq2,tail,extra\n", "fields.csv:3",
     ["expected 2 fields", "got 3"]),
    ("blank_lines.csv", "query,segment\n\nq1,head\n\nq1,tail\n", "blank_lines.csv:5",
     ["duplicate query 'q1'", "first at line 3"]),
    ("two_weights.csv", "query,weight,traffic\nq1,1,2\n", "two_weights.csv:1",
     ["two weight columns"]),
    ("dup_header.csv", "query,segment,Segment\nq1,a,b\n", "dup_header.csv:1", ["twice"]),
    ("no_system.csv", "query,latency_ms\nq1,4\n", "no_system.csv:1", ["needs a system column"]),
    ("mixed.csv", "query,system,latency_ms,latency_ms_bm25\nq1,a,1,2\n", "mixed.csv:1",
     ["both long", "wide"]),
    ("long_dup.csv", "query,system,latency_ms\nq1,a,1\nq2,a,2\nq1,a,3\n", "long_dup.csv:4",
     ["duplicate latency for query 'q1', system 'a'", "first at line 2"]),
    ("long_disagree.csv", "query,segment,system,latency_ms\nq1,head,a,1\nq1,tail,b,2\n",
     "long_disagree.csv:3", ["'tail' here but 'head' at line 2"]),
    ("long_orphan.csv", "query,system,latency_ms\nq1,,5\n", "long_orphan.csv:2",
     ["latency without a system"]),
    ("empty.csv", "", "empty.csv", ["file is empty"]),
]


@pytest.mark.parametrize("name,content,where,words", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_files_name_the_line(tmp_path: Path, name: str, content: str, where: str,
                                 words: list[str]) -> None:
    with pytest.raises(FormatError) as info:
        read_metadata(_write(tmp_path, name, content))
    assert info.value.location == where
    for w in words:
        assert w in str(info.value), str(info.value)
    if info.value.line is not None and info.value.line > 1:  # the offending line is shown
        assert info.value.text == content.split("\n")[info.value.line - 1]


def test_not_utf8(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_metadata(_write(tmp_path, "latin1.csv", "query,segment\nq1,café\n".encode("latin-1")))
    assert info.value.location == "latin1.csv:2"


def test_parquet_errors_name_the_row(tmp_path: Path) -> None:
    path = tmp_path / "dup.parquet"
    pq.write_table(pa.table({"qid": ["q1", "q2", "q1"], "traffic": [1, 2, 3]}), path)
    with pytest.raises(FormatError, match=r"dup.parquet: row 3: duplicate query 'q1' "
                                          r"\(first at row 1\)"):
        read_metadata(path)


def test_every_bad_row_at_once_up_to_100(tmp_path: Path) -> None:
    """A metadata file with 130 bad rows of four kinds: one error counting 130, holding
    the first 100 in file order (each at its line, with its text), as run files do."""
    lines = ["query,traffic,latency_ms_bm25"]
    expected = []  # (line, words) of each problem, in file order
    for i in range(200):
        q, w, lat = f"q{i}", "1", "5"
        kind = i % 6 if i < 156 else None
        if kind == 1:
            w = "-2"
        elif kind == 3:
            lat = "slow"
        elif kind == 5:
            q = ""
        lines.append(f"{q},{w},{lat}")
        line = len(lines)
        if kind in (1, 3, 5):
            expected.append((line, {1: "weight >= 0", 3: "latency in ms", 5: "empty query id"}
                             [kind]))
    lines.append("q0,1,5")  # a duplicate of line 2
    expected.append((len(lines), "duplicate query 'q0' (first at line 2)"))
    content = "\n".join(lines) + "\n"
    with pytest.raises(FormatError) as info:
        read_metadata(_write(tmp_path, "many.csv", content))
    err = info.value
    assert err.count == len(expected) == 79
    assert [p.line for p in err.problems] == [line for line, _ in expected]
    for p, (line, words) in zip(err.problems, expected, strict=True):
        assert words in p.message and p.text == lines[line - 1]
    assert str(err).startswith("many.csv:3: expected a weight >= 0") and str(err).endswith(
        "; and 78 more problems (79 in all)")
    report = err.report().splitlines()
    assert report[0] == "79 problems in many.csv; the first 20:" and len(report) == 22
    rows = list(csv.reader(io.StringIO(err.problems_csv())))
    assert len(rows) == 80 and rows[1][:2] == ["many.csv", "3"]
    # more than 100: the first 100 kept, all counted
    many = "query,traffic\n" + "".join(f"q{i},-1\n" for i in range(250))
    with pytest.raises(FormatError) as info:
        read_metadata(_write(tmp_path, "neg.csv", many))
    assert info.value.count == 250 and len(info.value.problems) == 100
    assert info.value.problems[-1].line == 101


def test_long_layout_reports_every_disagreement(tmp_path: Path) -> None:
    content = ("query,segment,traffic,system,latency_ms\n"
               "q1,head,3,a,1\nq1,tail,3,b,2\nq2,x,1,a,1\nq2,y,bad,b,2\nq2,x,1,a,3\n")
    with pytest.raises(FormatError) as info:
        read_metadata(_write(tmp_path, "long.csv", content))
    got = [(p.line, p.message.split(";")[0]) for p in info.value.problems]
    assert got == [
        (3, "query 'q1' has segment 'tail' here but 'head' at line 2"),
        (5, "expected a weight >= 0 in column 'traffic', got 'bad'"),
        (5, "query 'q2' has segment 'y' here but 'x' at line 4"),
        (6, "duplicate latency for query 'q2', system 'a' (first at line 4)")]


# ----------------------------------------------------------------------------- latency


def test_latency_summary_by_hand(tmp_path: Path) -> None:
    path = _write(tmp_path, "lat.csv", "query,latency_ms_a,latency_ms_b\n"
                  "q1,10,1\nq2,20,\nq3,30,3\nq4,40,\nq5,100,\n")
    s = latency_summary(read_metadata(path)).set_index("system")
    # a = 10 20 30 40 100 (n = 5): p at position p/100 * 4 of the sorted values
    a = s.loc["a"]
    assert a["queries"] == 5
    assert a["p50"] == pytest.approx(30.0)                  # position 2
    assert a["p95"] == pytest.approx(40 + 0.8 * 60)         # position 3.8 -> 88
    assert a["p99"] == pytest.approx(40 + 0.96 * 60)        # position 3.96 -> 97.6
    assert a["mean"] == pytest.approx(40.0)
    assert a["qps"] == pytest.approx(25.0)                  # 1000 / 40
    b = s.loc["b"]                                          # b = 1 3 (n = 2)
    assert b["queries"] == 2
    assert b["p50"] == pytest.approx(2.0)
    assert b["p95"] == pytest.approx(1 + 0.95 * 2)
    assert b["qps"] == pytest.approx(500.0)


def test_latency_summary_systems_and_definition() -> None:
    m = read_metadata(b"query,latency_ms_a\nq1,0\n")
    s = latency_summary(m, systems=["z", "a"])
    assert s["system"].tolist() == ["z", "a"]
    assert s.loc[0, "queries"] == 0 and math.isnan(s.loc[0, "p95"])
    assert s.loc[1, "qps"] == math.inf  # a mean of 0 ms
    definition = s.attrs["definition"]
    assert definition == LATENCY_DEFINITION
    assert "'linear'" in definition and "single-threaded" in definition
    assert "concurrency" in definition and "throughput does not capture latency" in definition


def test_sample_latencies_match_numpy() -> None:
    with SAMPLE_META.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    s = latency_summary(read_metadata(SAMPLE_META)).set_index("system")
    for system in ("bm25", "neural_rerank", "narrow_recall"):
        x = np.array([float(r[f"latency_ms_{system}"]) for r in rows
                      if r[f"latency_ms_{system}"]])
        assert s.loc[system, "queries"] == len(x)
        for p in (50, 95, 99):
            assert s.loc[system, f"p{p}"] == pytest.approx(np.percentile(x, p))
        assert s.loc[system, "qps"] == pytest.approx(1000 / x.mean())


# ----------------------------------------------------------------------------- Pareto front


def _points(rows: list[tuple[str, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["system", "effectiveness", "latency"])


@pytest.mark.parametrize("rows,front", [
    # dominated on both
    ([("a", 0.5, 10), ("b", 0.4, 20)], ["a"]),
    # a trade-off: both on the front, fastest first
    ([("slow", 0.8, 90), ("fast", 0.5, 10), ("mid", 0.6, 50)], ["fast", "mid", "slow"]),
    # same effectiveness, slower: dominated; same latency, worse: dominated
    ([("a", 0.5, 10), ("b", 0.5, 20), ("c", 0.4, 10)], ["a"]),
    # exact ties are kept, both
    ([("a", 0.5, 10), ("twin", 0.5, 10), ("c", 0.3, 30)], ["a", "twin"]),
    # NaN points are left out
    ([("a", 0.5, 10), ("none", float("nan"), 5)], ["a"]),
    ([("only", 0.1, 1)], ["only"]),
    ([], []),
])
def test_pareto_front_cases(rows: list[tuple[str, float, float]], front: list[str]) -> None:
    assert pareto_front(_points(rows))["system"].tolist() == front


def test_pareto_front_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(1, 9))
        pts = _points([(f"s{i}", float(rng.integers(0, 4)) / 4, float(rng.integers(1, 5)))
                       for i in range(n)])  # coarse values: many ties
        expected = {
            p.system for p in pts.itertuples()
            if not any((q.effectiveness >= p.effectiveness and q.latency <= p.latency)
                       and (q.effectiveness > p.effectiveness or q.latency < p.latency)
                       for q in pts.itertuples())}
        front = pareto_front(pts)
        assert set(front["system"]) == expected
        assert front["latency"].is_monotonic_increasing
        # along the front, slower means more effective (or an exact tie)
        assert front["effectiveness"].is_monotonic_increasing


def test_front_sentence() -> None:
    pts = _points([("fast", 0.5, 10), ("good", 0.8, 90), ("worse", 0.4, 30), ("bad", 0.3, 95)])
    text = front_sentence(pts, pareto_front(pts), measure="AP", latency="p99")
    assert text.startswith("On the Pareto front of AP vs p99 latency: fast, good ")
    assert "Dominated: worse (by fast); bad (by fast, good)." in text


# ----------------------------------------------------------------------------- segments


@pytest.fixture(scope="module")
def sample() -> tuple[Qrels, list[Run]]:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in ("run_bm25.txt", "run_neural.txt", "run_narrow.txt")
            for r in read_runs(SAMPLE / p)]
    return qrels, runs


def _restricted(qrels: Qrels, runs: list[Run], queries: set[str]) -> tuple[Qrels, list[Run]]:
    q = Qrels.from_dict({k: v for k, v in qrels.to_dict().items() if k in queries})
    rs = [Run.from_dict({k: v for k, v in r.to_dict().items() if k in queries}, name=r.name)
          for r in runs]
    return q, rs


@pytest.mark.parametrize("options", [EvalOptions(), EvalOptions(complete=True, rel_level=2)],
                         ids=["default", "complete-rel2"])
def test_by_segment_equals_evaluate_on_the_segment(sample: tuple[Qrels, list[Run]],
                                                   options: EvalOptions) -> None:
    qrels, runs = sample
    meta = read_metadata(SAMPLE_META)
    measures = ["nDCG@10", "AP", "P@5"]
    res = evaluate(qrels, runs, measures, options=options)
    table = by_segment(res, meta, "segment")
    assert table["segment"].unique().tolist() == ["head", "torso", "tail", NO_METADATA]
    assert set(table["average"]) == {"mean"}
    all_ids = {str(q) for r in runs for q in r.to_dict()} | set(qrels.to_dict())
    listed = set(meta.queries.tolist())
    for segment in ("head", "torso", "tail", NO_METADATA):
        ids = ({q for q, s in zip(meta.queries, meta.segment("segment"), strict=True)
                if s == segment} if segment != NO_METADATA else all_ids - listed)
        oracle = evaluate(*_restricted(qrels, runs, ids), measures, options=options)
        for system, m in itertools.product(oracle.systems, measures):
            row = table[(table["segment"] == segment) & (table["system"] == system)
                        & (table["measure"] == m)].iloc[0]
            assert row["queries"] == oracle.n_averaged[(system, m)]
            assert row["mean"] == pytest.approx(oracle.mean(system, m), abs=1e-12)
    # the segments' queries add up to each run's own mean
    for system in res.systems:
        rows = table[(table["system"] == system) & (table["measure"] == "AP")]
        assert rows["queries"].sum() == res.n_averaged[(system, "AP")]
        total = (rows["queries"] * rows["mean"].fillna(0)).sum() / rows["queries"].sum()
        assert total == pytest.approx(res.mean(system, "AP"))
    assert table.attrs["definitions"]["AP"] == res.definition("AP")


def test_by_segment_no_value_no_metadata_and_weights_by_hand() -> None:
    qrels = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(1, 6)})
    # P@1 = 1 on q1, q3, q5; 0 on q2, q4
    run = Run.from_dict({f"q{i}": {"a": 1.0 if i % 2 else 0.0, "b": 0.5} for i in range(1, 6)},
                        name="r")
    res = evaluate(qrels, [run], ["P@1"])
    meta = read_metadata(b"query,segment,traffic\nq1,head,3\nq2,head,1\nq3,,2\nq4,tail,\n"
                         b"zz,tail,9\n")  # q5 not listed; zz not evaluated
    plain = by_segment(res, meta, "segment")
    assert plain[["segment", "queries"]].values.tolist() == [
        ["head", 2], ["tail", 1], [NO_VALUE, 1], [NO_METADATA, 1]]
    assert plain["mean"].tolist() == [0.5, 0.0, 1.0, 1.0]
    weighted = by_segment(res, meta, "segment", weighted=True)
    assert set(weighted["average"]) == {"traffic-weighted mean"}
    # head: (3·1 + 1·0) / 4; tail: q4 has no weight; (no value): q3 weight 2; q5: none
    assert weighted["queries"].tolist() == [2, 0, 1, 0]
    assert weighted["weight"].tolist() == [4.0, 0.0, 2.0, 0.0]
    np.testing.assert_allclose(weighted["mean"], [0.75, np.nan, 1.0, np.nan])
    assert weighted.attrs["average"].startswith(weighted_definition("N", "traffic"))


def test_weighted_mean_by_hand_and_oracle(sample: tuple[Qrels, list[Run]]) -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}})
    run = Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"a": 1.0, "c": 2.0}},
                        name="r")
    res = evaluate(qrels, [run], ["P@1", "RR"])  # RR: 1, 0, 0.5
    meta = read_metadata(b"query,weight\nq1,1\nq2,3\nq3,6\n")
    wm = weighted_mean(res, meta, "r", "RR")
    assert wm.value == pytest.approx((1 * 1 + 3 * 0 + 6 * 0.5) / 10)
    assert (wm.n, wm.total_weight) == (3, 10.0)
    value, n, total = wm  # unpacks as (value, n, total_weight)
    assert wm.definition == ("traffic-weighted mean: Σ w_q v_q / Σ w_q over the 3 queries "
                             "with a weight")
    # oracle on the sample: np.average over the queries with a weight
    qrels, runs = sample
    meta = read_metadata(SAMPLE_META)
    res = evaluate(qrels, runs, ["nDCG@10"])
    weights = dict(zip(meta.queries, meta.weights, strict=True))
    for system in res.systems:
        pq_ = res.per_query(system, "nDCG@10")
        keep = [q for q in pq_.index if q in weights]
        expected = np.average(pq_[keep], weights=[weights[q] for q in keep])
        wm = weighted_mean(res, meta, system, "nDCG@10")
        assert wm.value == pytest.approx(expected)
        assert wm.n == len(keep)


def test_weighted_mean_zero_weight_is_nan() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}})
    res = evaluate(qrels, [Run.from_dict({"q1": {"a": 1.0}}, name="r")], ["P@1"])
    wm = weighted_mean(res, read_metadata(b"query,weight\nq1,0\n"), "r", "P@1")
    assert math.isnan(wm.value) and wm.n == 1 and wm.total_weight == 0.0


def test_compare_by_segment_matches_stats(sample: tuple[Qrels, list[Run]]) -> None:
    qrels, runs = sample
    meta = read_metadata(SAMPLE_META)
    res = evaluate(qrels, runs, ["nDCG@10"])
    table = compare_by_segment(res, meta, "segment", measure="nDCG@10", a="bm25",
                               b="neural_rerank", correction="holm")
    assert table["segment"].tolist() == ["head", "torso", "tail", NO_METADATA]
    a, b = res.per_query("bm25", "nDCG@10"), res.per_query("neural_rerank", "nDCG@10")
    seg = dict(zip(meta.queries, meta.segment("segment"), strict=True))
    raw = []
    for row in table.itertuples():
        ids = [q for q in a.index if q in b.index and seg.get(q, NO_METADATA) == row.segment]
        assert row.queries == len(ids)
        d = b[ids].to_numpy() - a[ids].to_numpy()
        assert row.mean_diff == pytest.approx(d.mean())
        assert row.wins == (d > 0).sum() and row.losses == (d < 0).sum()
        if len(ids) >= 5:
            t = stats.paired_t_test(a[ids].to_numpy(), b[ids].to_numpy())
            assert row.pvalue == pytest.approx(t.pvalue)
            assert row.statistic == pytest.approx(t.statistic)
            raw.append(t.pvalue)
        else:
            assert row.outcome == "cannot tell" and math.isnan(row.pvalue)
            assert "cannot tell from 1 query" in row.verdict
    tested = table.dropna(subset=["pvalue"])
    np.testing.assert_allclose(tested["pvalue_corrected"], stats.correct_pvalues(raw, "holm"))
    assert (tested["outcome"] == "significant").all()
    assert table.loc[0, "verdict"].startswith("segment = head: neural_rerank beats bm25")
    assert "3 segment(s) with at least 5 shared queries tested" in table.attrs["note"]


def test_efficiency_points_on_sample(sample: tuple[Qrels, list[Run]]) -> None:
    qrels, runs = sample
    res = evaluate(qrels, runs, ["nDCG@10"])
    summary = latency_summary(read_metadata(SAMPLE_META))
    pts = efficiency_points(res, summary, "nDCG@10", latency="p95")
    assert pts["system"].tolist() == list(res.systems)
    for row in pts.itertuples():
        assert row.effectiveness == res.mean(row.system, "nDCG@10")
        assert row.latency == summary.set_index("system").loc[row.system, "p95"]
    # the sample makes seed 001's point: narrow_recall's throughput is close to bm25's,
    # its tail is not, and at p95 it is off the front while at p50 it is on it
    s = summary.set_index("system")
    assert abs(s.loc["narrow_recall", "qps"] / s.loc["bm25", "qps"] - 1) < 0.1
    assert s.loc["narrow_recall", "p95"] > 4 * s.loc["bm25", "p95"]
    assert pareto_front(pts)["system"].tolist() == ["bm25", "neural_rerank"]
    p50 = efficiency_points(res, summary, "nDCG@10", latency="p50")
    assert pareto_front(p50)["system"].tolist() == ["narrow_recall", "bm25", "neural_rerank"]


def test_sample_metadata_is_reproducible(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_metadata", SAMPLE / "make_metadata.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = module.generate(tmp_path)
    assert written.read_bytes() == SAMPLE_META.read_bytes()
    m = read_metadata(SAMPLE_META)
    assert m.segments("segment") == ("head", "torso", "tail")
    assert "q058" not in set(m.queries) and "q060" in set(m.queries)
    lat = m.latency
    assert not ((lat["query"] == "q031") & (lat["system"] == "narrow_recall")).any()


# ----------------------------------------------------------------------------- chart


def test_effectiveness_latency_chart() -> None:
    pts = _points([("<b>fast</b>", 0.5, 10.0), ("good", 0.8, 90.0), ("worse", 0.4, 30.0)])
    front = pareto_front(pts)
    fig = charts.effectiveness_latency(pts, front, measure="nDCG@10", latency="p95")
    line = fig.data[0]
    assert line.name == "Pareto front" and line.line.shape == "hv"
    assert list(line.x) == [10.0, 90.0] and list(line.y) == [0.5, 0.8]
    names = [t.name for t in fig.data[1:]]
    assert names == ["&lt;b&gt;fast&lt;/b&gt;", "good", "worse"]  # escaped for plotly
    assert fig.data[3].marker.symbol.endswith("-open")  # dominated: open marker
    assert not fig.data[1].marker.symbol.endswith("-open")
    assert fig.layout.xaxis.title.text == "p95 latency (ms)"
    assert fig.layout.yaxis.title.text == "nDCG@10"


def test_reader_accepts_a_file_object() -> None:
    m = read_metadata(io.BytesIO(b"query,segment\nq1,head\n"), name="up.csv")
    assert m.source == "up.csv" and m.queries.tolist() == ["q1"]
