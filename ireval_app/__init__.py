"""Streamlit glue for the ireval app: the only package besides ``app.py`` and ``pages/``
that imports Streamlit.

* :mod:`ireval_app.frame`: the frame every page draws (``with frame.page(name):``) and
  the pages' menu.
* :mod:`ireval_app.keys`: each page's widget keys and URL parameters, one module a page.
* :mod:`ireval_app.views`: a page's selections in its URL, checked when read back.
* :mod:`ireval_app.state`: what every page shares in session state, behind typed accessors.
* :mod:`ireval_app.cache`: cached reading of uploads into ``ireval_core`` objects;
  :mod:`ireval_app.shared_cache`: the byte-bounded cache and ``@shared``, keyed by
  explicit arguments only; the ``*_glue`` modules and :mod:`ireval_app.evaluation`:
  each page's computations, cached.
* :mod:`ireval_app.widgets`: widgets and renderers shared by the pages (uploaders, error and
  warning boxes, the sidebar summary, :func:`~ireval_app.widgets.require_dataset`).

Pages lay out widgets and call these modules and ``ireval_core``; they compute nothing.
"""
