"""Readers of the text to judge: topics and documents, every layout, gzip or not, the
documents kept being only those asked for, and errors naming file, line and expectation."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ireval_core.errors import FormatError
from ireval_core.io.texts import Document, read_documents, read_topics
from ireval_core.progress import reporting

CLASSIC = b"""<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.
</top>

<top>
<num> Number: 302
<title> Poliomyelitis and
Post-Polio
<desc> Description:
Is the disease of Poliomyelitis (polio) under control?
</top>
"""

COVID = b"""<topics task="COVID-19" batch="5">
<topic number="1">
  <query>coronavirus origin</query>
  <question>what is the origin of COVID-19</question>
  <narrative>seeking range of information</narrative>
</topic>
<topic number="2">
  <query>coronavirus response to weather changes</query>
</topic>
</topics>
"""


@pytest.mark.parametrize(("data", "want"), [
    (CLASSIC, {"301": "International Organized Crime", "302": "Poliomyelitis and Post-Polio"}),
    (COVID, {"1": "coronavirus origin", "2": "coronavirus response to weather changes"}),
    (b"1048585\twhat is paula deen's brother\n2\tAndrogen receptor define\n",
     {"1048585": "what is paula deen's brother", "2": "Androgen receptor define"}),
    (b"topic,query,segment\nq1,\"cheap flights, paris\",travel\nq2,weather,news\n",
     {"q1": "cheap flights, paris", "q2": "weather"}),
    (b"\xef\xbb\xbfquery_id,text\n7,caf\xc3\xa9 near me\n", {"7": "caf\u00e9 near me"}),
])
@pytest.mark.parametrize("compress", [False, True])
def test_topics_every_layout(tmp_path: Path, data: bytes, want: dict, compress: bool) -> None:
    path = tmp_path / ("topics.gz" if compress else "topics")
    path.write_bytes(gzip.compress(data) if compress else data)
    assert read_topics(path) == want
    assert list(read_topics(("upload.txt", path.read_bytes()))) == list(want)


@pytest.mark.parametrize(("data", "line", "expected"), [
    (b"1\tfirst\n2 second\n", 2, "expected 2 columns (qid<TAB>text)"),
    (b"1\tfirst\n1\tagain\n", 2, "query 1 appears twice"),
    (b"id,body\n1,x\n", 1, "expected a header with a query id column"),
    (b"qid,query\n1\n", 2, "expected 2 columns, got 1"),
    (b"<top>\n<title> no number\n</top>\n", 1, "expected a topic number"),
    (b"<topics>\n<topic number=\"4\">\n<narrative>x</narrative>\n</topic>\n</topics>", 2,
     "expected a <title> or <query> for topic 4"),
])
def test_topic_errors_say_file_line_and_what(data: bytes, line: int, expected: str) -> None:
    with pytest.raises(FormatError) as err:
        read_topics(("topics.txt", data))
    assert (err.value.source, err.value.line) == ("topics.txt", line)
    assert expected in str(err.value)
    assert str(err.value).startswith(f"topics.txt:{line}:")


def _docs(n: int) -> list[dict]:
    return [{"id": f"D{i}", "title": f"title {i}", "text": f"text of {i}\u00e9 \"q\"",
             "url": f"http://x/{i}"} for i in range(n)]


@pytest.mark.parametrize("layout", ["tsv", "tsv-header", "jsonl", "jsonl-docid-contents",
                                    "parquet"])
@pytest.mark.parametrize("compress", [False, True])
def test_documents_keep_only_the_wanted(tmp_path: Path, layout: str, compress: bool) -> None:
    docs = _docs(500)
    if layout.startswith("tsv"):
        body = "".join(f"{d['id']}\t{d['text']}\n" for d in docs).encode()
        data = (b"docid\ttext\n" + body) if layout == "tsv-header" else body
    elif layout == "jsonl":
        data = "".join(json.dumps(d) + "\n" for d in docs).encode()
    elif layout == "jsonl-docid-contents":
        data = "".join(json.dumps({"docid": d["id"], "contents": d["text"]}) + "\n"
                       for d in docs).encode()
    else:
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist(docs), sink, row_group_size=100)
        data = sink.getvalue().to_pybytes()
    path = tmp_path / "collection"
    path.write_bytes(gzip.compress(data) if compress and layout != "parquet" else data)
    seen: list[tuple[int, int]] = []
    stages: list[str] = []
    with reporting(stages.append):
        got = read_documents(path, wanted=["D499", "D3", "nope", "D250"],
                             progress=lambda done, total: seen.append((done, total)))
    assert list(got) == ["D3", "D250", "D499"]  # file order
    full = layout in ("jsonl", "parquet")
    assert got["D3"] == Document("D3", "text of 3\u00e9 \"q\"", "title 3" if full else "",
                                 "http://x/3" if full else "")
    assert seen and seen[-1] == (path.stat().st_size, path.stat().st_size)
    assert stages[-1] == "reading collection: 100%"
    everything = read_documents(path)
    assert len(everything) == 500 and "docid" not in everything


def test_document_errors_say_file_line_and_what(tmp_path: Path) -> None:
    path = tmp_path / "collection.tsv"
    path.write_bytes(b"d1\tok\nd2\tok\nd3 no tab here\nd4\tok\n")
    with pytest.raises(FormatError) as err:
        read_documents(path, wanted=["d1"])
    assert str(err.value).startswith("collection.tsv:3: expected 2 columns (docid<TAB>text)")
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"id": "a", "text": "x"}\n{"id": "b", "text": \n'))
    with pytest.raises(FormatError) as err:
        read_documents(path)
    assert str(err.value).startswith("corpus.jsonl.gz:2: expected one JSON object per line")
    path = tmp_path / "noid.jsonl"
    path.write_bytes(b'{"key": "a", "text": "x"}\n')
    with pytest.raises(FormatError, match="expected a document id field"):
        read_documents(path)
    with pytest.raises(FormatError, match="expected 2 columns"):
        read_documents(("plain.txt", b"just words\n"))
