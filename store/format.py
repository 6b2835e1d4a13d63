"""The store's format: its version, what each file holds, and the limits checked before reading.

Version 1 layout (``N`` stored rows, ``d`` features, ``G`` rows of the global SHAP view)::

    manifest.json                 what follows, with each file's size and SHA-256
    rows.npy                      (N,) int64: the stored rows' positions in the table (held-out rows, or all)
    prediction.npy                (N,) float64: the explained output of each stored row
    shap_values.npy, lime_values.npy        (N, d) float64: per-row attributions
    shap_se.npy, lime_se.npy                (N, d) float64: their standard errors
    shap_base.npy, lime_base.npy            (N,) float64: base value (SHAP) / intercept (LIME)
    shap_prediction.npy, lime_prediction.npy (N,) float64: each explanation's own prediction
    shap_feature_values.npy, lime_feature_values.npy (N, d) float64: the rows as each explainer saw them
    row_meta.parquet              per row: the rest of each explanation (source, params) as JSON text
    global_values.npy, global_feature_values.npy, global_se.npy  (G, d) float64, global_rows.npy (G,) int64
    persuasive_global.json        the Persuasive page's top-k curve averaged over held-out rows
    muse_default.json, frontier_default.json   the Surrogate page's default fits, rules as JSON
    cohort_story.json             the Cohorts page's story measures of the first held-out rows (sufficiency, share shown)
    shap_background_rows.npy      (B,) int64: the positions in the table of SHAP's background rows
    lime_training_rows.npy        (T,) int64: the positions of the rows LIME's sampling statistics come from
    permutation_importance.json   a global method's result (``<method>.json``: its ``to_dict()``)
    persuasive_rows.json, attention_rows.json  those pages' row panels of the stored rows, drawn by the build
                                  (``app/views/stored_panels.py``): what the server sends, and what drew it
    added/<method>/<row>.json     rows a live server explained on demand and added (not in the manifest)

The manifest's ``reproduce`` section (:mod:`store.provenance`) says per method what each value is of (output
space, units, explained class, algorithm, seeds) and names the two row files, so that anyone with the model and
the table can recompute every stored value. Both are additions to version 1, not a new version: a reader of
version 1 needs neither, and a version-1 store built before them (issue 23) opens as before, without them
(:meth:`store.read.Store.reproduction` then returns None).

Which methods are stored, and how, is the table of methods (:data:`explainers.methods.TABULAR`): a method stored
``"rows"`` has the five per-row arrays and a ``row_meta.parquet`` column (:data:`METHODS`, SHAP and LIME); one
stored ``"document"`` has one JSON file (:data:`DOCUMENTS`, permutation importance). A document is optional, as
the Persuasive and Surrogate files and the row panels are: a version-1 store built before a method existed opens as
before, and that method is computed live.
"""
from __future__ import annotations

from explainers.methods import TABULAR

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 4 * 2**20
"""A manifest larger than this is refused before it is read."""
MAX_ADDED_ROW_BYTES = 4 * 2**20
"""One row added on demand (``added/<method>/<row>.json``) larger than this is ignored, unread."""
METHODS = tuple(m.name for m in TABULAR if m.stored == "rows")
"""Methods stored per row, in the table's order: ("shap", "lime")."""
DOCUMENTS = {f"{m.name}.json": m.name for m in TABULAR if m.stored == "document"}
"""Methods stored as one JSON document, by file name: {"permutation_importance.json": "permutation_importance"}."""
WHOLE_TABLE_MAX = 1_000
"""``python -m app build`` stores every row of a table of at most this many rows unless ``--rows`` says otherwise
(``app/cli/stored_rows.py``), and a server of such a store prepares every row ahead
(``app/services/row_pool.py::prepared_rows``): any row a viewer types or clicks is sent as stored. A row a store lacks
is explained live, on the Persuasive and Attention pages too (0.1-0.3 s of CPU a row on the sample, and torch's
import in each worker), which two cores cannot do for 20 viewers each choosing any row every 2 s (issue 27)."""
ALLOWED_SUFFIXES = (".npy", ".parquet", ".json")
"""Every file a manifest may name: arrays, tables, JSON. Anything else (a pickle, an .npz) is refused."""

HOLDS = {
    "rows.npy": "int64 (N,): positions in the table of the stored rows (the manifest's rows.which: every row of the "
                "table, the held-out rows or the first N of them)",
    "prediction.npy": "float64 (N,): the model's explained output for each stored row",
    **{name: holds for m in TABULAR for name, holds in m.files().items()},  # each method's files
    "row_meta.parquet": f"columns row, {', '.join(METHODS)}: the rest of each row's explanation (source, params, "
                        "fidelity) as JSON",
    "global_values.npy": "float64 (G, d): SHAP values of the global view's rows",
    "global_feature_values.npy": "float64 (G, d): those rows (beeswarm colours)",
    "global_se.npy": "float64 (G, d): their standard errors",
    "global_rows.npy": "int64 (G,): the global view's rows",
    "shap_background_rows.npy": "int64 (B,): positions in the table of SHAP's background rows, in its order",
    "lime_training_rows.npy": "int64 (T,): positions in the table of the rows LIME's sampling statistics come from",
    "persuasive_global.json": "the Persuasive page's top-k curve averaged over held-out rows, with standard errors",
    "muse_default.json": "the Surrogate page's MUSE fit at default budgets: rules, held-out agreement, interval",
    "frontier_default.json": "MUSE, CART and flat surrogates over the frontier budgets: rules, agreement, intervals",
    "cohort_story.json": "the Cohorts page's story measures (sufficiency, share of |attribution| shown, features "
                         "hidden) of the first held-out rows, all measured (no clock budget)",
    "persuasive_rows.json": "the Persuasive page's row panels at its opening controls for the stored rows Random row "
                            "picks from, as the server sends them (Plotly and Dash JSON), with the code that drew them",
    "attention_rows.json": "the Attention page's row panels for those rows, as the server sends them, with the code "
                           "that drew them",
}
NOT_STORED = (
    "the Text page (text models): computed live when opened",
    "Attention and Persuasive row panels of rows Random row does not pick from, or drawn by other code: computed live",
    "raw-column Shapley values of a one-hot Pipeline (the Descriptive page's option): computed live",
    "rows the store does not hold (the manifest's rows.which: the held-out rows or the first N of them; a store of "
    "the whole table holds every row): explained live when chosen, then added under added/",
    "surrogates with non-default settings, and Persuasive choices other than the opening controls: computed live",
    "rank stability reruns: computed live",
)
"""What a store does not hold (the manifest and docs say so)."""
