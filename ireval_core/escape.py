r"""Escape untrusted strings for each export format.

Query ids, document ids and run names (tags) come from uploaded files. Whatever
they hold must come out of an export as that same text: never as markup, a
command or a formula. One function per format:

:func:`markdown_text`
    Text shown literally by CommonMark, GitHub-flavoured Markdown (GFM) and
    Streamlit's Markdown. Protects against raw HTML (``<script>``,
    ``<img src=x onerror=...>``), images that fetch a URL when the page is viewed
    (``![b](http://host/beacon.png)``, a tracking beacon), links, emphasis,
    headings, lists and block quotes, GFM tables broken by ``|``, strikethrough,
    character references (``&lt;``), and Streamlit's ``$...$`` LaTeX,
    ``:color[...]`` directives and ``:material/icon:`` icons.
:func:`latex_text`
    Text typeset literally by LaTeX. Protects against commands
    (``\input{/etc/passwd}``, ``\write18``), math mode, ``%`` comments that hide
    the rest of a line, ``&`` that shifts a ``tabular`` cell, unbalanced braces.
:func:`html_text`
    HTML text content or a quoted attribute value. Protects against tags,
    scripts, event-handler attributes and attribute break-out.
:func:`csv_cell`, :func:`csv_row`
    Cells of a CSV file opened in a spreadsheet. Protects against formula
    (CSV) injection: ``=HYPERLINK(...)``, ``@SUM(...)``, DDE ``=cmd|...``.
:func:`csv_frame_marked`, :func:`undo_marked`
    The same for a table ireval reads back (a labeling file it exports): each row
    says in the column :data:`ESCAPED_COLUMN` which of its cells got the quote, so
    that the reader takes exactly that quote off again and nothing else.

:func:`markdown_text` and :func:`latex_text` turn line breaks into spaces: a name
never ends a table row, a list item or a ``%`` comment. JSON needs none of this:
it is data, quoted by :mod:`json`.

Examples
--------
>>> print(markdown_text("![b](http://127.0.0.1:9/beacon.png)"))
\!\[b\]\(http\://127.0.0.1:9/beacon.png)
>>> print(latex_text(r"$\input{/etc/passwd}$"))
\$\textbackslash{}input\{/etc/passwd\}\$
>>> html_text('"><img src=x onerror=alert(1)>')
'&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'
>>> csv_row(["=HYPERLINK(\"http://x\")", "bm25", -0.5])
['\'=HYPERLINK("http://x")', 'bm25', -0.5]
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ESCAPED_COLUMN", "csv_cell", "csv_frame", "csv_frame_marked", "csv_row",
           "html_text", "latex_text", "markdown_text", "undo_marked"]

_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
"""Everything :meth:`str.splitlines` splits on (CR LF counts once)."""

_MD_SPECIAL = re.compile(r"""
      \A(?P<number>\d{1,9})[.)]  # at the start of a line: an ordered-list marker (1. 2)),
    | \A[-+=>.)]              # list item, setext underline, thematic break, block quote;
                              # anywhere else these are plain text (t-test, +0.22, >=, 0.05)
    | [\\`*{}\[\]|$~!^\#&]    # meaningful anywhere: escape, code, emphasis, links, images,
                              # table cells, math, strikethrough, entities, ...
    | (?P<underscores>_+)     # emphasis, unless between letters or digits (run_1)
    | <(?![ ])                # a tag, an HTML comment or an autolink (not "p < 0.05")
    | (?:\A|(?<=\s)):(?![ ])  # a directive or shortcode (:red[...], :smile:, also ":\tx")
    | :(?=/)                  # an autolink scheme (http://); a:b inside a word is text
    | (?<=\])\(               # a link destination: ]( even for renderers that ignore \]
    | (?<=(?i:www))\.         # a GFM autolink: www.host
    | (?<=:material)/         # Streamlit rewrites ":material/" in the raw source
""", re.VERBOSE)
_MD_ENTITY = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def _md_escape(match: re.Match[str]) -> str:
    c, number = match.group(), match.group("number")
    if number is not None:  # 1. or 2): escape the "." or ")"
        return number + "\\" + c[-1]
    if match.group("underscores") is not None:
        # a run of _ with a letter or digit on both sides can neither open nor close emphasis
        text, start, end = match.string, match.start(), match.end()
        if 0 < start and end < len(text) and text[start - 1].isalnum() and text[end].isalnum():
            return c
        return "\\_" * len(c)
    return _MD_ENTITY.get(c, "\\" + c)


def markdown_text(text: str) -> str:
    r"""Escape ``text`` so that Markdown shows it literally, in a paragraph or a table cell.

    Every ASCII punctuation character that has a meaning where it stands is
    escaped with a backslash (``_`` between letters or digits, as in ``run_1``,
    has none); ``&``, ``<`` and ``>`` become character references,
    which every Markdown implementation decodes to text (some, such as
    Python-Markdown, keep the HTML after ``\<``). Characters that mean something
    only at the start of a line (``-``, ``+``, ``=``, ``>``, ``1.``) are escaped there;
    ``<`` followed by a space, ``:`` inside a word or followed by a space (a directive
    or a shortcode starts after a space; a scheme's ``://`` is escaped), and ``(`` not
    after ``]``, are plain text and stay as they are, so prose such as ``p < 0.05``,
    ``+0.22``, ``splade:rank`` or ``t-test: (n >= 1)`` reads unchanged in the Markdown
    source, which is also read as plain text. Line breaks become spaces.

    The result is safe at the start of a line, inside a GFM table cell (``|`` is
    escaped) and as a run of text in Streamlit's Markdown (``$``, directives and
    ``:material/`` icons are escaped). Leading and trailing spaces and tabs are
    dropped: Markdown never shows them, and four leading spaces would make a code
    block.

    What escaping cannot stop: Streamlit turns emoji shortcodes (``:smile:``,
    ``:material_home:``, ``:streamlit:``) and arrows (``->``) into symbols after
    parsing, and GFM renderers may make a bare web or e-mail address
    (``https://x.org``, ``www.x.org``, ``a@x.org``) a clickable link. The text
    shown stays the same and nothing is loaded.

    Parameters
    ----------
    text:
        Untrusted text: a run name, a query id, a document id.

    Returns
    -------
    str
        Markdown source that renders as ``text`` (line breaks as spaces).

    Examples
    --------
    >>> print(markdown_text("a|b|c"))
    a\|b\|c
    >>> print(markdown_text("<script>alert(1)</script>"))
    &lt;script>alert(1)&lt;/script>
    >>> print(markdown_text("$x$ :red[y] **z** -> p < 0.05"))
    \$x\$ \:red\[y\] \*\*z\*\* -> p < 0.05
    >>> print(markdown_text("- item\nnext"))
    \- item next
    >>> print(markdown_text("2024. report"))
    2024\. report
    >>> print(markdown_text("bm25_rm3 _x_"))
    bm25_rm3 \_x\_
    """
    return _MD_SPECIAL.sub(_md_escape, _LINE_BREAK.sub(" ", text).strip(" \t"))


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
          "|": r"\textbar{}", '"': r"\texttt{\char34}", "`": r"\textasciigrave{}",
          "'": r"\textquotesingle{}"}
"""ASCII characters that LaTeX does not typeset as themselves in text mode: the specials,
and those the default (OT1) font encoding typesets as something else (``<`` as ¡) or
joins into a ligature (````` `` ````` as “)."""

_LATEX_UNICODE = {
    "\u2212": "$-$", "\u2013": r"\textendash{}", "\u2014": r"\textemdash{}", "\u2010": "-",
    "\u2011": "-", "\u00a0": r"\nobreakspace{}", "\u2009": r"\,", "\u202f": r"\,",
    "\u2002": r"\enspace{}", "\u2003": r"\quad{}", "\u2018": "`", "\u2019": "'",
    "\u201c": "``", "\u201d": "''",
    "\u2026": r"\ldots{}", "\u2022": r"\textbullet{}", "\u00b7": r"$\cdot$",
    "\u00b1": r"$\pm$", "\u00d7": r"$\times$", "\u00f7": r"$\div$", "\u2264": r"$\leq$",
    "\u2265": r"$\geq$", "\u2260": r"$\neq$", "\u2248": r"$\approx$", "\u221e": r"$\infty$",
    "\u221a": r"$\surd$", "\u2192": r"$\rightarrow$", "\u2190": r"$\leftarrow$",
    "\u2194": r"$\leftrightarrow$", "\u21d2": r"$\Rightarrow$", "\u2208": r"$\in$",
    "\u2211": r"$\sum$", "\u00bd": r"$\frac{1}{2}$", "\u00bc": r"$\frac{1}{4}$",
    "\u00be": r"$\frac{3}{4}$", "\u00b0": r"$^{\circ}$", "\u00b2": r"$^{2}$", "\u00b3": r"$^{3}$",
    "\u00b9": r"$^{1}$", "\u2030": r"\textperthousand{}", "\u00a7": r"\S{}", "\u00b6": r"\P{}",
    "\u00a9": r"\copyright{}", "\u00ae": r"\textregistered{}", "\u2122": r"\texttrademark{}",
    "\u00a3": r"\pounds{}", "\u20ac": r"\texteuro{}", "\u00bf": r"?`", "\u00a1": r"!`",
    "\u00df": r"\ss{}", "\u00e6": r"\ae{}", "\u00c6": r"\AE{}", "\u0153": r"\oe{}",
    "\u0152": r"\OE{}", "\u00f8": r"\o{}", "\u00d8": r"\O{}", "\u0142": r"\l{}",
    "\u0141": r"\L{}", "\u0131": r"\i{}",
    # Greek, in math mode (text mode has no Greek in the default encoding)
    **{chr(0x3b1 + i): f"$\\{name}$" for i, name in enumerate(
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi o pi rho "
        "varsigma sigma tau upsilon phi chi psi omega".split()) if name != "o"},
    "\u03bf": "o",
    **{g: f"$\\{name}$" for g, name in zip("ΓΔΘΛΞΠΣΦΨΩ", (
        "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega"),
        strict=True)},
    # the modifier letters of superscript markers (``0.5000 ᵃᵇ``)
    **{sup: f"\\textsuperscript{{{c}}}" for c, sup in zip(
        "abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ",
        strict=True)},
}
"""Non-ASCII characters of ireval's own text (−, –, α, →, ≥, …) and common ones of
uploaded names, as LaTeX that the LaTeX kernel typesets with no package."""

_LATEX_ACCENTS = {"\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=",
                  "\u0306": "u", "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H",
                  "\u030c": "v", "\u0327": "c", "\u0328": "k"}
"""Combining accents (of a Unicode decomposition) -> LaTeX's accent command."""

_LATEX_SPECIAL = re.compile("[" + re.escape("".join(_LATEX)) + "]|-(?=-)|[^\\x00-\\x7f]")


def _latex_char(c: str) -> str:
    """LaTeX for one character that is not plain ASCII text: its escape, its command,
    a letter with its accent, or its code point ``[U+4E2D]`` in typewriter type."""
    if c in _LATEX:
        return _LATEX[c]
    if c == "-":  # a hyphen before a hyphen: "--" would be a dash
        return "-{}"
    if c in _LATEX_UNICODE:
        return _LATEX_UNICODE[c]
    decomposed = unicodedata.normalize("NFD", c)
    base, marks = decomposed[0], decomposed[1:]
    if base.isascii() and base.isalpha() and marks and all(m in _LATEX_ACCENTS for m in marks):
        out = "\\i" if base == "i" else "\\j" if base == "j" else base
        for m in marks:
            out = f"\\{_LATEX_ACCENTS[m]}{{{out}}}"
        return out
    if unicodedata.category(c) in ("Zs", "Zl", "Zp", "Cc"):
        return " "
    return rf"\texttt{{[U+{ord(c):04X}]}}"


def latex_text(text: str) -> str:
    r"""Escape ``text`` so that LaTeX typesets it literally (text mode, e.g. a table cell).

    The result is plain ASCII, valid in text mode of a document compiled by ``pdflatex``
    with no package loaded, whatever ``text`` holds. One pass over the text: each of
    ``\ & % $ # _ { } ~ ^`` becomes its text-mode form, and so do the ASCII characters
    the default font encoding would typeset as others (``< > | " ` '``) and a hyphen
    before a hyphen (``--`` would be a dash); the replacements are never escaped again
    (so ``\`` gives ``\textbackslash{}``, not ``\textbackslash\{\}``). Characters
    outside ASCII become LaTeX too: ireval's own symbols (``−`` as ``$-$``, ``α`` as
    ``$\alpha$``, ``–``, ``≥``, ``→``, ``…``), letters with accents (``é`` as
    ``\'{e}``), ``ß æ ø ł``; any other (Chinese, Cyrillic, emoji) is written as its
    code point in typewriter type, ``[U+4E2D]``: ``pdflatex`` has no glyph for it
    without packages a document must choose (``CJKutf8``, ``babel``), and a character
    it cannot typeset stops it. Line breaks become spaces, so that the text cannot end
    a ``%`` comment or a table row.

    Parameters
    ----------
    text:
        Untrusted text: a run name, a query id, a document id; or ireval's own
        sentences, which use ``−``, ``–`` and ``α``.

    Returns
    -------
    str
        ASCII LaTeX source that typesets as ``text``.

    Examples
    --------
    >>> print(latex_text(r"\input{/etc/passwd}"))
    \textbackslash{}input\{/etc/passwd\}
    >>> print(latex_text("50% of run_1 & ~2^3 #1"))
    50\% of run\_1 \& \textasciitilde{}2\textasciicircum{}3 \#1
    >>> print(latex_text("two\nlines"))
    two lines
    >>> print(latex_text("B − A < −0.01 at α = 0.05; café 中"))
    B $-$ A \textless{} $-$0.01 at $\alpha$ = 0.05; caf\'{e} \texttt{[U+4E2D]}
    """
    return _LATEX_SPECIAL.sub(lambda m: _latex_char(m.group()), _LINE_BREAK.sub(" ", text))


def html_text(text: str) -> str:
    """Escape ``text`` for HTML text content or a quoted attribute value.

    Parameters
    ----------
    text:
        Untrusted text: a run name, a query id, a document id.

    Returns
    -------
    str
        ``text`` with ``& < > " '`` as character references (:func:`html.escape`).

    Examples
    --------
    >>> html_text("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    >>> html_text("O'Brien & \\"co\\"")
    'O&#x27;Brien &amp; &quot;co&quot;'
    """
    return html.escape(text, quote=True)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\0")
"""Leading characters a spreadsheet reads as a formula (OWASP CSV injection; the
OWASP ASVS 5.0 requirement 1.2.10 adds NUL)."""


def csv_cell(value: object) -> object:
    """Neutralise a CSV cell a spreadsheet would read as a formula.

    A string starting with ``=``, ``+``, ``-``, ``@``, tab, carriage return or
    NUL gets a leading single quote, which spreadsheets take as "this is text"
    and do not show. Anything else is returned unchanged: numbers stay numbers
    (``-0.5`` is not touched), ``None`` stays an empty cell. Quoting of commas,
    quotes and line breaks is left to :mod:`csv`.

    Parameters
    ----------
    value:
        A cell as given to :class:`csv.writer`.

    Returns
    -------
    object
        ``"'" + value`` for a formula-like string, else ``value``.

    Examples
    --------
    >>> csv_cell("=HYPERLINK(\\"http://x\\")")
    '\\'=HYPERLINK("http://x")'
    >>> csv_cell("@SUM(A1)"), csv_cell("-2"), csv_cell(-2.0), csv_cell("bm25"), csv_cell(None)
    ("'@SUM(A1)", "'-2", -2.0, 'bm25', None)
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_row(values: Iterable[object]) -> list[object]:
    """:func:`csv_cell` of every value of a row.

    Examples
    --------
    >>> csv_row(["+1", 1, "a"])
    ["'+1", 1, 'a']
    """
    return [csv_cell(v) for v in values]


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells are neutralised with :func:`csv_cell`.

    Only text (object or string) columns are touched; numbers stay numbers. Use it
    before ``to_csv`` on any table that holds uploaded ids or names.

    >>> import pandas as pd
    >>> csv_frame(pd.DataFrame({"run": ["=1+1", "bm25"], "mean": [-0.5, 0.2]})).to_dict("list")
    {'run': ["'=1+1", 'bm25'], 'mean': [-0.5, 0.2]}
    """
    import pandas as pd

    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].map(csv_cell)
    return out


ESCAPED_COLUMN = "ireval_escaped"
"""The column of an exported table ireval reads back (:func:`csv_frame_marked`): in each
row, the names of the columns whose cell got a leading ``'`` (space-separated; empty when
none). Its presence is how a reader recognises ireval's export (:func:`undo_marked`)."""


def csv_frame_marked(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`csv_frame`, and the column :data:`ESCAPED_COLUMN` saying in each row which
    cells got the quote, so that ireval's readers undo exactly that (:func:`undo_marked`):
    an id ``=x`` comes back as ``=x``, and an id that really begins with ``'`` (never
    escaped, never listed) as it was. Column names must hold no space.

    >>> import pandas as pd
    >>> out = csv_frame_marked(pd.DataFrame({"query": ["-q", "q2"], "doc": ["=d", "'d"]}))
    >>> out.to_dict("list")
    {'query': ["'-q", 'q2'], 'doc': ["'=d", "'d"], 'ireval_escaped': ['query doc', '']}
    """
    import pandas as pd

    source = frame.drop(columns=[ESCAPED_COLUMN], errors="ignore")
    if any(" " in str(c) for c in source.columns):
        raise ValueError("csv_frame_marked: a column name holds a space: "
                         f"{[c for c in source.columns if ' ' in str(c)]}")
    out = csv_frame(source)
    marks = [""] * len(out)
    for col in source.columns:
        if not (source[col].dtype == object or pd.api.types.is_string_dtype(source[col].dtype)):
            continue
        hit = [isinstance(v, str) and v.startswith(_FORMULA_START) for v in source[col]]
        marks = [f"{m} {col}".lstrip() if h else m for m, h in zip(marks, hit, strict=True)]
    out[ESCAPED_COLUMN] = marks
    return out


def undo_marked(cell: str | None, marks: str | None, column: str) -> str | None:
    """``cell`` as it was before :func:`csv_frame_marked`: without its leading ``'`` when
    its row's :data:`ESCAPED_COLUMN` cell (``marks``) names ``column`` and the quote is
    there (a spreadsheet that saved the file may have dropped it), else unchanged.

    >>> undo_marked("'=d", "query doc", "doc"), undo_marked("'d", "", "doc")
    ('=d', "'d")
    >>> undo_marked("=d", "doc", "doc")  # saved again by a spreadsheet: already plain
    '=d'
    """
    if cell is not None and marks and cell.startswith("'") and column in marks.split():
        return cell[1:]
    return cell
