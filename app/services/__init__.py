"""The only place :mod:`app` calls :mod:`explainers`.

One module per page family; each builds its explainers once per workspace
(:func:`~app.services._core.lazy`) and memoizes per-row results
(:func:`~app.services._core.row_cache`), both held by the installed :class:`ServiceState`
(:func:`install`, :func:`init`, :func:`overridden`, :func:`state`). Callbacks call exactly one function
from here and render what it returns.
"""
from ._core import (ServiceState, built_store, first_request, init, install, is_ready, join_late, lazy, overridden,
                    ready_entry, row_cache, state, store_note, use_built_store, warm_done, workspace)
from ._requests import request_began, request_ended, serving, yield_to_requests
from .applicable import capabilities, why_not
from .attention import AttentionView, attention_view, has_attention_model
# the story test; check's Integrated Gradients; the table of methods; the rules section of the Persuasive page
from . import counterfactuals, gradients, methods, persuasive_rules  # noqa: F401
from .persuasive import GlobalCurve, PersuasiveView, persuasive_global, persuasive_max_k, persuasive_view
from .cohorts import CohortsView, cohorts_view, fairness_views
from .surrogates import (
    MuseView,
    default_muse_key,
    feature_names,
    fit_frontier,
    fit_muse,
    frontier,
    muse_params,
    muse_view,
)
from .row_plots import GlobalView, global_view
from .selection import class_choices, select_class
from .row_view import LocalView, local_view, row_values, stored_row_number, stored_views, whatif_editor
from .data_table import column_pages, data_columns, data_page, feature_descriptions, filtered_rows, table_width
from .row_pool import prepared_rows, random_row_pool
from .tabular import (
    check_row,
    default_row,
    global_importance,
    lime_row,
    model_summary,
    raw_players_offered,
    row_count,
    row_key,
    row_status,
    shap_row,
)
from . import whatif  # noqa: F401  (the what-if editor's controls and edited rows)
from . import surrogate_links  # noqa: F401  (the Surrogate page's fit of a link's settings)

__all__ = [
    "AttentionView", "LocalView", "PersuasiveView", "attention_view", "check_row", "column_pages", "data_columns", "table_width", "data_page", "default_row", "feature_descriptions",
    "first_request", "join_late", "global_importance", "has_attention_model", "init", "lime_row", "local_view", "row_values",
    "model_summary", "persuasive_view", "persuasive_global", "persuasive_max_k", "GlobalCurve", "prepared_rows", "random_row_pool", "row_count", "row_status", "row_key", "shap_row", "whatif_editor", "workspace", "raw_players_offered",
    "MuseView", "default_muse_key", "feature_names", "fit_frontier", "fit_muse", "frontier", "muse_params",
    "muse_view", "class_choices", "select_class", "why_not", "capabilities", "GlobalView", "global_view",
    "lazy", "ready_entry", "row_cache", "stored_row_number", "stored_views", "built_store", "use_built_store", "warm_done",
    "request_began", "request_ended", "serving", "yield_to_requests",
    "ServiceState", "install", "is_ready", "overridden", "state", "store_note",
    "CohortsView", "cohorts_view", "fairness_views", "filtered_rows",
]

# Text page (issue 5): the MiniLM sentiment classifier, uploads, the head-analysis job.
from .text import (  # noqa: E402
    EXAMPLES,
    TextView,
    agreement,
    aggregates,
    attribution,
    check_text,
    run_slow_attributions,
    slow_methods,
    text_model,
    text_view,
)
from .text_data import (  # noqa: E402
    BUILTIN,
    HeadAnalysisView,
    TextDataset,
    dataset,
    dataset_options,
    dataset_text,
    head_analysis,
    save_conllu_upload,
    save_csv_upload,
)

__all__ += [
    "BUILTIN", "EXAMPLES", "HeadAnalysisView", "TextDataset", "TextView", "agreement", "aggregates",
    "attribution", "check_text", "dataset", "dataset_options", "dataset_text", "head_analysis",
    "run_slow_attributions", "save_conllu_upload", "save_csv_upload", "slow_methods", "text_model", "text_view",
]

# Performance page (issue 25): ROC, precision-recall, calibration, the confusion at a threshold, regression views
from . import performance  # noqa: E402,F401
# Dependence page (issue 25): SHAP dependence beside partial dependence and ICE curves.
from . import dependence  # noqa: E402,F401

# The row panels a build draws for stored rows (issue 27): the Persuasive page's opening k.
from .persuasive import opening_k as persuasive_opening_k  # noqa: E402

__all__ += ["persuasive_opening_k"]
