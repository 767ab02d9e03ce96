"""``/data``: the address of the Data page before it moved to ``/``. Links shared with that
address keep working: this page opens the Data page with the same query parameters."""

from __future__ import annotations

import streamlit as st

from ireval_app import widgets

params = st.query_params
st.switch_page(widgets.DATA_PAGE, query_params=[(name, value) for name in params.keys()
                                                for value in params.get_all(name)])
