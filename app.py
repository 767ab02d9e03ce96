"""ireval: search-evaluation workbench. Router and frame only; the pages are in ``pages/``.

Run with ``streamlit run app.py``.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ireval_app import evaluation, state, widgets

ROOT = Path(__file__).resolve().parent

# section -> (path, title, icon); a page is shown once its file exists. Data is the default.
SECTIONS: dict[str, list[tuple[str, str, str]]] = {
    "Evaluate": [
        (widgets.DATA_PAGE, "Data", ":material/database:"),
        ("pages/metrics.py", "Metrics", ":material/table_chart:"),
        ("pages/curves.py", "Curves", ":material/show_chart:"),
        ("pages/compare.py", "Compare", ":material/compare_arrows:"),
        ("pages/queries.py", "Queries", ":material/manage_search:"),
        ("pages/efficiency.py", "Efficiency", ":material/speed:"),
        ("pages/rounds.py", "Qrels rounds", ":material/history:"),
        ("pages/ndcg_vs_dcg.py", "nDCG vs DCG", ":material/balance:"),
    ],
    "Monthly labeling": [
        ("pages/labels_data.py", "Labeling data", ":material/upload_file:"),
        ("pages/labels_trend.py", "Trend", ":material/trending_up:"),
        ("pages/labels_raters.py", "Raters", ":material/group:"),
        ("pages/labels_changes.py", "Label changes", ":material/published_with_changes:"),
        ("pages/labels_gsb.py", "Side by side", ":material/thumbs_up_down:"),
    ],
    "Meet and learn": [
        ("pages/meeting.py", "Meeting", ":material/groups:"),
        ("pages/lab.py", "Metric lab", ":material/school:"),
    ],
}
LABELING = {path for path, _, _ in SECTIONS["Monthly labeling"]}

# The tab icon is a file of the app (sent inline as a data: URL). Without it Streamlit shows
# the current page's Material icon, fetched from fonts.gstatic.com: the one request the app
# made to another host, a broken icon for a team without internet access.
st.set_page_config(page_title="ireval", page_icon=str(ROOT / "ireval_app" / "favicon.svg"),
                   layout="wide")
page = st.navigation({
    section: [st.Page(path, title=title, icon=icon, default=(path == widgets.DATA_PAGE))
              for path, title, icon in pages if (ROOT / path).is_file()]
    for section, pages in SECTIONS.items()
}, expanded=True)
labeling = (page.url_path or "data") in {Path(p).stem for p in LABELING}
# The options come from the URL on a session's first run, then only from their widgets;
# the URL is kept in step so that a reload or a copied link restores them.
state.get_options()
widgets.restore_dataset_from_url()  # a link to a saved dataset: open it (first run only)
state.set_page(page.url_path or "data")
state.sync_query_params()
# The sidebar shows what is loaded, drawn after the page ran (the page may load data) into a
# slot placed before it. A page stopped by widgets.require_dataset() draws it itself.
with st.sidebar:
    glance = st.container()
    if not labeling:  # the evaluation options and dataset do not apply to labeled lists
        widgets.options_panel()
page.run()
with glance:
    if not labeling:
        widgets.dataset_glance(state.get_dataset())
    widgets.link_box()
# While the user reads this page, join the runs for the current options in the background,
# then evaluate the measures this session's pages use (after an option change, the other
# pages' values): the next results page finds them made (ireval_app.evaluation.prefetch).
if not labeling and (loaded := state.get_dataset()) is not None:
    evaluation.prefetch(loaded, state.get_options())
