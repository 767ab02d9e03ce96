"""Labeling data page: the monthly labeled result lists (and side-by-side judgments)."""

from __future__ import annotations

import streamlit as st

from ireval_app import (
    files_widgets,
    frame,
    labels_glue,
    labels_widgets,
    state,
    views,
    widgets,
    workspace_glue,
    workspace_widgets,
)
from ireval_app import labels_data_glue as ldg
from ireval_app.keys import labeling
from ireval_app.keys import labels_data as keys
from ireval_core.errors import FormatError, IrevalError
from ireval_core.labels import BUILTIN_LABEL_MAPS, Judgments
from ireval_core.workspace import (
    DatasetInfo,
    FileNameTakenError,
    FileRounds,
    RoundsInSetError,
)


def _saved_sets() -> None:
    """Open a labeling set saved in the workspace, at any of its versions; add this month's
    files to it as its next version. When the workspace cannot be used, say why, where and
    what to do."""
    listed = ldg.saved_sets()
    if isinstance(listed, workspace_glue.WorkspaceProblem):
        workspace_widgets.workspace_problem(listed)
        return
    sets = {i.short_id: i for i in listed if i.files_of_kind("labels")}
    if not sets:
        st.info("No labeling set saved yet: upload labeling files, then save them.",
                icon=":material/info:")
        return
    shown = labels_widgets.opened()
    projects = workspace_glue.shows_projects(list(sets.values()))
    views.bind_view(keys.SAVED_PICK, "", choices=list(sets))
    state.keep_choice(keys.SAVED_PICK, list(sets), next(iter(sets)))
    left, right = st.columns([3, 2])
    pick = left.selectbox(
        "Saved labeling set", list(sets), key=keys.SAVED_PICK,
        on_change=lambda: labels_widgets.choose_saved(str(state.widget_value(keys.SAVED_PICK))),
        format_func=lambda i: (f"{sets[i].name}  ·  "
                               + (f"project {sets[i].project}  ·  " if projects else "")
                               + f"{_count(sets[i])}  ·  version "
                               f"{sets[i].latest_version}  ·  id {i}"))
    if shown is None or shown.info.short_id != pick:
        if labels_widgets.open_once(pick):  # once: a failure is shown above
            st.rerun()
        return
    labels_widgets.shown_as_chosen()
    numbers = [v.version for v in reversed(shown.versions)]
    views.bind_view(keys.SAVED_VERSION, 0, choices=numbers)
    right.selectbox("Version", numbers, key=keys.SAVED_VERSION,
                    format_func=lambda n: f"version {n}" + (" (newest)" if n == numbers[0]
                                                            else ""),
                    help="Every version of the set stays readable: a link names its version "
                         "and keeps showing its numbers after newer months are added")
    info = shown.info
    where = (f", project {widgets.md_escape(info.project)}"
             if workspace_glue.shows_projects([info]) else "")
    st.caption(f"Set **{widgets.md_escape(info.name)}** (id `{info.short_id}`{where}), version "
               f"{info.version} of {info.latest_version}: "
               f"{labels_widgets.names([f.name for f in info.files])}.")
    with st.expander(f"Versions of {info.name} ({len(shown.versions)})",
                     icon=":material/history:", expanded=len(shown.versions) > 1):
        st.dataframe(labels_glue.versions_table(shown.versions), hide_index=True,
                     column_config={
                         "Rows added": st.column_config.NumberColumn(
                             help="Rows of the added files, as read when they were added "
                                  "(blank: not recorded, the set was saved before versions)"),
                         "Replaced": st.column_config.TextColumn(
                             help="Files of the previous version this one leaves out: their "
                                  "rounds were replaced (the previous version keeps them)")})
    if workspace_glue.may("rater", info.id):  # labeling rounds: a rater's to add
        _add_form(shown)


def _count(info: DatasetInfo) -> str:
    """``3 rounds``, ``1 round``, ``1 file`` (a set saved before rounds were recorded)."""
    n, what = (len(info.rounds), "round") if info.rounds else (len(info.files), "file")
    return f"{n} {what}{'s' if n != 1 else ''}"


def _stated(kind: str, name: str, data: bytes) -> FileRounds | None:
    """The rounds and rows of a file, or None after showing why it cannot be read."""
    got = labels_glue.file_rounds_cached(kind, name, data,
                                         str(labels_widgets.settings()["round"]))
    if isinstance(got, FormatError):
        files_widgets.show_format_error(got, hint=labels_widgets.conflict_hint(got))
        return None
    return got


def _add_form(shown: labels_widgets.SavedView) -> None:
    """Add this month's files to the set as its next version (the newest version grows)."""
    info = shown.info
    newest = shown.versions[-1]
    added = st.file_uploader(f"Add labeling files to {info.name} (e.g. this month's round)",
                             type=None, accept_multiple_files=True,
                             key=keys.add_uploader(labels_widgets.added()))
    if not added:
        return
    files = [("labels", f.name, f.getvalue()) for f in added]
    stated = {name: _stated(kind, name, data) for kind, name, data in files}
    if any(v is None for v in stated.values()):
        return
    rounds = [r for v in stated.values() for r in v.rounds]  # type: ignore[union-attr]
    got = ldg.newest_files(info.id, newest.version)  # and those saved before versions
    if isinstance(got, workspace_glue.WorkspaceProblem):
        workspace_widgets.workspace_problem(got, lead="Cannot add: ")
        return
    latest, unknown = got
    for kind, name, data in unknown:
        stated_old = _stated(kind, name, data)
        if stated_old is None:
            return
        stated[name] = stated_old
    have = {r: f.name for f in latest.files
            for r in (f.rounds if f.rounds is not None else stated[f.name].rounds)}  # type: ignore[union-attr]
    both = [r for r in rounds if r in have]
    st.caption(f"The added file{'s hold' if len(files) > 1 else ' holds'} round"
               f"{'s' if len(rounds) != 1 else ''} {labels_widgets.names(rounds)} ("
               f"{sum(v.rows for v in stated.values() if v):,} rows).")  # type: ignore[union-attr]
    with st.form("ireval.labels.add_form"):
        st.markdown(f"**Add to set {widgets.md_escape(info.name)}** (as version "
                    f"{newest.version + 1}; versions 1 to {newest.version} stay as they are)")
        replace = False
        if both:
            st.warning(f"Round{'s' if len(both) > 1 else ''} {labels_widgets.names(both)} "
                       f"{'are' if len(both) > 1 else 'is'} already in the set (file"
                       f" {labels_widgets.names(sorted({have[r] for r in both}))}). Adding "
                       "is refused unless you replace "
                       f"{'them' if len(both) > 1 else 'it'}.", icon=":material/warning:")
            replace = st.checkbox(
                f"Replace round{'s' if len(both) > 1 else ''} {', '.join(both)} in the new "
                "version", key=keys.REPLACE,
                help="The file holding the round is left out of the new version; the "
                     "earlier versions keep it, and links to them keep their numbers")
        note = st.text_input("Note (optional)", key=keys.ADD_NOTE,
                             placeholder="e.g. July labels, relabeled after the guideline fix")
        workspace_widgets.author_field()  # asked once per session: then prefilled
        if not st.form_submit_button(f"Add to set {info.name}", icon=":material/add:",
                                     type="primary"):
            return
    author = workspace_widgets.author()
    if not author:
        st.error("Adding needs your name.", icon=":material/error:")
        return
    grown = workspace_widgets.written(ldg.add_to_set(
        info.id, files, {n: v for n, v in stated.items() if v is not None}, author=author,
        replace=replace, note=note.strip()), lead="Not added: ")
    if isinstance(grown, RoundsInSetError):
        st.error(_refused_words(grown, info.name), icon=":material/error:")
        return
    if isinstance(grown, FileNameTakenError):
        taken = labels_widgets.names(list(grown.names))
        st.error(f"Not added: the set **{widgets.md_escape(info.name)}** already has a file "
                 f"named {taken} (a file's name is part of the set). Rename this month's file "
                 "before uploading it (e.g. with its month in the name), then add again.",
                 icon=":material/error:")
        return
    if grown is None:
        return
    st.toast(f"Added to {grown.name}: version {grown.version}")
    labels_widgets.choose_saved(grown.short_id, grown.version)
    # a new uploader, empty: the next month is added alone (the old one kept this file)
    labels_widgets.count_add()
    st.rerun()


def _refused_words(exc: RoundsInSetError, name: str) -> str:
    """Why the files were not added to the set ``name``, and what to do, in this page's
    terms (the form's checkbox, the uploader)."""
    rounds, files = labels_widgets.names(list(exc.rounds)), labels_widgets.names(list(exc.files))
    s = "s" if len(exc.rounds) > 1 else ""
    if exc.replacing:
        return (f"Not added: replacing {files} would drop round{s} {rounds} from the set "
                f"**{widgets.md_escape(name)}**, and the added files do not hold "
                f"{'them' if s else 'it'}. Upload a file holding every round of {files} "
                "(the new one among them), then add again.")
    return (f"Not added: round{s} {rounds} {'are' if s else 'is'} already in the set "
            f"**{widgets.md_escape(name)}** (file{'s' if len(exc.files) > 1 else ''} "
            f"{files}). To add this month, remove from the uploader above the file"
            f"{'s' if len(exc.files) > 1 else ''} holding {'them' if s else 'it'}; to "
            f"relabel {'them' if s else 'it'}, tick \"Replace round{s} "
            f"{', '.join(exc.rounds)} in the new version\" and add again.")


def _save_form(labels: labels_glue.Files, gsb: labels_glue.Files, title: str) -> None:
    """Save labeling files to the workspace (the same files are one set, stored once), with
    each file's rounds and rows, so that next month's file can be added to the set."""
    files = [("labels", n, d) for n, d in labels.files] + [("gsb", n, d) for n, d in gsb.files]
    files_id = labels_glue.workspace_id(f"{labels.key}|{gsb.key}", tuple(files))
    try:
        existing = ldg.saved_as(files_id)
    except IrevalError as exc:  # saved in a project this person may not read
        st.warning(widgets.md_escape(f"Not saved: {exc}"), icon=":material/cloud_off:")
        return
    if isinstance(existing, workspace_glue.WorkspaceProblem):
        workspace_widgets.workspace_problem(existing, lead="Not saved: ")
        return
    if existing is not None:
        st.success(f"These files are saved in the workspace as "
                   f"**{widgets.md_escape(existing.name)}**.", icon=":material/cloud_done:")
        return
    projects = workspace_glue.projects_allowing("editor")
    if isinstance(projects, workspace_glue.WorkspaceProblem):
        workspace_widgets.workspace_problem(projects, lead="Not saved: ")
        return
    if not projects:
        st.caption("Saving a labeling set needs the role editor in a project (adding a round "
                   "to a saved set, rater): ask an admin of the project.")
        return
    with st.form("ireval.labels.save_form"):
        st.markdown(f"**{title}**")
        name = st.text_input("Name", key=keys.SAVE_NAME,
                             placeholder="e.g. search quality labels 2026")
        project = workspace_widgets.project_choice(projects, keys.SAVE_PROJECT)
        workspace_widgets.author_field()
        if st.form_submit_button("Save", icon=":material/cloud_upload:", type="primary"):
            author = workspace_widgets.author()
            if not name.strip() or not author:
                st.error("A saved set needs a name and your name.", icon=":material/error:")
                return
            stated = {n: _stated(k, n, d) for k, n, d in files}
            if any(v is None for v in stated.values()):
                return
            info = workspace_widgets.written(ldg.save_set(
                files, {n: v for n, v in stated.items() if v is not None}, name=name.strip(),
                author=author, project=project), lead="Not saved: ")
            if info is None:
                return
            state.set_last_project(info.project)
            st.toast(f"Saved as {info.name}")
            labels_widgets.choose_saved(info.short_id, info.version)
            labels_widgets.set_source("saved")
            st.rerun()


def _uploads() -> None:
    """The uploaders of labeling, side-by-side and anchor files, and the form saving them to
    the workspace once every file can be read."""
    left, right = st.columns(2)
    labels = left.file_uploader("Labeled result lists (one or more files)", type=None,
                                accept_multiple_files=True, key=keys.UPLOADER,
                                help="CSV, TSV, Excel (.xlsx) or Parquet, plain or gzip")
    gsb = right.file_uploader("Side-by-side judgments (optional)", type=None,
                              accept_multiple_files=True, key=keys.GSB_UPLOADER,
                              help="Columns round, query, judgment (G/S/B, good/same/bad, "
                                   "better/same/worse), optional rater")
    if labels:
        labels_widgets.set_files(labels=[(f.name, f.getvalue()) for f in labels])
    if gsb:
        labels_widgets.set_files(gsb=[(f.name, f.getvalue()) for f in gsb])
    kept, kept_gsb = labels_widgets.get_files()
    if (kept and not labels) or (kept_gsb and not gsb):
        st.caption("Still loaded from an earlier upload: "
                   + labels_widgets.names([*kept.names, *kept_gsb.names])
                   + ". Uploading new files replaces them.")
    anchors = st.file_uploader("Anchor items (optional)", type=None,
                               accept_multiple_files=True, key=keys.ANCHOR_UPLOADER,
                               help="Query–document pairs re-labeled every month: columns "
                                    "round, query, doc, label, optional rater (or the "
                                    "labeling file's rows with an anchor column 1/0)")
    if anchors:
        labels_widgets.set_anchor_files([(f.name, f.getvalue()) for f in anchors])
    s = labels_widgets.settings()
    failed = (bool(kept) and labels_glue.load_judgments(
        kept, str(s["label_map"]), str(s["conflicts"]), str(s["round"])).error is not None
    ) or (bool(kept_gsb) and labels_glue.load_gsb(kept_gsb).error is not None)
    if failed:
        st.caption(":material/block: Saving is offered once every file can be read (the "
                   "problems are listed below).")
    if kept and not failed:  # no Save form for a file that could not be read
        _save_form(kept, kept_gsb,
                   "Save these files to the workspace (next month, open the set under "
                   "Saved labeling sets and add the new round to it)")


def _settings() -> None:
    """The labeling settings every labeling page uses: label map, how raters combine, K, gain,
    the conflict rule, the round of tool exports."""
    st.subheader("Settings")
    c1, c2, c3, c4 = st.columns([3, 2, 1, 1])
    views.bind_view(labeling.MAP, labeling.DEFAULTS[labeling.MAP])
    c1.text_input(
        "Label map (empty: detected from the labels)", key=labeling.MAP,
        placeholder="none=0,low=1,mid=2,high=3",
        help="Words or numbers to grades, e.g. none=0,low=1,mid=2,high=3. Built in: "
             + "; ".join(f"{name}: {m}" for name, m in BUILTIN_LABEL_MAPS.items()))
    views.bind_view(labeling.COMBINE, labeling.DEFAULTS[labeling.COMBINE],
                    choices=labeling.COMBINES)
    c2.selectbox("Combine raters by", labeling.COMBINES, key=labeling.COMBINE,
                 help="Several raters' labels of a result make one label: their mean, median, "
                      "or majority (most frequent; ties: the lower label)")
    views.bind_view(labeling.K, labeling.DEFAULTS[labeling.K])
    c3.number_input("K (DCG@K)", min_value=labeling.K_MIN, max_value=labeling.K_MAX, step=1,
                    key=labeling.K)
    views.bind_view(labeling.GAIN, labeling.DEFAULTS[labeling.GAIN], choices=labeling.GAINS)
    c4.radio("Gain", labeling.GAINS, key=labeling.GAIN,
             help="linear: gain = label (the seed's formula); exp: 2^label − 1")
    c5, c6 = st.columns([5, 2])
    views.bind_view(labeling.CONFLICTS, labeling.DEFAULTS[labeling.CONFLICTS],
                    choices=labeling.CONFLICT_CHOICES)
    c5.radio("One rater, one document, several lists", labeling.CONFLICT_CHOICES,
             key=labeling.CONFLICTS, horizontal=True,
             format_func=labels_widgets.CONFLICT_WORDS.__getitem__,
             help="When one rater labels the same document differently in two systems' lists "
                  "of a round: refuse the files (the default: every such label is listed), "
                  "keep one label (the rater's mean, or the label on the latest row: later "
                  "file, later line), or count each system's list as a separate rater. The "
                  "choice is stated next to every number and kept in the link.")
    views.bind_view(labeling.ROUND, labeling.DEFAULTS[labeling.ROUND])
    c6.text_input("Round of tool exports", key=labeling.ROUND, placeholder="e.g. 2026-05",
                  help="The round (month) of a Quepid export, or of Label Studio tasks without "
                       "a round key: those exports name none. Files with a round column keep "
                       "theirs.")


def _rounds(loaded: labels_glue.Loaded, loaded_gsb: labels_glue.Loaded | None,
            j: Judgments) -> None:
    """What was read: rounds, systems, raters, rows and labels, the files and their warnings."""
    st.subheader("Rounds")
    m = st.columns(6)
    m[0].metric("Rounds", f"{len(j.rounds):,}")
    m[1].metric("Systems", f"{len(j.systems):,}")
    m[2].metric("Raters", f"{len(j.raters):,}")
    read = loaded.judgments if loaded.judgments is not None else j  # every rater's files
    n_labels = len(read.label_table())
    m[3].metric("File rows", f"{read.n_rows:,}",
                help="Rows read from the files (header rows not counted): one per shown "
                     "result, and per rater when several label it")
    m[4].metric("Labels", f"{n_labels:,}",
                help="One per (result, rater), every rater's (a model judge's too): a "
                     "rater's label of a document shown in several systems' lists of a round "
                     "is one label; rows without a label are not counted")
    m[5].metric("Segments", f"{len(j.segments):,}")
    unlabeled = read.n_rows - read.n_rows_labeled
    st.caption(
        f"{read.n_rows:,} rows read: {read.n_rows_labeled:,} with a label"
        + (f", {unlabeled:,} without (shown, not labeled)" if unlabeled else "")
        + (f"; the labeled rows make {n_labels:,} labels, as "
           f"{read.n_rows_labeled - n_labels:,} of them label again a document the same rater "
           "labeled in another system's list" if n_labels < read.n_rows_labeled else "")
        + f"; {read.n_shown:,} shown results"
        + widgets.md_escape(labels_widgets.conflict_words(read.conflicts)) + ".")
    st.caption(f"Files: {labels_widgets.names(list(loaded.names))}. Label map: "
               f"{widgets.md_escape(f'{j.label_map.name} ({j.label_map.describe()})')}. Rounds: "
               f"{labels_widgets.names(list(j.rounds))}.")
    files_widgets.show_warnings(j.warnings)  # encoding read, hidden sheets, mixed rounds, ...
    if loaded_gsb is not None:
        if loaded_gsb.error is not None:
            files_widgets.show_format_error(loaded_gsb.error)
        elif loaded_gsb.gsb is not None:
            st.caption(f"Side-by-side judgments: {len(loaded_gsb.gsb.table):,} rows from "
                       f"{labels_widgets.names(list(loaded_gsb.names))}.")
            files_widgets.show_warnings(loaded_gsb.gsb.warnings)


with frame.page("labels_data"):
    st.title("Labeling data")
    st.caption("Every month people label the top K results that real searches showed. One row per "
               "labeled shown result: round (month), query, doc, position, label; optional rater, "
               "system (bucket), score (model score), segment, weight. Rounds accumulate: upload "
               "every month's file.")

    views.bind_view(keys.SOURCE, "sample", choices=keys.SOURCES)
    source = st.radio("Labeling files", keys.SOURCES, key=keys.SOURCE,
                      horizontal=True, label_visibility="collapsed",
                      format_func={"sample": "Use the bundled sample",
                                   "upload": "Upload labeling files",
                                   "saved": "Saved labeling sets"}.__getitem__)

    if source == "upload":
        _uploads()
    elif source == "saved":
        _saved_sets()

    # ------------------------------------------------------------------------- settings
    _settings()

    # ------------------------------------------------------------------------- what was read
    loaded, loaded_gsb, sample = labels_widgets.current()
    if sample:
        st.info("**Sample labeling data** (`sample_data/labels/`): six monthly rounds, two systems "
                "(control, treatment), three raters with overlap, segments and model scores. Two "
                "events are planted: one month where recall breaks for treatment, and one month "
                "where a rater drifts. See the Trend and Raters pages.",
                icon=":material/science:")
    if loaded is None:
        st.info("Upload labeling files to see the rounds.", icon=":material/upload_file:")
        st.stop()
    _, j = labels_widgets.require_judgments(loaded, link=False)
    _rounds(loaded, loaded_gsb, j)
