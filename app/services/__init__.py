"""The only place :mod:`app` calls :mod:`explainers`.

One module per page family; each builds its explainers once per workspace
(:func:`~app.services._core.lazy`) and memoizes per-row results
(:func:`~app.services._core.row_cache`). Callbacks call exactly one function
from here and render what it returns.
"""
from ._core import first_request, init, workspace
from .attention import AttentionView, attention_view, has_attention_model
from .persuasive import PersuasiveView, persuasive
from .surrogates import surrogate
from .tabular import (
    LocalView,
    check_row,
    data_page,
    default_row,
    global_importance,
    lime_row,
    local_view,
    model_summary,
    random_row,
    row_status,
    shap_row,
)

__all__ = [
    "AttentionView", "LocalView", "PersuasiveView", "attention_view", "check_row", "data_page", "default_row",
    "first_request", "global_importance", "has_attention_model", "init", "lime_row", "local_view",
    "model_summary", "persuasive", "random_row", "row_status", "shap_row", "surrogate", "workspace",
]
