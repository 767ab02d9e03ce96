"""Exports escape untrusted names: Markdown, LaTeX, HTML and CSV show them as text."""

from __future__ import annotations

import csv
import html
import io
import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ireval_core import Qrels, Run, evaluate
from ireval_core.compare import compare_evaluation, write_comparison
from ireval_core.escape import csv_cell, csv_row, html_text, latex_text, markdown_text
from ireval_core.report import significance_table

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
BEACON = "![b](http://127.0.0.1:9/beacon.png)"
MATH = r"$\input{/etc/passwd}$"
PIPES = "a|b|c"
FORMULA = '=HYPERLINK("http://x")'
HOSTILE = [SCRIPT, IMG, BEACON, MATH, PIPES, FORMULA, "+1", "-2", "@SUM(A1)", "two\nlines",
           "back\\slash"]


# ----------------------------------------------------------------------------- Markdown

@pytest.mark.parametrize(("text", "expected"), [
    (SCRIPT, "&lt;script>alert(1)&lt;/script>"),
    (IMG, '">&lt;img src=x onerror=alert(1)>'),
    (BEACON, r"\!\[b\]\(http\://127.0.0.1:9/beacon.png)"),
    (MATH, r"\$\\input\{/etc/passwd\}\$"),
    (PIPES, r"a\|b\|c"),
    (FORMULA, r'\=HYPERLINK("http\://x")'),
    ("+1", r"\+1"),
    ("a +0.22 b", "a +0.22 b"),
    ("splade-pp-ed:rank", "splade-pp-ed:rank"),
    ("-2", r"\-2"),
    ("@SUM(A1)", "@SUM(A1)"),
    ("two\nlines", "two lines"),
    ("a\r\nb\rc\u2028d", "a b c d"),
    ("back\\slash", r"back\\slash"),
    # Streamlit: icons, colour directives, LaTeX
    (":material/home:", r"\:material\/home:"),
    (":red[x] $y$", r"\:red\[x\] \$y\$"),
    # emphasis, code, strikethrough, headings, quotes, lists, entities, autolinks
    ("**b** *i* _u_ ~~s~~ `c`", r"\*\*b\*\* \*i\* \_u\_ \~\~s\~\~ \`c\`"),
    ("# title", r"\# title"),
    ("> quote", "&gt; quote"),
    ("1. first", r"1\. first"),
    ("2) second", r"2\) second"),
    ("---", r"\---"),
    ("    code", "code"),
    ("&lt;b&gt; &#60;", r"&amp;lt;b&amp;gt; &amp;\#60;"),
    ("<http://x>", r"&lt;http\://x>"),
    ("www.example.org", r"www\.example.org"),
    # plain prose and ordinary run names stay readable
    ("run_1 bm25.rm3 t-test: p < 0.05 (n >= 5)", "run_1 bm25.rm3 t-test: p < 0.05 (n >= 5)"),
])
def test_markdown_text(text: str, expected: str) -> None:
    assert markdown_text(text) == expected


_MD_UNESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])|&(amp|lt|gt);")
_ENTITY = {"amp": "&", "lt": "<", "gt": ">"}


def _md_unescape(text: str) -> str:
    return _MD_UNESCAPE.sub(lambda m: m.group(1) or _ENTITY[m.group(2)], text)


def _md_live(text: str) -> list[str]:
    """Markup left in escaped text: what a Markdown renderer would act on."""
    plain = _MD_UNESCAPE.sub("\0", text)  # each escape as one inert character
    problems = [c for c in "\\`*[]|$~!^#&{}" if c in plain]
    problems += re.findall(r"<(?! )|(?:^|(?<=\s)):(?! )|:(?=/)", plain)
    problems += [m.group() for m in re.finditer(r"_+", plain)
                 if not (m.start() > 0 and m.end() < len(plain)
                         and plain[m.start() - 1].isalnum() and plain[m.end()].isalnum())]
    if re.match(r"\d{1,9}[.)]|[-+=>.)]|[ \t]", plain):
        problems.append("block start")
    return problems


def _texts(*tokens: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(tokens), max_size=30).map("".join)


@given(_texts(*"ab1 \t\n\r_*`[]()<>!|$~^#+-=.:&{}\\/@\"'", "\u2028", "é", "material/", "www.",
              "&amp;", "1.", "---"))
def test_markdown_text_round_trips_and_leaves_nothing_live(text: str) -> None:
    out = markdown_text(text)
    assert "\n" not in out and "\r" not in out
    assert _md_unescape(out) == re.sub(r"\r\n|[\n\r\u2028]", " ", text).strip(" \t")
    assert _md_live(out) == []
    assert "](" not in out and ":material/" not in out  # seen by renderers before unescaping


def _gfm_cells(line: str) -> int:
    """Cells of a GFM table row: pipes not escaped by a backslash split them."""
    pipes, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        pipes += line[i] == "|"
        i += 1
    return pipes - 1  # a row starts and ends with a pipe


# ----------------------------------------------------------------------------- LaTeX

@pytest.mark.parametrize(("text", "expected"), [
    (MATH, r"\$\textbackslash{}input\{/etc/passwd\}\$"),
    ("\\", r"\textbackslash{}"),
    ("back\\slash", r"back\textbackslash{}slash"),
    ("50% & #1 _x_ {y} ~ ^", r"50\% \& \#1 \_x\_ \{y\} \textasciitilde{} \textasciicircum{}"),
    ("two\nlines", "two lines"),
    ("a\r\nb\rc\fd", "a b c d"),
    (PIPES, r"a\textbar{}b\textbar{}c"),
    (SCRIPT, r"\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}"),
    (FORMULA, r"=HYPERLINK(\texttt{\char34}http://x\texttt{\char34})"),
    ("a--b", "a-{}-b"),
    ("B − A, α = 0.05, 0.1–0.2", r"B $-$ A, $\alpha$ = 0.05, 0.1\textendash{}0.2"),
    ("café Ñ ß", r"caf\'{e} \~{N} \ss{}"),
    ("基线", r"\texttt{[U+57FA]}\texttt{[U+7EBF]}"),
])
def test_latex_text(text: str, expected: str) -> None:
    assert latex_text(text) == expected


_LATEX_UNESCAPE = {r"\textbackslash{}": "\\", r"\textasciitilde{}": "~",
                   r"\textasciicircum{}": "^", r"\textless{}": "<", r"\textgreater{}": ">",
                   r"\textbar{}": "|", r"\texttt{\char34}": '"', r"\textasciigrave{}": "`",
                   r"\textquotesingle{}": "'", "-{}": "-", **{"\\" + c: c for c in "&%$#_{}"}}


@given(_texts(*"ab1 \n\\&%$#_{}~^<>|\"`'-", "textbackslash", r"\input{x}"))
def test_latex_text_is_one_pass(text: str) -> None:
    out = latex_text(text)
    pattern = "|".join(re.escape(k) for k in _LATEX_UNESCAPE)
    assert re.sub(pattern, lambda m: _LATEX_UNESCAPE[m.group()], out) == text.replace("\n", " ")
    # every special character left is part of an escape: nothing starts a command or math
    assert re.fullmatch("[a-z1 -]*", re.sub(pattern, "", out))
    assert "--" not in out  # no dash ligature


# ----------------------------------------------------------------------------- HTML

@pytest.mark.parametrize(("text", "expected"), [
    (SCRIPT, "&lt;script&gt;alert(1)&lt;/script&gt;"),
    (IMG, "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"),
    ("O'Brien & co", "O&#x27;Brien &amp; co"),
    (BEACON, BEACON),
])
def test_html_text(text: str, expected: str) -> None:
    assert html_text(text) == expected
    assert html.unescape(html_text(text)) == text


# ----------------------------------------------------------------------------- CSV

@pytest.mark.parametrize(("value", "expected"), [
    (FORMULA, "'" + FORMULA),
    ("+1", "'+1"),
    ("-2", "'-2"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"),
    ("\rx", "'\rx"),
    ("bm25", "bm25"),
    ("", ""),
    ("a=b", "a=b"),
    (-2.0, -2.0),
    (-3, -3),
    (None, None),
])
def test_csv_cell(value: object, expected: object) -> None:
    out = csv_cell(value)
    assert out == expected and type(out) is type(expected)


def test_csv_row() -> None:
    assert csv_row(["-2", -2.0, "x", None]) == ["'-2", -2.0, "x", None]


# ----------------------------------------------------------------------------- exports

@pytest.fixture(scope="module")
def hostile_res():
    """Eleven runs named with hostile strings, each with its own ranking of 12 queries."""
    rng = np.random.default_rng(7)
    qrels = Qrels.from_dict({f"q{i}": {"r": 1} for i in range(12)})
    runs = [Run.from_dict({f"q{i}": {"r": float(rng.integers(0, 4)), "x": 0.5, "y": 1.5,
                                     "z": 2.5} for i in range(12)}, name=name)
            for name in HOSTILE]
    return evaluate(qrels, runs, ["RR", "P@1"])


def test_report_exports_escape_names(hostile_res) -> None:
    table = significance_table(hostile_res, test="t")
    assert table.systems == tuple(HOSTILE)
    n = len(HOSTILE)

    md = table.to_markdown()
    lines = md.splitlines()
    rows = [line for line in lines if line.startswith("|")]
    assert len(rows) == 2 + n  # a name with a line break did not add a row
    assert {_gfm_cells(row) for row in rows} == {1 + len(table.measures)}
    assert "<img" not in md and "<script" not in md and "](http" not in md
    assert "| (a) &lt;script>alert(1)&lt;/script> |" in md
    assert r"| (c) \!\[b\]\(http\://127.0.0.1:9/beacon.png) |" in md
    assert r"| (d) \$\\input\{/etc/passwd\}\$ |" in md
    assert r"| (e) a\|b\|c |" in md
    assert "| (j) two lines |" in md
    assert all(_md_live(markdown_text(s)) == [] for s in table.systems)

    tex = table.to_latex()
    assert r"(d) \$\textbackslash{}input\{/etc/passwd\}\$ &" in tex
    assert r"(k) back\textbackslash{}slash &" in tex
    assert r"\input{" not in tex and r"\textbackslash\{\}" not in tex
    body = tex.split("\\midrule\n")[1].split("\\bottomrule")[0].splitlines()
    assert len(body) == n and all(line.endswith(r" \\") for line in body)
    assert "(j) two lines &" in tex
    comment = tex.splitlines()[-1]
    assert comment.startswith("% Means over") and tex.count("\n") == 4 + n + 3

    page = table.to_html()
    assert "<script" not in page and "<img" not in page
    assert "<th>(a) &lt;script&gt;alert(1)&lt;/script&gt;</th>" in page
    assert "<th>(b) &quot;&gt;&lt;img src=x onerror=alert(1)&gt;</th>" in page


def test_comparison_csv_neutralises_formulas(hostile_res) -> None:
    records = compare_evaluation(hostile_res, ["RR"], tests=("t",))
    buf = io.StringIO()
    write_comparison(records, "csv", buf)
    rows = list(csv.DictReader(io.StringIO(buf.getvalue())))
    assert len(rows) == len(records) == len(HOSTILE) * (len(HOSTILE) - 1) // 2
    shown = {name: ("'" + name if name[0] in "=+-@" else name) for name in HOSTILE}
    for row, rec in zip(rows, records, strict=True):
        assert row["system_a"] == shown[rec.system_a] and row["system_b"] == shown[rec.system_b]
        for cell in row.values():
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                float(cell)  # only numbers may start so: a negative number stays a number
    assert any(row["mean_diff"].startswith("-") for row in rows)
    assert {row["system_a"] for row in rows} >= {"'" + FORMULA, "'+1", "'-2", "'@SUM(A1)"}
    assert any(row["system_b"] == "two\nlines" for row in rows)  # quoted by csv, intact

    buf = io.StringIO()
    write_comparison(records, "json", buf)
    data = json.loads(buf.getvalue())
    assert {d["system_a"] for d in data} | {d["system_b"] for d in data} == set(HOSTILE)
