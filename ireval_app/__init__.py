"""Streamlit glue for the ireval app: the only package besides ``pages/`` that imports Streamlit.

* :mod:`ireval_app.state`: every session-state key, behind typed accessors.
* :mod:`ireval_app.cache`: cached reading of uploads into ``ireval_core`` objects, keyed by
  explicit arguments only.
* :mod:`ireval_app.widgets`: widgets and renderers shared by the pages (uploaders, error and
  warning boxes, the sidebar summary, :func:`~ireval_app.widgets.require_dataset`).

Pages lay out widgets and call these modules and ``ireval_core``; they compute nothing.
"""
