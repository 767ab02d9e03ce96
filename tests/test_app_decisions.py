"""AppTest of the Compare page's decision panels (the numbers are the core's
``decision_evidence``), a margin from a link that cannot be applied, and recording a
decision into a temporary SQLite workspace (``IREVAL_WORKSPACE``) that then opens the
meeting report's memo."""

from __future__ import annotations

import pytest
from _apps import APP, NEEDS_SAMPLE, displayed, pair_of, read_sample, sample_files
from streamlit.testing.v1 import AppTest

from ireval_app import compare_glue
from ireval_app.keys import compare as keys
from ireval_core.compare import aligned_scores
from ireval_core.decisions import decision_evidence, equivalence_test
from ireval_core.evaluate import evaluate
from ireval_core.meeting import ReportNote, decision_memo, meeting_report, read_decision_note
from ireval_core.workspace import Target, Workspace

RESAMPLES = 300

pytestmark = NEEDS_SAMPLE


def _page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.switch_page("pages/compare.py").run()
    at.number_input(key=keys.RESAMPLES).set_value(RESAMPLES).run()
    assert not at.exception
    return at


def _markdown(at: AppTest) -> str:
    return "\n".join(displayed(m.value) for m in at.markdown)


def test_panels_show_the_cores_evidence() -> None:
    at = _page()
    a, b, m = pair_of(at.selectbox(key=keys.PAIR).value)
    qrels, runs = read_sample()
    ev = decision_evidence(qrels, runs, [m], baseline=a, margin=keys.MARGIN_DEFAULT,
                           test="t", rank_confidence=True, n_resamples=RESAMPLES, rng=0)
    pair, measure = ev.pair(a, b, m), ev.measure(m)
    text = _markdown(at)
    # judgment debt: the verdict, each system's bounds and unjudged count
    assert f"**{pair.holes.verdict}**: {pair.holes.text}" in text
    holes = next(d.value for d in at.dataframe if "holes relevant" in d.value.columns)
    assert list(holes["system"]) == [a, b]
    assert list(holes["unjudged"]) == [pair.holes.holes_a, pair.holes.holes_b]
    assert list(holes["holes non-relevant"]) == [pair.holes.bounds_a[0], pair.holes.bounds_b[0]]
    assert list(holes["holes relevant"]) == [pair.holes.bounds_a[1], pair.holes.bounds_b[1]]
    # the sample qrels mark pooled-unjudged documents (-1): the inferred nDCG, defined
    assert pair.holes.inferred is not None and pair.holes.inferred_name == f"inf{m}".replace(
        "nDCG", "NDCG")
    assert list(holes[pair.holes.inferred_name]) == [pair.holes.inferred[a],
                                                     pair.holes.inferred[b]]
    assert any(pair.holes.inferred_definition() in displayed(c.value) for c in at.caption)
    assert any(pair.holes.bounds_note() in displayed(c.value) for c in at.caption)
    batch = [x for x in at.get("download_button") if "labeling batch" in x.proto.label]
    assert batch and f"{pair.holes.n_holes:,} pairs" in batch[0].proto.label
    # not worse, and equivalent
    ni = pair.noninferiority
    assert ni is not None and ni.sentence(a, b, m) in text
    res = evaluate(qrels, runs, [m])
    _, values = aligned_scores(res, m, [r.name for r in runs])
    eq = equivalence_test(values[a], values[b], margin=keys.MARGIN_DEFAULT)
    assert eq.sentence(a, b, m) in text
    # how sure the ranking is: three runs, every sentence, ANOVA and mixed model
    assert measure.ranking is not None and measure.anova is not None
    for sentence in measure.ranking.sentences():
        assert f"- {sentence}" in text
    assert measure.anova.sentence() in text
    # who gets hurt: the sentence, the metrics, a link per worst loss to the Queries page
    assert pair.risk.sentence(a, b, m) in text
    metrics = {x.label: x.value for x in at.metric}
    assert metrics["URisk (α = 1)"] == f"{pair.risk.urisk:+.4f}"
    assert metrics["TRisk"] == f"{pair.risk.trisk:+.2f}"
    links = [x for x in at.get("page_link") if x.proto.page.endswith("queries")
             or "queries" in x.proto.page]
    assert len(links) >= len(pair.risk.worst) > 0
    q0 = str(pair.risk.worst[0][0])
    assert any(q0 in displayed(x.proto.label) for x in links)
    # the data is not saved: recording says so
    assert any("not saved" in c.value for c in at.caption)


def test_a_margin_in_percent_changes_the_tests() -> None:
    at = _page()
    a, b, m = pair_of(at.selectbox(key=keys.PAIR).value)
    at.number_input(key=keys.MARGIN).set_value(2.0).run()
    at.radio(key=keys.MARGIN_UNIT).set_value(keys.MARGIN_UNITS[1]).run()
    assert not at.exception
    assert at.query_params["margin"] == "2.0" and at.query_params["margin_unit"]
    qrels, runs = read_sample()
    ev = decision_evidence(qrels, runs, [m], baseline=a, margin="2%", test="t",
                           n_resamples=RESAMPLES, rng=0)
    ni = ev.pair(a, b, m).noninferiority
    assert ni is not None and ni.percent == 2.0
    assert ni.sentence(a, b, m) in _markdown(at)
    assert compare_glue.margin_of(2.0, keys.MARGIN_UNITS[1]) == "2%"


def test_a_margin_out_of_range_from_a_link_is_not_applied() -> None:
    at = _page({"margin": "-1"})
    notes = [w.value for w in at.warning if "Not applied" in w.value]
    assert any("margin=-1" in n for n in notes), notes
    assert at.number_input(key=keys.MARGIN).value == keys.MARGIN_DEFAULT


@pytest.fixture
def ws(app_ws: Workspace) -> Workspace:
    app_ws.save_dataset(sample_files(), name="November round", saved_by="ana")
    return app_ws


def test_record_a_decision_then_the_memo(ws: Workspace) -> None:
    [info] = ws.list_datasets()
    at = _page({"ds": info.short_id})
    a, b, m = pair_of(at.selectbox(key=keys.PAIR).value)
    at.text_area(key=keys.DECISION_TEXT).set_value("Keep <b>A</b>: B is worse")
    at.text_input(key=keys.DECISION_AUTHOR).set_value("bo")
    at.button[[x.label for x in at.button].index("Record the decision")].click().run()
    assert not at.exception
    [note] = ws.notes(info.id, Target.comparison(a, b, m))
    assert (note.kind, note.author) == ("decision", "bo")
    decision, settings, link = read_decision_note(note.text)
    assert decision == "Keep <b>A</b>: B is worse"
    assert settings is not None and settings.n_resamples == RESAMPLES
    assert settings.margin == keys.MARGIN_DEFAULT and len(settings.systems) == 3
    assert link.startswith("/compare?") and "ds=" in link
    qrels, runs = read_sample()
    pair = decision_evidence(qrels, runs, [m], baseline=a, margin=keys.MARGIN_DEFAULT,
                             n_resamples=RESAMPLES, rng=0).pair(a, b, m)
    assert pair.holes.text in note.text and pair.risk.sentence(a, b, m) in note.text
    assert at.session_state["ireval.notes.author"] == "bo"  # remembered for the session
    # the meeting report opens with its memo, the same numbers
    report = meeting_report(qrels, runs, [m], charts=False, n_resamples=RESAMPLES, notes=[
        ReportNote(note.text, note.author, "", str(note.target), note.kind,
                   note.target.parts)])
    [memo] = report.decisions
    assert memo.evidence.holes.text == pair.holes.text
    assert memo.evidence.risk.urisk == pair.risk.urisk
    assert report.html.index("Decision: ") < report.html.index("<h2>Inputs</h2>")
    assert "Keep &lt;b&gt;A&lt;/b&gt;" in report.html and "<b>A</b>" not in report.html


def _record(at: AppTest, text: str) -> None:
    at.text_area(key=keys.DECISION_TEXT).set_value(text)
    at.text_input(key=keys.DECISION_AUTHOR).set_value("bo")
    at.button[[x.label for x in at.button].index("Record the decision")].click().run()
    assert not at.exception


def _open_link(link: str) -> AppTest:
    """A new session opening ``link`` (``/compare?...``, as recorded without a browser)."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(link)
    assert parts.path == "/compare"
    at = AppTest.from_file(APP, default_timeout=60)
    for key, values in parse_qs(parts.query, keep_blank_values=True).items():
        at.query_params[key] = values if len(values) > 1 else values[0]
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    return at


def test_two_decisions_on_two_pairs_keep_two_links_each_opening_its_pair(ws: Workspace) -> None:
    [info] = ws.list_datasets()
    at = _page({"ds": info.short_id})
    at.multiselect(key=keys.TESTS).set_value(["t", "sign"]).run()
    first, second, third = at.selectbox(key=keys.PAIR).options
    _record(at, "Keep A")
    at.selectbox(key=keys.PAIR).set_value(third).run()
    at.selectbox(key=keys.REPORT_TEST).set_value("sign").run()
    _record(at, "Ship B")
    notes = {n.text.partition("\n")[0]: n for n in ws.notes(info.id, kind="decision")}
    links = {head: read_decision_note(n.text)[2] for head, n in notes.items()}
    assert links["Keep A"] != links["Ship B"]
    assert notes["Ship B"].target == Target.comparison(*pair_of(third))
    # the memo's Live view is the note's link
    qrels, runs = read_sample()
    memo = decision_memo(qrels, runs, ReportNote(notes["Ship B"].text, kind="decision",
                                                 comparison=pair_of(third)))
    assert memo is not None and memo.link == links["Ship B"]
    assert f"Live view: `{links['Ship B']}`" in memo.markdown()
    for head, label, report_test in (("Keep A", first, "t"), ("Ship B", third, "sign")):
        # every parameter, defaults too: the options, the dataset and each selection
        for param in ("rel=1", "te=9.0.8", f"ds={info.short_id}", "tests=t", "tests=sign",
                      "alpha=0.05", "correction=holm", f"resamples={RESAMPLES}", "seed=0"):
            assert param in links[head], (param, links[head])
        opened = _open_link(links[head])
        assert opened.selectbox(key=keys.PAIR).value == label
        assert opened.multiselect(key=keys.TESTS).value == ["t", "sign"]
        assert opened.selectbox(key=keys.REPORT_TEST).value == report_test
        assert opened.number_input(key=keys.RESAMPLES).value == RESAMPLES
        a, b, m = pair_of(label)
        assert f"Deciding: {b} against {a} on {m}" in [displayed(h.value)
                                                        for h in opened.subheader]
        assert not opened.warning or not any("Not applied" in w.value for w in opened.warning)
