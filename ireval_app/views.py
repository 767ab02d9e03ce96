"""The view a link restores: each page's selections in its URL, read back once and checked.

A page declares the widgets whose values belong in its link as :class:`ViewParam`
(in its module of :mod:`ireval_app.keys`): the widget key, the URL parameter, and the
type and range of a value as an :mod:`ireval_core.params` constraint. Before drawing
such a widget the page calls :func:`bind_view`, which gives the widget its value and
writes it into the URL. A value read from the URL is checked here, in one place
(:func:`read_param`): one of the wrong type, out of range, or naming something that
is not loaded (a run, a measure, a query, a round, a rater) is not applied: the page
shows the default, and a note ``Not applied: <param>=<value> (<why>)`` says so on the
page (:func:`not_applied`), never an exception and never a silent change.

A page's widgets that are not in its link are listed in its keys module's ``LOCAL``
(widget key -> why the link leaves it out: a file, a form's text, an action's input);
a test draws every page and fails on a keyed widget that is in neither.

The frame (:mod:`ireval_app.frame`) calls :func:`set_page` before the page runs and
says where the notes go and how the link box follows the URL (:func:`drawing`). A
recorded decision or note keeps :func:`full_link`: the page with every option and
every parameter, defaults included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from ireval_core.errors import shorten
from ireval_core.params import Constraint, parse

from . import state

__all__ = ["MAX_TEXT", "ViewParam", "bind_view", "covers", "current_link", "drawing",
           "full_link", "keep_value", "kept_value", "link_for", "not_applied", "page_name",
           "read_param", "set_page", "view_value"]

MAX_TEXT = 2000
"""Free text from a URL (a typed list of grades, a measure) longer than this is not read."""

_SHOWN = 40  # characters of a refused value shown in its note


@dataclass(frozen=True)
class ViewParam:
    """A page widget whose value is part of the view a link restores.

    Attributes
    ----------
    key:
        The widget key (``st.session_state``).
    param:
        Its URL query parameter.
    constraint:
        What one value must be (an :mod:`ireval_core.params` constraint: ``Interval``,
        ``Options``, ``Boolean``), read from the URL with :func:`ireval_core.params.parse`;
        ``None``: any text (up to :data:`MAX_TEXT` characters).
    many:
        The widget holds a list (the parameter is repeated).
    loaded:
        What the page's choices are when they come from the loaded data (``"run"``,
        ``"query"``, ``"round"``, ...): a value not among them is "no such run here".
        ``None``: the choices are a fixed list, shown in the note.
    """

    key: str
    param: str
    constraint: Constraint | None = None
    many: bool = False
    loaded: str | None = None


@dataclass
class _Drawing:
    """Where this run's notes go and what follows a change of the URL (see :func:`drawing`)."""

    note: Callable[[str], None]
    url_changed: Callable[[], None]
    shown: set[str] = field(default_factory=set)
    bound: dict[str, Any] = field(default_factory=dict)  # widget key -> value, this run


_DRAWING: ContextVar[_Drawing | None] = ContextVar("ireval_view_drawing", default=None)

_VIEW = "ireval.view."  # + widget key: the value kept while the widget is not drawn
_PAGE = "ireval.page"  # URL path of the page being run
_PARAMS = "ireval.page.params"  # widget key -> ViewParam of the page being run
_NOTES = "ireval.view.notes"  # page -> {widget key: _Note}


@contextmanager
def drawing(note: Callable[[str], None], url_changed: Callable[[], None]) -> Iterator[None]:
    """While the page runs: ``note(text)`` shows a not-applied note, ``url_changed()`` is
    called after :func:`bind_view` changed the URL (the frame's link box follows it)."""
    token = _DRAWING.set(_Drawing(note, url_changed))
    try:
        yield
    finally:
        _DRAWING.reset(token)


def not_applied(param: str, value: str, why: str) -> None:
    """Show ``Not applied: <param>=<value> (<why>)`` on the page (once per run)."""
    text = f"Not applied: {param}={shorten(value, _SHOWN)} ({why})"
    drawing_ = _DRAWING.get()
    if drawing_ is not None and text not in drawing_.shown:
        drawing_.shown.add(text)
        drawing_.note(text)


def _url_changed() -> None:
    drawing_ = _DRAWING.get()
    if drawing_ is not None:
        drawing_.url_changed()


def set_page(name: str, params: Sequence[ViewParam]) -> None:
    """Called by the frame before the page runs: this page's view parameters (and the
    options and dataset) are the only ones kept in the URL, and a value in the URL of
    the wrong type or out of range is taken out of it and noted, whether or not the
    page draws its widget in this run (its choices are checked when it is bound)."""
    ss = st.session_state
    ss[_PAGE] = name
    ss[_PARAMS] = {v.key: v for v in params}
    keep = state.SHARED_PARAMS | {v.param for v in params}
    for param in list(st.query_params.keys()):
        if param not in keep:
            del st.query_params[param]
    notes = _notes()
    for view in params:
        raw = st.query_params.get_all(view.param)
        if not raw or view.key in ss or _VIEW + view.key in ss:
            continue  # the URL is read once, while the page has no value of its own
        value, refused = read_param(view, raw)
        if not refused:
            continue
        notes[view.key] = note = _Note(view.param, refused)
        note.show()  # now: the page may not bind this parameter in this run
        if value is None:
            del st.query_params[view.param]
        else:  # a list parameter: the values that can be read stay
            gone = {text for text, _ in refused}
            st.query_params[view.param] = [text for text in raw if text not in gone]


@dataclass
class _Note:
    """URL values of one parameter that were not applied (``refused``: text, why), and
    the value the page shows instead once it has bound the parameter: the note is shown
    while the page shows that value."""

    param: str
    refused: list[tuple[str, str]]
    bound: bool = False
    instead: Any = None

    def show(self) -> None:
        for text, why in self.refused:
            not_applied(self.param, text, why)


def _notes() -> dict[str, _Note]:
    """The notes of the page being run, by widget key (kept in the session)."""
    return st.session_state.setdefault(_NOTES, {}).setdefault(page_name(), {})


def page_name() -> str | None:
    """The URL path of the page being run (``"data"`` for the Data page)."""
    return st.session_state.get(_PAGE)


def _reason(problem: str, text: str) -> str:
    """``ireval_core.params.parse``'s problem without the value it starts with."""
    for shown in (repr(shorten(text, 40)), repr(text)):
        if problem.startswith(shown + " "):
            rest = problem[len(shown) + 1:]
            return rest[3:] if rest.startswith("is ") else rest
    return problem


def _choices_reason(view: ViewParam, allowed: Sequence[Any]) -> str:
    if view.loaded:
        return f"no such {view.loaded} here"
    listed = ", ".join(map(repr, allowed[:8])) + (", …" if len(allowed) > 8 else "")
    return f"not one of {listed}"


def read_param(view: ViewParam, raw: Sequence[str], choices: Sequence[Any] | None = None
               ) -> tuple[Any, list[tuple[str, str]]]:
    """The value of ``view`` from its URL texts ``raw``, and the texts refused, with why.

    Each text is read with the view's constraint (type and range), then must be among
    ``choices`` when given. Returns ``(value, [(text, why), ...])``: for a list
    parameter the values kept (``None`` when none is), else the last text's value or
    ``None``. Never raises.
    """
    values: list[Any] = []
    refused: list[tuple[str, str]] = []
    allowed = list(choices) if choices is not None else None
    for text in raw if view.many else list(raw)[-1:]:
        if view.constraint is not None:
            value, problem = parse(text, view.constraint)
            if problem is not None:
                refused.append((text, _reason(problem, text.strip())))
                continue
        elif len(text) > MAX_TEXT:
            refused.append((text, f"too long ({len(text):,} characters)"))
            continue
        else:
            value = text
        if allowed is not None and value not in allowed:
            refused.append((text, _choices_reason(view, allowed)))
            continue
        values.append(value)
    if view.many:
        return (values or None), refused
    return (values[-1] if values else None), refused


def view_value(key: str, default: Any, *, choices: Sequence[Any] | None = None) -> Any:
    """The value of the view parameter ``key`` of this page; written into the URL.

    In order: the widget's own value (the user just changed it), the value kept from an
    earlier visit of the page, the URL's (a link opened in a new session; checked by
    :func:`read_param`, a refused value noted with :func:`not_applied`), ``default``.
    Values not among ``choices`` are dropped (a run that is no longer loaded). For a
    setting without a widget on this page (the labeling settings on the labeling
    pages); a widget is bound with :func:`bind_view`.
    """
    ss = st.session_state
    view: ViewParam = ss[_PARAMS][key]
    mirror = _VIEW + key
    notes = _notes()
    refused: list[tuple[str, str]] = []
    if key in ss:
        value = ss[key]
    elif mirror in ss:
        value = ss[mirror]
    else:
        raw = st.query_params.get_all(view.param)
        value, refused = read_param(view, raw, choices) if raw else (None, [])
    if choices is not None and value is not None:
        allowed = list(choices)
        if view.many:
            value = [v for v in value if v in allowed] or None
        elif value not in allowed:
            value = None
    if value is None:
        value = list(default) if view.many else default
    note = notes.get(key)
    if refused:  # with those set_page refused in this run, if any
        note = notes[key] = _Note(view.param, (note.refused if note else []) + refused)
    if note is not None:
        if not note.bound:
            note.bound, note.instead = True, value
        if note.instead == value:
            note.show()
        else:  # the user chose another value: the link no longer matters
            del notes[key]
    ss[mirror] = value
    drawing_ = _DRAWING.get()
    if drawing_ is not None:
        drawing_.bound[key] = value
    _write_url(view, value, default)
    return value


def bind_view(key: str, default: Any, *, choices: Sequence[Any] | None = None) -> None:
    """Before drawing the page widget ``key``: give it its value (:func:`view_value`), and
    put it in the URL. Draw the widget with ``key=key`` and no default of its own."""
    st.session_state[key] = view_value(key, default, choices=choices)


def kept_value(key: str, default: Any) -> Any:
    """The value of a view parameter kept for the session (by :func:`view_value`), even
    when its page is not shown; ``default`` before it was ever bound."""
    ss = st.session_state
    return ss.get(_VIEW + key, default)


def keep_value(key: str, value: Any) -> None:
    """Set the kept value of a view parameter (shown by its widget when next bound while
    the widget has no state of its own: on another page, or after its key is dropped)."""
    st.session_state[_VIEW + key] = value


def _write_url(view: ViewParam, value: Any, default: Any) -> None:
    params = st.query_params
    before = params.get_all(view.param)
    if value == default or value == (list(default) if view.many else default):
        if view.param in params:
            del params[view.param]
    elif view.many:
        params[view.param] = [_text(v) for v in value]
    else:
        params[view.param] = _text(value)
    if params.get_all(view.param) != before:
        _url_changed()


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def full_link() -> str:
    """The address of the whole current view, for a decision or a note to keep: the page,
    every evaluation option and every parameter of the page bound so far in this run,
    each with its value *also when it is the default* (the link opens the same view
    after a default of the app changed), then the page's parameters not bound yet as the
    URL has them, and the dataset (``ds``, its version ``dsv``). Without the browser's
    address (in tests) the path and query alone (``/compare?...``)."""
    ss = st.session_state
    drawing_ = _DRAWING.get()
    bound = drawing_.bound if drawing_ is not None else {}
    pairs = list(state.get_options().to_query_params(every=True).items())
    if (dataset := st.query_params.get(state.DATASET_PARAM)):
        pairs.append((state.DATASET_PARAM, dataset))
        if (version := st.query_params.get(state.DATASET_VERSION_PARAM)):
            pairs.append((state.DATASET_VERSION_PARAM, version))
    params: dict[str, ViewParam] = ss.get(_PARAMS, {})
    for key, view in params.items():
        if key in bound:
            value = bound[key]
            pairs += [(view.param, _text(v)) for v in (value if view.many else [value])]
        else:
            pairs += [(view.param, v) for v in st.query_params.get_all(view.param)]
    base = str(st.get_option("server.baseUrlPath") or "")
    return (link_for(st.context.url, base, page_name(), pairs)
            or _path_query(base, page_name(), pairs))


def covers(keys: Iterable[str], key: str) -> bool:
    """Whether ``key`` is one of ``keys`` or made from one (``<one>.<more>``: the keys of
    a form drawn once per target, an uploader renewed after each use)."""
    return any(key == k or key.startswith(k + ".") for k in keys)


def current_link() -> str | None:
    """The address of the current view (page, options, selections), or ``None`` when the
    browser's address is unknown (e.g. in tests).

    Built from the page being run, not from the browser's path: Streamlit's
    ``st.context.url`` takes the page off the path by its name as a suffix, which after
    the menu's move from ``/labels_data`` to ``/labels_trend`` gave
    ``/labels_/labels_trend`` (the Data page's old address is ``/data``). Only the host
    comes from the browser; the app's path prefix is ``server.baseUrlPath``."""
    return link_for(st.context.url, str(st.get_option("server.baseUrlPath") or ""),
                    page_name(),
                    [(k, v) for k in st.query_params.keys() for v in st.query_params.get_all(k)])


def link_for(browser_url: str | None, base_path: str, page: str | None,
             pairs: Sequence[tuple[str, str]]) -> str | None:
    """The address of ``page`` (``"data"`` is the app's root) with the query ``pairs``, on
    the scheme and host of ``browser_url`` under ``base_path``; ``None`` without a URL.

    >>> link_for("http://h:8501/labels_/labels_trend", "", "labels_trend", [("k", "10")])
    'http://h:8501/labels_trend?k=10'
    >>> link_for("https://x.org/ireval/metrics", "/ireval/", "data", [])
    'https://x.org/ireval/'
    >>> link_for("http://h/", "", "metrics", [("run", "a b"), ("run", "c&d")])
    'http://h/metrics?run=a+b&run=c%26d'
    """
    from urllib.parse import urlsplit

    if not browser_url:
        return None
    parts = urlsplit(browser_url)
    if page is None:  # not drawn by the frame: the browser's path as it is
        return f"{parts.scheme}://{parts.netloc}{_path_query(base_path, None, pairs, parts.path)}"
    return f"{parts.scheme}://{parts.netloc}{_path_query(base_path, page, pairs)}"


def _path_query(base_path: str, page: str | None, pairs: Sequence[tuple[str, str]],
                path: str = "") -> str:
    """The path of ``page`` under ``base_path`` (``path`` when there is no page) and the
    query of ``pairs``: ``/compare?a=1``."""
    from urllib.parse import urlencode

    if page is None:
        path = path or "/"
    else:
        base = "/".join(p for p in base_path.split("/") if p)
        path = "/" + "/".join(p for p in (base, "" if page == "data" else page) if p)
        if page == "data" and base:
            path += "/"
    query = "?" + urlencode(list(pairs)) if pairs else ""
    return path + query
