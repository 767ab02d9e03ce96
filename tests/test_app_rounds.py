"""AppTest of the Qrels rounds page: coverage alone, then a second round uploaded."""

from __future__ import annotations

from _apps import NEEDS_SAMPLE, SAMPLE, after_data, displayed, metric_values
from streamlit.testing.v1 import AppTest

from ireval_app.keys import rounds as rounds_keys
from ireval_core.io import read_qrels, read_runs
from ireval_core.rounds import compare_qrels, to_label

pytestmark = NEEDS_SAMPLE


def _rounds_page() -> AppTest:
    return after_data("rounds", "Qrels rounds")


def _regraded_sample(n: int) -> bytes:
    """The sample qrels with the grade of its first ``n`` judged lines changed."""
    lines = (SAMPLE / "qrels.txt").read_text().splitlines()
    done = 0
    for i, line in enumerate(lines):
        q, it, d, g = line.split()
        if done < n and float(g) >= 0:
            lines[i] = f"{q} {it} {d} {(int(g) + 1) % 3}"
            done += 1
    return ("\n".join(lines) + "\n").encode()


def test_coverage_without_second_round() -> None:
    at = _rounds_page()
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    expected = to_label(qrels, runs, k=10)
    metrics = metric_values(at)
    assert metrics["Distinct unjudged pairs in the top 10"] == f"{len(expected):,}"
    assert "Regraded" not in metrics
    coverage = at.dataframe[0].value.set_index("run")
    assert sorted(coverage.index) == ["bm25", "narrow_recall", "neural_rerank"]
    assert at.get("download_button")
    assert any("No other round uploaded" in c.value for c in at.caption)


def test_second_round_shows_changes_and_kappa() -> None:
    at = _rounds_page()
    data = _regraded_sample(5)
    at.file_uploader(key=rounds_keys.UPLOADER).set_value(("april.qrels", data, "text/plain"))
    at.run()
    assert not at.exception
    current = read_qrels(SAMPLE / "qrels.txt")
    other = read_qrels(data, name="april.qrels")
    diff = compare_qrels(other, current)  # default: the uploaded round is the older one
    metrics = metric_values(at)
    assert metrics["Regraded"] == "5" == str(diff.n_changed)
    assert metrics["Added (new only)"] == "0"
    assert metrics["Cohen's kappa"] == f"{diff.kappa:.4f}"
    assert metrics["Linearly weighted kappa"] == f"{diff.weighted_kappa:.4f}"
    assert "Kendall's τ" in metrics
    text = " ".join(displayed(m.value) for m in at.markdown)
    assert "april.qrels" in text and "(uploaded)" in text
    # swap: the uploaded round becomes the newer one
    at.toggle(key=rounds_keys.SWAP).set_value(True).run()
    assert not at.exception
    swapped = compare_qrels(current, other)
    assert metric_values(at)["Cohen's kappa"] == f"{swapped.kappa:.4f}"


def test_broken_second_round_shows_error() -> None:
    at = _rounds_page()
    at.file_uploader(key=rounds_keys.UPLOADER).set_value(
        ("bad.qrels", b"q1 0 d1\n", "text/plain"))
    at.run()
    assert not at.exception
    assert any("bad.qrels" in e.value for e in at.error)
    assert any("bad.qrels:1" in e.value for e in at.error), [e.value for e in at.error]


def test_judged_share_reads_as_the_format_policy_says() -> None:
    """Judged@k is a share: shown ×100 with one decimal (formats.PERCENT_GRID), as every
    share of the app, not Streamlit's "percent" (97% beside 96.53%); the value is the
    core's coverage."""
    from ireval_core import formats
    from ireval_core.rounds import coverage

    at = _rounds_page()
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    expected = coverage(qrels, runs, k=10).set_index("run")["Judged@10"]
    shown = at.dataframe[0]
    table = shown.value.set_index("run")
    for run, share in expected.items():
        assert table.loc[run, "Judged@10"] == share * 100
    assert shown.proto.columns and formats.PERCENT_GRID in shown.proto.columns
