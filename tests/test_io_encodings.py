"""Files as teams export them: UTF-8 with or without a BOM, GB18030 (Excel on Chinese
Windows), UTF-16 LE/BE with a BOM (Excel's "Unicode text", tab-separated).

The same data written in each encoding must read to the same numbers, with a note
naming the encoding when it was not UTF-8; a file no encoding decodes is one error
naming the file, the line, the encodings tried and how to save it as UTF-8.
"""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from ireval_core import FormatError, evaluate
from ireval_core.io import ReadLimits, read_metadata, read_qrels, read_runs
from ireval_core.labels import read_judgments
from ireval_core.labels.gsb import gsb_by_round, read_gsb

# ----------------------------------------------------------------------------- the data

QRELS_ROWS = [("天气预报", "d1", 2), ("天气预报", "d2", 0), ("北京 地铁", "d3", 1),
              ("北京 地铁", "文档4", 3), ("q3", "d5", 1)]
RUN_ROWS = [("天气预报", "d1", 1.5, "百度"), ("天气预报", "d2", 0.5, "百度"),
            ("北京 地铁", "文档4", 2.0, "百度"), ("北京 地铁", "d3", 1.0, "百度"),
            ("q3", "d5", 0.1, "百度"), ("天气预报", "d2", 3.0, "bm25"),
            ("北京 地铁", "d3", 0.5, "bm25")]
LABEL_ROWS = [
    ("2026-05", "对照", "天气预报", "d1", 1, "张伟", "高"),
    ("2026-05", "对照", "天气预报", "d1", 1, "李娜", "中"),
    ("2026-05", "对照", "天气预报", "d2", 2, "张伟", "无"),
    ("2026-05", "实验", "天气预报", "d2", 1, "张伟", "无"),
    ("2026-05", "实验", "北京 地铁", "文档4", 1, "李娜", "低"),
    ("2026-06", "对照", "天气预报", "d1", 1, "王芳", "高"),
]
ENCODINGS = {
    # name: (bytes of a str, separator of delimited files)
    "utf-8": (lambda t: t.encode("utf-8"), ","),
    "utf-8-bom": (lambda t: t.encode("utf-8-sig"), ","),
    "gb18030": (lambda t: t.encode("gb18030"), ","),
    "utf-16-le": (lambda t: t.encode("utf-16"), "\t"),  # Python writes LE with a BOM
    "utf-16-be": (lambda t: "\ufeff".encode("utf-16-be") + t.encode("utf-16-be"), "\t"),
}
NOTE = {"utf-8": None, "utf-8-bom": None, "gb18030": "GB18030", "utf-16-le": "UTF-16 LE",
        "utf-16-be": "UTF-16 BE"}


def delimited(header: list[str], rows: list[tuple], sep: str) -> str:
    lines = [sep.join(header)] + [sep.join(str(v) for v in r) for r in rows]
    return "\r\n".join(lines) + "\r\n"  # as Excel writes them


def encode(text: str, encoding: str) -> bytes:
    return ENCODINGS[encoding][0](text)


def notes(warnings) -> list[str]:
    return [w.message for w in warnings if w.code == "encoding"]


def check_note(warnings, encoding: str) -> None:
    found = notes(warnings)
    if NOTE[encoding] is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0].startswith(f"read as {NOTE[encoding]} ("), found
        assert found[0].endswith("the file is not UTF-8")


# ----------------------------------------------------------------------------- qrels and runs


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.parametrize("layout", ["delimited", "trec"])
def test_qrels_and_runs_read_the_same_numbers_in_every_encoding(tmp_path, encoding, layout):
    sep = ENCODINGS[encoding][1]
    if layout == "trec":  # query ids with a space do not fit TREC: another id
        q = [(a.replace(" ", "_"), b, c) for a, b, c in QRELS_ROWS]
        r = [(a.replace(" ", "_"), b, c, d) for a, b, c, d in RUN_ROWS]
        qrels_text = "".join(f"{a} 0 {b} {c}\n" for a, b, c in q)
        run_text = "".join(f"{a}\tQ0\t{b}\t{i + 1}\t{c}\t{d}\n"
                           for i, (a, b, c, d) in enumerate(r))
        expected_q = {a: {} for a, _, _ in q}
        for a, b, c in q:
            expected_q[a][b] = float(c)
    else:
        qrels_text = delimited(["qid", "docid", "rel"], QRELS_ROWS, sep)
        run_text = delimited(["qid", "docid", "score", "tag"], RUN_ROWS, sep)
        expected_q = {a: {} for a, _, _ in QRELS_ROWS}
        for a, b, c in QRELS_ROWS:
            expected_q[a][b] = float(c)
    (tmp_path / "qrels.txt").write_bytes(encode(qrels_text, encoding))
    (tmp_path / "run.txt").write_bytes(encode(run_text, encoding))
    qrels = read_qrels(tmp_path / "qrels.txt")
    runs = read_runs(tmp_path / "run.txt")
    assert qrels.to_dict() == expected_q
    check_note(qrels.warnings, encoding)
    for run in runs:
        check_note(run.warnings, encoding)
    # the same evaluation, to the bit, as from the UTF-8 file
    (tmp_path / "qrels8.txt").write_text(qrels_text, encoding="utf-8")
    (tmp_path / "run8.txt").write_text(run_text, encoding="utf-8")
    measures = ["nDCG@10", "P@2", "map", "recip_rank"]
    got = evaluate(qrels, runs, measures)
    ref = evaluate(read_qrels(tmp_path / "qrels8.txt"), read_runs(tmp_path / "run8.txt"),
                   measures)
    assert [r.name for r in runs] == ["百度", "bm25"]
    for name in ("百度", "bm25"):
        for m in measures:
            pd.testing.assert_series_equal(got.per_query(name, m), ref.per_query(name, m))


def test_gzip_of_gb18030_and_of_utf16(tmp_path):
    text = delimited(["qid", "docid", "rel"], QRELS_ROWS, "\t")
    for encoding in ("gb18030", "utf-16-le"):
        qrels = read_qrels(gzip.compress(encode(text, encoding)), name="q.tsv.gz")
        assert qrels.to_dict()["天气预报"] == {"d1": 2.0, "d2": 0.0}
        check_note(qrels.warnings, encoding)


def test_gb18030_text_after_the_first_64_kib_is_found_by_the_reader(tmp_path):
    """The fast path checks only the head; the reader meets the rest and decides then."""
    head = "".join(f"q{i} 0 d{i} 1\n" for i in range(8000))  # > 64 KiB of ASCII
    data = (head + "天气 0 文档 2\n").encode("gb18030")
    assert len(data) > 1 << 16
    for name, reader in (("late.txt", read_qrels),):
        qrels = reader(data, name=name)
        assert qrels.to_dict()["天气"] == {"文档": 2.0}
        check_note(qrels.warnings, "gb18030")
    csv = ("qid,docid,score\n" + "".join(f"q{i},d{i},1\n" for i in range(8000))
           + "天气,文档,2\n").encode("gb18030")
    (run,) = read_runs(csv, name="late.csv")
    assert run.to_dict()["天气"] == {"文档": 2.0}
    check_note(run.warnings, "gb18030")


# ----------------------------------------------------------------------------- labeling tables


LABEL_HEADER = ["round", "system", "query", "doc", "position", "rater", "label"]


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_labeling_files_read_the_same_judgments_in_every_encoding(tmp_path, encoding):
    sep = ENCODINGS[encoding][1]
    text = delimited(LABEL_HEADER, LABEL_ROWS, sep)
    path = tmp_path / ("labels.csv" if sep == "," else "labels.txt")
    path.write_bytes(encode(text, encoding))
    j = read_judgments(str(path))
    ref = read_judgments(("ref.csv", delimited(LABEL_HEADER, LABEL_ROWS, ",").encode()))
    check_note(j.warnings, encoding)
    assert j.raters == ("张伟", "李娜", "王芳") == ref.raters
    assert j.systems == ("实验", "对照")
    assert j.label_map.name == "无/低/中/高"
    pd.testing.assert_frame_equal(j.label_table(), ref.label_table())
    pd.testing.assert_frame_equal(j.shown_table("mean"), ref.shown_table("mean"))
    assert j.round("2026-05").to_qrels().to_dict() == {
        "北京 地铁": {"文档4": 1.0}, "天气预报": {"d1": 2.5, "d2": 0.0}}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_gsb_and_metadata_files_in_every_encoding(encoding):
    sep = ENCODINGS[encoding][1]
    gsb_text = delimited(["round", "query", "judgment", "rater"],
                         [("2026-05", "天气预报", "G", "张伟"),
                          ("2026-05", "北京 地铁", "S", "张伟"),
                          ("2026-05", "q3", "B", "李娜")], sep)
    g = read_gsb([("gsb.csv", encode(gsb_text, encoding))])
    check_note(g.warnings, encoding)
    table = gsb_by_round(g)
    assert table[["good", "same", "bad"]].values.tolist() == [[1, 1, 1]]
    assert g.raters == ("张伟", "李娜")
    meta_text = delimited(["query", "segment", "weight"],
                          [("天气预报", "头部", 10), ("北京 地铁", "长尾", 1)], sep)
    meta = read_metadata(encode(meta_text, encoding), name="meta.csv")
    assert meta.queries.tolist() == ["天气预报", "北京 地铁"]
    assert meta.segment("segment").tolist() == ["头部", "长尾"]
    assert meta.weights.tolist() == [10.0, 1.0]
    check_note(meta.warnings, encoding)


# ----------------------------------------------------------------------------- refused


def test_a_file_no_encoding_decodes_names_file_line_encodings_and_the_fix(tmp_path):
    data = b"qid,docid,rel\nq1,d1,1\nq1,d\xff2,1\n"
    with pytest.raises(FormatError) as info:
        read_qrels(data, name="bad.csv")
    err = info.value
    assert (err.source, err.line) == ("bad.csv", 3)
    assert err.message.startswith("line is not valid UTF-8 (byte 0xff at column 5), and the "
                                  "file is not GB18030 text either")
    assert "Tried UTF-8, UTF-16 (with a byte order mark) and GB18030" in err.message
    assert err.message.endswith("in Excel, File > Save As > 'CSV UTF-8 (Comma delimited) "
                                "(*.csv)'")
    # the same in a labeling file, a line far below the first 64 KiB
    rows = "".join(f"2026-05,q{i},d{i},1,2\n" for i in range(5000))
    data = ("round,query,doc,position,label\n" + rows).encode() + b"2026-05,q,d\x80,1,2\n"
    with pytest.raises(FormatError) as info:
        read_judgments(("big.csv", data))
    assert (info.value.source, info.value.line) == ("big.csv", 5002)
    assert "Tried UTF-8, UTF-16 (with a byte order mark) and GB18030" in info.value.message


def test_latin1_that_pairs_into_rare_gbk_characters_is_not_read_as_chinese():
    """'Müller' in Latin-1 is valid GB18030 (ü + l is a rare ideograph): not taken."""
    data = "query,segment\nMüller,Köln\nGómez,Sánchez\n".encode("latin-1")
    assert data.decode("gb18030")  # every accented letter is followed by a letter
    with pytest.raises(FormatError) as info:
        read_metadata(data, name="latin1.csv")
    assert info.value.location == "latin1.csv:2"
    assert "most of its non-ASCII characters would be rare ones" in info.value.message
    # the same characters in a real GB18030 file among common Chinese text are fine
    mixed = "query,segment\n天气预报,头部\n北京地铁,长尾\n上海天气,头部\n喆,长尾\n"
    mixed = mixed.encode("gb18030")
    assert read_metadata(mixed, name="ok.csv").queries.tolist()[-1] == "喆"


def test_control_characters_rule_out_gb18030():
    data = b"qid docid rel\x01\xb0\xa1\n"  # decodes as GB18030, but holds U+0001
    with pytest.raises(FormatError) as info:
        read_qrels(b"q1 0 d1 1\n" + data, name="ctl.txt")
    assert "would hold the control character U+0001" in info.value.message


@pytest.mark.parametrize(("data", "needle"), [
    ("qid,docid,rel\nq1,d1,1\n".encode("utf-32"), "UTF-32 LE text"),
    ("qid,docid,rel\nq1,d1,1\n".encode("utf-16-le"), "UTF-16 text without a byte order mark"),
    ("qid,docid,rel\nq1,d1,1\n".encode("utf-16-be"), "UTF-16 text without a byte order mark"),
])
def test_utf32_and_utf16_without_a_bom_are_refused_with_the_fix(data, needle):
    with pytest.raises(FormatError) as info:
        read_qrels(data, name="q.csv")
    assert needle in info.value.message and "CSV UTF-8 (Comma delimited)" in info.value.message


def test_utf16_that_does_not_decode_names_the_line():
    data = "\ufeffqid\tdocid\trel\nq1\td1\t1\n".encode("utf-16-le") + b"\x00\xd8q\x00"
    with pytest.raises(FormatError) as info:
        read_qrels(data, name="u16.txt")
    assert "this UTF-16 LE text" in info.value.message and "at line 3" in info.value.message


def test_transcoding_is_bounded_by_the_read_limits():
    text = ("qid,docid,rel\n" + "".join(f"天气{i},文档{i},1\n" for i in range(60_000)))
    data = text.encode("gb18030")  # 1.1 MB; 1.5 MB as UTF-8
    limits = ReadLimits(max_inflated_bytes=1 << 20)
    with pytest.raises(FormatError) as info:
        read_qrels(data, name="big.csv", limits=limits)
    assert "the text as UTF-8 (from GB18030) expands to more than 1 MiB" in info.value.message
    assert len(read_qrels(data, name="big.csv")) == 60_000


def test_utf8_says_nothing_and_keeps_its_bytes():
    qrels = read_qrels("qid,docid,rel\n天气,文档,1\n".encode(), name="u.csv")
    assert notes(qrels.warnings) == []
    assert np.asarray(qrels.query_ids).tolist() == ["天气"]
