"""Each page's own session-state keys and URL parameters, one module per page.

``ireval_app.keys.<page>`` holds the widget keys of the page ``pages/<page>.py`` (the
Data page: :mod:`ireval_app.keys.data`) and ``PARAMS``, the widgets whose values a link
restores (:class:`~ireval_app.views.ViewParam`: URL parameter, type and range) and
``LOCAL``, the widgets a link leaves out, each with why (a file, an action's input);
every keyed widget a page draws is in one of them, or is one of every page's
(:data:`ireval_app.state.OPTION_KEYS`, in the link; :data:`ireval_app.state.LOCAL`). Pages
and their tests import them from here: a page file runs Streamlit when imported, so the
keys a test clicks cannot live in it. What every page shares (data source, uploads,
dataset, options) is in :mod:`ireval_app.state`; the labeling settings every labeling
page uses are in :mod:`ireval_app.keys.labeling`.

Keys are ``"ireval.<page>.<widget>"``, so no two pages share one by accident.
"""
