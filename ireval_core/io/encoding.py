"""Text encodings: every text reader parses UTF-8; other text is transcoded to it once.

Files arrive as teams export them: UTF-8 with or without a byte order mark (BOM), a
CSV saved by Excel on Chinese Windows (GBK, read as its superset GB18030), Excel's
"Unicode text" (UTF-16 with a BOM, tab-separated). The encoding is decided in this
order, and never guessed among other single-byte encodings:

1. a **byte order mark**: UTF-8 (read as it is: every reader skips it), UTF-16 LE or
   BE (transcoded, :func:`decode_bom`); a UTF-32 BOM, or UTF-16 without one, is an
   error saying how to save the file;
2. **UTF-8**, strictly: the fast path. Only the first 64 KiB are checked up front
   (:func:`read_text`); the readers parse the bytes as they are, and pyarrow checks
   every text column it reads, so a file that turns out not to be UTF-8 further down
   is caught by the reader (:class:`NotUtf8`) and decided then;
3. **GB18030**, only when the whole file decodes strictly, holds no control character
   other than tab, CR and LF, and at least half of its characters beyond ASCII are
   common Chinese characters (GB2312, which holds the 6,763 in everyday use and the
   full-width punctuation). The last rule keeps a Latin-1 or Windows-1252 file from
   being read as Chinese: its accented letters followed by a letter (``Mü``) happen to
   pair into rare GBK characters.

A transcoded file is read from a new :class:`~.source.Source` holding its UTF-8 text
in pyarrow's memory (within :class:`~.source.ReadLimits`), with the same lines, so
every message names the same line; :func:`encoding_warning` is the note the readers
attach ("read as GB18030"). UTF-8 says nothing.

A file none of them decodes is a :class:`~ireval_core.errors.FormatError` naming the
file, the first line that is not UTF-8, the encodings tried, and how to save the file
as UTF-8 from Excel.

>>> src = decode_bom(Source("u16.txt", "qid\\tdocid\\trel\\n".encode("utf-16")))
>>> src.encoding, src.data
('UTF-16 LE', b'qid\\tdocid\\trel\\n')
>>> text = "round,query\\n2026-05,天气\\n".encode("gb18030")
>>> read_text(Source("l.csv", text), lambda s: (s.encoding, s.data.decode()), header=True)
('GB18030', 'round,query\\n2026-05,天气\\n')
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from itertools import islice
from typing import TypeVar

import pyarrow as pa

from ..errors import DataWarning, FormatError
from .guard import release_frames
from .source import Source

__all__ = ["ENCODINGS_TRIED", "SAVE_AS_UTF8", "NotUtf8", "decode_bom", "encoding_warning",
           "not_utf8", "read_text"]

_T = TypeVar("_T")

ENCODINGS_TRIED = "UTF-8, UTF-16 (with a byte order mark) and GB18030"
"""What the readers try, named in the message for a file none of them decodes."""
SAVE_AS_UTF8 = ("save it as UTF-8: in Excel, File > Save As > "
                "'CSV UTF-8 (Comma delimited) (*.csv)'")
"""How to save a file the readers can read (the end of the message)."""

_BOMS = ((b"\x00\x00\xfe\xff", "UTF-32 BE"), (b"\xff\xfe\x00\x00", "UTF-32 LE"),
         (b"\xff\xfe", "UTF-16 LE"), (b"\xfe\xff", "UTF-16 BE"))
_CODECS = {"UTF-16 LE": "utf-16-le", "UTF-16 BE": "utf-16-be", "GB18030": "gb18030"}
_HEAD = 1 << 16  # bytes checked for UTF-8 before a reader parses the file
_STEP = 1 << 22  # bytes transcoded at a time
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters a text file does not hold (tab, LF and CR are allowed)."""
_BEYOND_ASCII = re.compile("[^\x00-\x7f]")
_SAMPLE = 10_000  # characters beyond ASCII looked at to judge a GB18030 decoding
_COMMON_SHARE = 0.5  # of them, the share that must be common Chinese characters


class NotUtf8(FormatError):
    """A reader met a line that is not UTF-8 (:func:`read_text` then decides the encoding).

    When it reaches the user (a reader not wrapped by :func:`read_text`), it reads as
    any :class:`FormatError`: ``file:line: line is not valid UTF-8 (...)``.
    """

    def __init__(self, message: str, *, source: str | None, line: int | None,
                 text: str | None, detail: str) -> None:
        super().__init__(message, source=source, line=line, text=text)
        self.detail = detail


def not_utf8(src: Source, line: int, raw: bytes, start: int, what: str = "line") -> NotUtf8:
    """The error for ``raw`` (line ``line`` of ``src``), not UTF-8 from byte ``start`` on.

    ``what`` names the line in the message (``"the header row"``).
    """
    detail = f"byte 0x{raw[start]:02x} at column {start + 1}" if start < len(raw) else ""
    return NotUtf8(f"{what} is not valid UTF-8{f' ({detail})' if detail else ''}; save the "
                   "file as UTF-8", source=src.name, line=line,
                   text=raw.rstrip(b"\r\n").decode("utf-8", "replace"), detail=detail)


def utf8_text(src: Source) -> str:
    """The whole of ``src`` as UTF-8 text (a BOM dropped); bytes that are not UTF-8 are a
    :func:`not_utf8` error naming their line (a JSON file is read whole)."""
    data = src.data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        raise not_utf8(src, data.count(b"\n", 0, exc.start) + 1,
                       data[start:end if end >= 0 else len(data)], exc.start - start) from None


def encoding_warning(src: Source) -> DataWarning | None:
    """The note a reader attaches to what it read from a transcoded file (else None)."""
    if src.encoding == "UTF-8":
        return None
    why = ("Excel's 'Unicode text'" if src.encoding.startswith("UTF-16") else
           "GBK, as Excel saves CSV on Chinese Windows")
    return DataWarning("encoding", f"read as {src.encoding} ({why}): the file is not UTF-8",
                       src.name, 1)


# ----------------------------------------------------------------------------- deciding


def decode_bom(src: Source) -> Source:
    """``src`` transcoded to UTF-8 when it starts with a UTF-16 byte order mark.

    A UTF-32 mark, or UTF-16 without a mark (every other byte zero), is a
    :class:`FormatError` saying how to save the file; anything else is returned as it
    is (UTF-8 with a mark included: the readers skip it).
    """
    head = src.head(4)
    for bom, name in _BOMS:
        if head.startswith(bom):
            if name.startswith("UTF-32"):
                raise FormatError(f"this is {name} text, which ireval does not read; "
                                  f"{SAVE_AS_UTF8}", source=src.name)
            return _transcode(src, name, skip=len(bom))
    sample = src.head(512)
    half = len(sample) // 2
    even, odd = sample[0::2][:half].count(0), sample[1::2][:half].count(0)
    if half >= 4 and max(even, odd) >= 0.4 * half and min(even, odd) <= 0.05 * half:
        raise FormatError("this looks like UTF-16 text without a byte order mark; "
                          f"{SAVE_AS_UTF8}", source=src.name)
    return src


def read_text(src: Source, read: Callable[[Source], _T], *, header: bool = False) -> _T:
    """``read(src)``, on ``src`` as UTF-8: as it is, or transcoded from GB18030.

    The first 64 KiB are checked first: when they are not UTF-8, the whole file is
    decided at once (GB18030, or the error). Otherwise the reader parses the bytes;
    if it meets a line that is not UTF-8 further down (:class:`NotUtf8`), the file is
    decided then and read again. ``header``: the file's first line is a header row
    (named so in the message).
    """
    if src.encoding != "UTF-8":
        return read(src)
    head = src.head(_HEAD)
    try:
        codecs.utf_8_decode(head, "strict", len(head) < _HEAD)
    except UnicodeDecodeError:
        return read(_gb18030_or_error(src, header=header))
    failure: NotUtf8 | None = None
    try:
        return read(src)
    except NotUtf8 as exc:
        failure = NotUtf8(exc.message, source=exc.source, line=exc.line, text=exc.text,
                          detail=exc.detail)
        release_frames(exc)
    return read(_gb18030_or_error(src, header=header, found=failure))


def _gb18030_or_error(src: Source, *, header: bool, found: NotUtf8 | None = None) -> Source:
    """``src`` transcoded from GB18030, or the error for a file no encoding decodes."""
    try:
        return _transcode(src, "GB18030", skip=0)
    except _Undecodable as exc:
        why = exc.why
    raise _undecodable(src, why, header=header, found=found)


def _undecodable(src: Source, why: str, *, header: bool, found: NotUtf8 | None
                 ) -> FormatError:
    """The error for a file that is not UTF-8 and not GB18030 text."""
    if found is not None and found.line is not None:
        line, detail, text = found.line, found.detail, found.text
    else:
        line, detail, text = _first_non_utf8(src.data)
    what = "line"
    if header and line == _first_nonblank_line(src.data):
        what = "the header row"
    shown = f" ({detail})" if detail else ""
    return FormatError(f"{what} is not valid UTF-8{shown}, and the file is not GB18030 text "
                       f"either ({why}). Tried {ENCODINGS_TRIED}; {SAVE_AS_UTF8}",
                       source=src.name, line=line, text=text)


class _Undecodable(Exception):
    """GB18030 does not fit: ``why`` says so in a few words."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


# ----------------------------------------------------------------------------- transcoding


def _transcode(src: Source, name: str, *, skip: int) -> Source:
    """A new source holding the text of ``src`` in ``name``, as UTF-8 in pyarrow's memory.

    Decoded in steps of 4 MiB and written as it goes; the UTF-8 text may take no more
    than ``src.limits.max_inflated_bytes``. GB18030 must also look like Chinese text
    (see the module notes), else :class:`_Undecodable`; UTF-16 that does not decode is
    a :class:`FormatError` naming the line.
    """
    limits = src.limits
    allowed = limits.max_inflated_bytes
    decoder = codecs.getincrementaldecoder(_CODECS[name])("strict")
    data = src.data
    out = pa.allocate_buffer(min(max(len(data) + len(data) // 2, 1 << 16), allowed),
                             resizable=True)
    total = 0
    lines = 0  # line ends decoded so far, for messages
    common = beyond = 0
    known: dict[str, bool] = {}
    pos = skip
    last_cr = False
    while pos < len(data) or pos == skip:
        piece = data[pos:pos + _STEP]
        final = pos + _STEP >= len(data)
        try:
            text = decoder.decode(piece, final)
        except UnicodeDecodeError as exc:
            pending = len(exc.object) - len(piece)  # bytes held back from the last step
            bad = pos - pending + exc.start
            if name == "GB18030":
                raise _Undecodable(f"byte 0x{data[bad]:02x} at line "
                                   f"{_line_at(data, bad, name, skip)} is not GB18030") from None
            raise FormatError(f"this {name} text (Excel's 'Unicode text') does not decode: "
                              f"{exc.reason} at line {_line_at(data, bad, name, skip)}; "
                              f"{SAVE_AS_UTF8}", source=src.name) from None
        if pos == skip and text.startswith("\ufeff"):  # the GB18030 byte order mark
            text = text[1:]
        if name == "GB18030":
            control = _NOT_TEXT.search(text)
            if control is not None:
                at = lines + _count_lines(text[: control.start()], last_cr) + 1
                raise _Undecodable(f"as GB18030, line {at} would hold the control "
                                   f"character U+{ord(control.group()):04X}")
            if beyond < _SAMPLE:
                for match in islice(_BEYOND_ASCII.finditer(text), _SAMPLE - beyond):
                    ch = match.group()
                    if ch not in known:
                        known[ch] = _is_common(ch)
                    common += known[ch]
                    beyond += 1
        lines += _count_lines(text, last_cr)
        last_cr = text.endswith("\r")
        encoded = text.encode("utf-8")
        end = total + len(encoded)
        if end > allowed:
            raise limits.error(src.name, src.size, what=f"the text as UTF-8 (from {name})")
        if end > out.size:
            out.resize(min(max(end, 2 * out.size), allowed))
        memoryview(out).cast("B")[total:end] = encoded
        total = end
        pos += _STEP
    if name == "GB18030" and beyond and common < _COMMON_SHARE * beyond:
        sample = sorted(ch for ch, ok in known.items() if not ok)[:3]
        raise _Undecodable(f"as GB18030 most of its non-ASCII characters would be rare ones "
                           f"such as {' '.join(sample)}, as a Latin-1 or Windows-1252 file "
                           "gives")
    out.resize(total)
    return Source(src.name, out, limits=limits, encoding=name)


def _is_common(ch: str) -> bool:
    """Whether ``ch`` is in GB2312 (common simplified Chinese, full-width punctuation)."""
    try:
        ch.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return True


def _count_lines(text: str, after_cr: bool) -> int:
    """Line ends in ``text`` (LF, CRLF or a lone CR, as the readers count them)."""
    n = text.count("\n") + text.count("\r") - text.count("\r\n")
    if after_cr and text.startswith("\n"):  # a CRLF split between two steps
        n -= 1
    return n


def _line_at(data: bytes, offset: int, name: str, skip: int) -> int:
    """The 1-based line of byte ``offset`` (only for a message)."""
    prefix = data[skip:offset]
    if name.startswith("UTF-16"):
        prefix = prefix[: len(prefix) - len(prefix) % 2]
    text = prefix.decode(_CODECS[name], "replace")
    return _count_lines(text, False) + 1


def _first_non_utf8(data: bytes) -> tuple[int, str, str]:
    """Line, ``byte 0x.. at column N`` and the text of the first line not UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start
    else:  # pragma: no cover - only called for a file that is not UTF-8
        return 1, "", ""
    start = max(data.rfind(b"\n", 0, bad), data.rfind(b"\r", 0, bad)) + 1
    end = len(data)
    for stop in (b"\n", b"\r"):
        found = data.find(stop, bad)
        if found >= 0:
            end = min(end, found)
    line = _count_lines(data[:start].decode("utf-8", "replace"), False) + 1
    raw = data[start:end]
    return (line, f"byte 0x{data[bad]:02x} at column {bad - start + 1}",
            raw.decode("utf-8", "replace"))


def _first_nonblank_line(data: bytes) -> int:
    """The line of the header row: the first line holding more than blanks."""
    for number, raw in enumerate(re.split(rb"\r\n|\r|\n", data[:_HEAD]), start=1):
        if raw.strip():
            return number
    return 1
