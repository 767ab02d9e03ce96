"""The frame every page draws around itself, by one call: ``with frame.page("metrics"):``.

The app is Streamlit's own multipage layout: ``app.py`` is the Data page (URL ``/``),
``pages/<name>.py`` the other pages (URL ``/<name>``), and every script is run on its
own, so each one draws the frame. :func:`page` does, in this order:

1. the tab (title and the app's own icon, ``st.set_page_config``), then the sign-in gate
   (:func:`ireval_app.signin.gate`): a session that may not see the app (not signed in,
   or a server refused) sees why and nothing else, before anything is read;
2. the URL: the evaluation options are read from it on a session's first run, a
   linked saved dataset is opened (``?ds=``), only this page's parameters are kept
   (:func:`ireval_app.views.set_page`), and the labeling settings are bound on a
   labeling page; a value that cannot be applied is noted at the top of the page;
3. the sidebar, *before* the page runs, so that a page stopped by ``st.stop()`` still
   has it: who is signed in (or that nobody signs in), the menu (:data:`SECTIONS`, one
   ``st.page_link`` per page, Streamlit's own navigation being hidden by
   ``client.showSidebarNavigation = false``), the dataset,
   the link to this view (kept up to date while the page changes the URL) and, on the
   results pages, the evaluation options;
4. the page itself (the body of the ``with`` block);
5. when the page ran to its end: the dataset and link again (the page may have
   changed them), then the background work for the next page, started once no
   session's page is being drawn (:func:`ireval_app.evaluation.prefetch_when_idle`;
   every page's run is counted by :func:`ireval_app.evaluation.page_run`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ireval_core import charts

from . import evaluation, loading, signin, state, views, widgets, workspace_glue
from .keys import (
    admin,
    compare,
    curves,
    data,
    efficiency,
    judging,
    lab,
    labels_changes,
    labels_data,
    labels_gsb,
    labels_judge,
    labels_raters,
    labels_trend,
    meeting,
    metrics,
    ndcg_vs_dcg,
    queries,
    rounds,
)
from .text import inline_code
from .views import ViewParam

__all__ = ["FAVICON", "PAGES", "SECTIONS", "PageInfo", "menu", "page"]

FAVICON = Path(__file__).resolve().parent / "favicon.svg"
"""The tab icon: a file of the app (see :func:`page`)."""

TAB_TITLE = "ireval"
"""The browser tab's title, on every page."""

charts.use_template_by_default()  # every chart of the app: its template from creation


@dataclass(frozen=True)
class PageInfo:
    """One page of the app.

    ``name`` is its URL path (``"data"``: the Data page, at ``/``), ``path`` its script
    relative to ``app.py``, ``params`` its URL parameters (its module of
    :mod:`ireval_app.keys`), ``results`` whether it shows results of the loaded
    dataset (the default data is loaded before it runs), ``labeling`` whether it is a
    Monthly labeling page (no evaluation options, no dataset: the labeling settings;
    ``results`` does not apply), ``admin`` whether it is for the admins of a project only
    (in the menu only for a signed-in admin; no options, no dataset).
    """

    name: str
    path: str
    title: str
    icon: str
    params: tuple[ViewParam, ...] = ()
    results: bool = True
    labeling: bool = False
    admin: bool = False


SECTIONS: dict[str, tuple[PageInfo, ...]] = {
    "Evaluate": (
        PageInfo("data", widgets.DATA_PAGE, "Data", ":material/database:", data.PARAMS,
                 results=False),
        PageInfo("metrics", "pages/metrics.py", "Metrics", ":material/table_chart:",
                 metrics.PARAMS),
        PageInfo("curves", "pages/curves.py", "Curves", ":material/show_chart:", curves.PARAMS),
        PageInfo("compare", "pages/compare.py", "Compare", ":material/compare_arrows:",
                 compare.PARAMS),
        PageInfo("queries", "pages/queries.py", "Queries", ":material/manage_search:",
                 queries.PARAMS),
        PageInfo("efficiency", "pages/efficiency.py", "Efficiency", ":material/speed:",
                 efficiency.PARAMS),
        PageInfo("rounds", "pages/rounds.py", "Qrels rounds", ":material/history:",
                 rounds.PARAMS),
        PageInfo("ndcg_vs_dcg", "pages/ndcg_vs_dcg.py", "nDCG vs DCG", ":material/balance:",
                 ndcg_vs_dcg.PARAMS),
        PageInfo("judging", "pages/judging.py", "Judging", ":material/rule:", judging.PARAMS),
    ),
    "Monthly labeling": (
        PageInfo("labels_data", "pages/labels_data.py", "Labeling data",
                 ":material/upload_file:", labels_data.PARAMS, labeling=True),
        PageInfo("labels_trend", "pages/labels_trend.py", "Trend", ":material/trending_up:",
                 labels_trend.PARAMS, labeling=True),
        PageInfo("labels_raters", "pages/labels_raters.py", "Raters", ":material/group:",
                 labels_raters.PARAMS, labeling=True),
        PageInfo("labels_changes", "pages/labels_changes.py", "Label changes",
                 ":material/published_with_changes:", labels_changes.PARAMS, labeling=True),
        PageInfo("labels_gsb", "pages/labels_gsb.py", "Side by side",
                 ":material/thumbs_up_down:", labels_gsb.PARAMS, labeling=True),
        PageInfo("labels_judge", "pages/labels_judge.py", "Model judge",
                 ":material/smart_toy:", labels_judge.PARAMS, labeling=True),
    ),
    "Meet and learn": (
        PageInfo("meeting", "pages/meeting.py", "Meeting", ":material/groups:", meeting.PARAMS),
        PageInfo("lab", "pages/lab.py", "Metric lab", ":material/school:", lab.PARAMS,
                 results=False),  # loads the dataset only for a query of a loaded run
    ),
    "Team": (
        PageInfo("admin", "pages/admin.py", "Admin", ":material/admin_panel_settings:",
                 admin.PARAMS, results=False, admin=True),
    ),
}
"""The menu: section -> pages, in order (the same sections, titles and icons as before)."""

PAGES: dict[str, PageInfo] = {p.name: p for pages in SECTIONS.values() for p in pages}
"""Every page by its name (its URL path; ``"data"`` for the Data page)."""


LAYOUT_CSS = """<style>
[data-testid="stMultiSelectTagsContainer"] {
  flex-wrap: wrap !important; overflow: visible !important; height: auto !important; }
[data-testid="stMultiSelectTagsContainer"] > [role="group"] { flex-wrap: wrap !important; }
[data-testid="stMultiSelect"] [role="group"]:has(> [data-testid="stMultiSelectTagsContainer"]) {
  height: auto !important; max-height: none !important; min-height: 40px; }
[data-testid="stMarkdownContainer"] pre, [data-testid="stMarkdownContainer"] pre code {
  white-space: pre-wrap !important; overflow-wrap: anywhere; }
.st-key-ireval-link code { overflow-wrap: anywhere; }
</style>"""
"""What every page adds to Streamlit's look so that it fits a laptop's 1280 px: a
multiselect shows all its chips (on as many lines as they need; Streamlit scrolls them
sideways in one line, hiding the last), and a code block in Markdown (an error's list of
problems) wraps its long lines instead of scrolling them, as does the link box's address."""


@contextmanager
def page(name: str) -> Iterator[None]:
    """Draw the frame of the page ``name`` (a key of :data:`PAGES`) around the block.

    The sidebar is drawn before the block runs, so ``st.stop()`` inside it keeps the
    frame; what can change while the page runs (the dataset, the link) is drawn again
    after it, when it ran to its end.
    """
    info = PAGES[name]
    with evaluation.page_run():  # while it runs, the background work waits
        yield from _page(info)


def _page(info: PageInfo) -> Iterator[None]:
    """:func:`page`'s frame around its block (a generator: the block runs at its yield)."""
    # The tab icon is a file of the app (sent inline as a data: URL). Without it Streamlit
    # shows its own icon, or a page's Material icon fetched from fonts.gstatic.com: a
    # request to another host, a broken icon for a team without internet access.
    st.set_page_config(page_title=TAB_TITLE, page_icon=str(FAVICON), layout="wide")
    st.html(LAYOUT_CSS)
    # Nothing of the page is read or drawn before the gate lets the session through.
    person = signin.gate()
    is_admin = person is not None and _admitted(person)
    notes = st.container()  # top of the page: values of the link that were not applied
    with st.sidebar:
        signin.account_line(person)
        menu(admin=is_admin)
        glance, glance_problems = st.empty(), st.empty()
        link = st.expander("Link to this view", icon=":material/link:").container(
            key="ireval-link").empty()
        options = None if info.labeling or info.admin else st.container()

    def show_link() -> None:
        # The address as a Markdown code span, selected whole by a triple click: not
        # st.code, whose syntax highlighter (a 1.5 MB script) the browser loaded and ran
        # on every page load, about half a second of its CPU for one line of plain text.
        address = views.current_link()
        if address is not None:
            link.markdown(inline_code(address))

    def show_glance() -> None:
        if not (info.labeling or info.admin):
            widgets.dataset_glance(state.get_dataset(), glance, glance_problems)

    def note(text: str) -> None:
        notes.warning(widgets.md_escape(text), icon=":material/link_off:")

    with views.drawing(note, show_link):
        # The options come from the URL on a session's first run, then only from their
        # widgets; the URL is kept in step so that a reload or a copied link restores them.
        state.get_options()
        loading.restore_dataset_from_url()  # a link to a saved dataset: open it (first run)
        if not info.labeling:
            loading.follow_reading_rule()  # the version's rule for '#' lines
        views.set_page(info.name, info.params)
        state.sync_query_params()
        if info.labeling:
            from . import labels_widgets  # the labeling modules load scipy: on those pages

            labels_widgets.bind_settings()
        elif info.results:
            loading.default_dataset()  # the sample, when nothing else is loaded
        show_glance()
        show_link()
        if options is not None:
            with options:  # the evaluation options do not apply to labeled lists
                widgets.options_panel()
        yield
        show_glance()
        show_link()
    # While the user reads this page, join the runs for the current options in the
    # background, then evaluate the measures this session's pages use (after an option
    # change, the other pages' values): the next results page finds them made.
    if not info.labeling and (loaded := state.get_dataset()) is not None:
        evaluation.prefetch_when_idle(loaded, state.get_options())


def menu(*, admin: bool = False) -> None:
    """The pages in their sections, as links (in the sidebar, in a container keyed
    ``ireval-menu``); Streamlit highlights the link of the page shown. The admin pages
    only when ``admin`` (a signed-in admin of a project)."""
    with st.container(key="ireval-menu"):
        for section, pages in SECTIONS.items():
            shown = [p for p in pages if admin or not p.admin]
            if shown:
                st.caption(f"**{section}**")
            for p in shown:
                st.page_link(p.path, label=p.title, icon=p.icon)


def _admitted(person: signin.Person) -> bool:
    """Let a signed-in person through when they have a role in a project (whether they
    are an admin of one: the admin pages are in their menu); else draw, with the account
    line, that an admin must give them access (or why the workspace cannot tell) and
    stop: nothing of the page, no data."""
    projects = workspace_glue.admit(person)
    if isinstance(projects, list) and projects:
        return workspace_glue.is_admin(projects)
    with st.sidebar:
        signin.account_line(person)
    st.title("ireval")
    if isinstance(projects, workspace_glue.WorkspaceProblem):
        st.warning(widgets.md_escape(projects.message), icon=":material/cloud_off:")
    else:
        st.info(widgets.md_escape(
            f"You are signed in as {person.name} ({person.email}), but you have no access "
            f"to this workbench yet: ask an admin of the project "
            f"'{workspace_glue.DEFAULT_PROJECT}' for access (the Admin page adds members). "
            "Then reload this page."), icon=":material/lock:")
    st.stop()
    return False
