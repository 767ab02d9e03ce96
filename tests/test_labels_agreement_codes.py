"""rater_report from the reader's integer codes (``Judgments.label_codes``) gives, bit for
bit, the report the text label table gave before (issue 18: the Raters page no longer
codes the ids' text again). The coding of the table as it was is kept here."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ireval_core.labels import Judgments, judgments_from_frame, read_judgments
from ireval_core.labels import agreement as A
from ireval_core.labels import label_table as T
from ireval_core.labels.agreement import rater_report
from ireval_core.labels.label_table import TABLE_COLUMNS, LabelCodes

SAMPLE = Path(__file__).parents[1] / "sample_data" / "labels"


# the coding of rater_report before label_codes (commit 4d57c18), verbatim but for its
# name and the module prefix of the helpers it calls (which this change left as they were)
def old_code(table: pd.DataFrame, function: str, *, need_rater: bool) -> T.CodedTable:
    """Validate and code the table (see :class:`~ireval_core.labels.label_table.CodedTable`).

    With ``need_rater`` the rater column is required and a repeated (round, query, doc,
    rater) is an error; otherwise only query, doc and label are required (a missing
    round or rater column is one round, one rater).
    """
    needed = TABLE_COLUMNS if need_rater else ("query", "doc", "label")
    table = T._check_table(table, function, needed)
    label = T._labels(table, function)
    keep = ~np.isnan(label)
    sub = table if keep.all() else table.loc[keep]
    label = label[keep]
    n = len(label)

    def column(name: str) -> pd.Series | None:
        return sub[name] if name in sub.columns else None

    r_codes, r_names = T._factorize(column("round"), n)
    r_order = np.asarray(T._round_sort_key(list(r_names)), dtype=np.int64)
    rank = np.empty(len(r_order), dtype=np.int64)
    rank[r_order] = np.arange(len(r_order), dtype=np.int64)
    r_codes, rounds = rank[r_codes], r_names[r_order]
    q_codes, q_names = T._factorize(column("query"), n)
    d_codes, d_names = T._factorize(column("doc"), n)
    rater_codes, rater_names = T._factorize(column("rater"), n)
    rater_order = np.argsort(rater_names.astype(str), kind="stable")
    rank = np.empty(len(rater_order), dtype=np.int64)
    rank[rater_order] = np.arange(len(rater_order), dtype=np.int64)
    rater_codes, raters = rank[rater_codes], rater_names[rater_order]
    value, distinct = pd.factorize(label)  # hashing: few grades, many labels
    scale = np.sort(np.asarray(distinct, dtype=np.float64))
    rank = np.empty(len(scale), dtype=np.int64)
    rank[np.argsort(np.asarray(distinct, dtype=np.float64))] = np.arange(len(scale))
    value = rank[np.asarray(value, dtype=np.int64)] if len(scale) else np.zeros(0, np.int64)

    # one sort of the rows by (round, query, doc, label, rater)
    sizes = [len(rounds), len(q_names), len(d_names), len(scale), len(raters)]
    if float(np.prod(np.maximum(sizes, 1), dtype=np.float64)) < 2.0 ** 62:
        composite = r_codes
        for codes, size in zip((q_codes, d_codes, value, rater_codes), sizes[1:], strict=True):
            composite = composite * max(size, 1) + codes
        order = np.argsort(composite, kind="stable")
    else:
        order = np.lexsort((rater_codes, value, d_codes, q_codes, r_codes))
    r_codes, q_codes, d_codes = r_codes[order], q_codes[order], d_codes[order]
    value, rater_codes, label = value[order], rater_codes[order], label[order]
    new_unit = np.ones(n, dtype=bool)
    if n:
        new_unit[1:] = ((r_codes[1:] != r_codes[:-1]) | (q_codes[1:] != q_codes[:-1])
                        | (d_codes[1:] != d_codes[:-1]))
    unit = np.cumsum(new_unit, dtype=np.int64) - 1
    start = np.flatnonzero(new_unit)
    if need_rater and n:
        T._check_unique_raters(unit, rater_codes, start, len(raters), function, rounds,
                             r_codes, q_names, q_codes, d_names, d_codes, raters)
    return T.CodedTable(
        round=r_codes, unit=unit, rater=rater_codes, label=label, value=value,
        rounds=rounds, raters=raters, scale=scale,
        unit_start=np.append(start, n).astype(np.int64), unit_round=r_codes[start],
        unit_query=q_names[q_codes[start]], unit_doc=d_names[d_codes[start]])


def random_judgments(seed: int) -> Judgments:
    """Several rounds (names out of time order), five raters (one who never labels),
    documents shared between queries, blank labels, uneven raters per document."""
    rng = np.random.default_rng(seed)
    rows = []
    for round_ in ("2024-10", "2024-9", "2024-11"):
        for q in rng.permutation(40)[:30]:
            docs = rng.choice(60, size=8, replace=False)
            for pos, d in enumerate(docs, start=1):
                raters = rng.choice(["zoe", "ann", "bob", "chen"], size=rng.integers(1, 5),
                                    replace=False)
                for r in raters:
                    label = float(rng.integers(0, 4)) if rng.random() > 0.05 else np.nan
                    rows.append((round_, f"q{q}", f"d{d:03d}", pos, label, str(r)))
                if rng.random() < 0.1:
                    rows.append((round_, f"q{q}", f"d{d:03d}", pos, np.nan, "idle"))
    frame = pd.DataFrame(rows, columns=["round", "query", "doc", "position", "label", "rater"])
    return judgments_from_frame(frame)


def old_report(table: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, **kw: object
               ) -> A.RaterReport:
    """rater_report as it was: the text table, coded by the old coding."""
    with monkeypatch.context() as m:
        m.setattr(A, "code_table", old_code)
        return rater_report(table, **kw)  # type: ignore[arg-type]


def assert_same_report(a: A.RaterReport, b: A.RaterReport) -> None:
    for name in ("per_round", "per_rater", "disputed"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    assert a.scale == b.scale and a._rounds == b._rounds and a._raters == b._raters
    np.testing.assert_array_equal(a._confusion, b._confusion)


def assert_same_coding(a: T.CodedTable, b: T.CodedTable) -> None:
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert x.dtype == y.dtype, f.name
        np.testing.assert_array_equal(x, y, err_msg=f.name)


def sample() -> Judgments:
    files = sorted(SAMPLE.glob("labels_*.csv"))
    assert files, "the labeling sample is missing"
    return read_judgments(files)


@pytest.mark.parametrize("combine", ["mean", "median", "majority"])
def test_sample_report_from_codes_is_the_old_report(combine: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    j = sample()
    assert len(j.raters) >= 3
    before = old_report(j.label_table(), monkeypatch, combine=combine)
    assert before.per_rater["drift_flag"].sum() == 1  # a report with something in it
    assert_same_report(rater_report(j.label_codes(), combine=combine), before)
    assert_same_report(rater_report(j.label_table(), combine=combine), before)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("combine", ["mean", "majority"])
def test_random_report_from_codes_is_the_old_report(seed: int, combine: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    j = random_judgments(seed)
    table = j.label_table()
    assert table["rater"].nunique() == 4 and "idle" in set(j.rater_names)
    before = old_report(table, monkeypatch, combine=combine)
    assert len(before.disputed) > 50 and before.per_round["round"].tolist() == [
        "2024-9", "2024-10", "2024-11"]
    assert_same_report(rater_report(j.label_codes(), combine=combine), before)


@pytest.mark.parametrize("seed", [0, 1])
def test_codes_are_coded_as_the_text_table_was(seed: int) -> None:
    """Every array of the coding, dtype included, whichever way the table comes; also
    with blank labels kept in the table (NaN rows dropped before coding)."""
    j = random_judgments(seed)
    before = old_code(j.label_table(), "rater_report", need_rater=True)
    assert_same_coding(T.code_table(j.label_codes(), "rater_report", need_rater=True), before)
    assert_same_coding(T.code_table(j.label_table(), "rater_report", need_rater=True), before)
    with_blanks = j.label_table(labeled_only=False)
    assert with_blanks["label"].isna().any()
    assert_same_coding(old_code(with_blanks, "rater_report", need_rater=True), before)


def test_label_codes_are_the_label_table() -> None:
    j = random_judgments(3)
    codes, table = j.label_codes(), j.label_table()
    assert isinstance(codes, LabelCodes)
    names = {"round": codes.round_names, "query": codes.query_names,
             "rater": codes.rater_names}
    for col in ("round", "query", "rater"):
        assert np.asarray(names[col], dtype=str)[getattr(codes, col)].tolist() == \
            table[col].tolist()
    assert codes.doc_names.take(codes.doc).to_pylist() == table["doc"].tolist()
    np.testing.assert_array_equal(codes.label, table["label"].to_numpy())
    assert list(table.columns) == list(TABLE_COLUMNS)


def test_repeated_rater_is_refused_from_codes_as_from_the_table() -> None:
    j = random_judgments(4)
    c = j.label_codes()
    twice = LabelCodes(**{f.name: (np.concatenate((v, v[:1])) if f.name in {
        "round", "query", "doc", "rater", "label"} else v)
        for f in fields(c) for v in [getattr(c, f.name)]})
    table = j.label_table()
    with pytest.raises(ValueError) as from_table:
        rater_report(pd.concat([table, table.iloc[:1]], ignore_index=True))
    with pytest.raises(ValueError) as from_codes:
        rater_report(twice)
    assert str(from_codes.value) == str(from_table.value)


def test_empty_codes() -> None:
    j = random_judgments(0)
    c = j.label_codes()
    blank = LabelCodes(**{**{f.name: getattr(c, f.name) for f in fields(c)},
                          "label": np.full(len(c.label), np.nan)})
    rep = rater_report(blank)
    assert rep.per_round.empty and rep.per_rater.empty and rep.disputed.empty
