"""Descriptive page, rank stability card: the job controls and the rendered SHAP/LIME stability."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import html

from app.shell import ids
from app.views.components import card, fmt, method_note, metric, metric_row
from explainers.numbers import plain
from explainers.stability import STABLE_OVERLAP

__all__ = ["stability_controls", "stability_card", "stability_hint", "rerun_phase"]

HINT = ("Rank stability: rerun this row's SHAP over 10 background resamples and LIME over 10 seeds, and see "
        "whether its top features stay the same (10–30 s).")


def rerun_phase(done: int, total: int) -> tuple[str, int, int]:
    """The stability job's progress counted per method, as its method line counts the reruns: the job's
    ``total`` reruns are SHAP's then LIME's, half each, so rerun 13 of 20 is ``("LIME", 3, 10)``."""
    per = total // 2
    return ("SHAP", done, per) if done <= per else ("LIME", done - per, total - per)


def stability_hint() -> html.Div:
    """What the card shows before the job has run for the chosen row."""
    return method_note(HINT)


def stability_controls(analyst: bool) -> html.Div:
    """Run / cancel buttons, the progress bar and the card's place (the job needs the analyst role)."""
    return html.Div([
        html.Div([
            dbc.Button("Check rank stability", id=ids.STABILITY_RUN, color="secondary", size="sm", n_clicks=0,
                       className="me-2", disabled=not analyst),
            *([] if analyst else [html.Small("Running this job needs the analyst role.", className="text-muted me-2")]),
            dbc.Button("Cancel", id=ids.STABILITY_CANCEL, color="outline-secondary", size="sm", n_clicks=0,
                       disabled=True),
            dbc.Progress(id=ids.STABILITY_PROGRESS, value=0, label="", className="ms-3 flex-grow-1 job-progress"),
        ], className="d-flex align-items-center mb-2"),
        html.Div(stability_hint(), id=ids.STABILITY_CARD),
    ], className="mb-3")


def _features_table(st) -> dbc.Table:
    """Every feature that was in the top k at least once: how often, its rank range, mean ± SD of its value."""
    order = sorted((j for j in range(len(st.feature_names)) if st.topk_frequency[j] > 0),
                   key=lambda j: (-st.topk_frequency[j], st.rank_min[j], j))
    n = st.n_reruns
    rows = [html.Tr([html.Td(st.feature_names[j]),
                     html.Td(f"{round(st.topk_frequency[j] * n)}/{n}"),
                     html.Td(f"{st.rank_min[j]}" if st.rank_min[j] == st.rank_max[j]
                             else f"{st.rank_min[j]}–{st.rank_max[j]}"),
                     html.Td(f"{plain(st.value_mean[j], 3, trim=True)} ± {plain(st.value_sd[j], 2, trim=True)}")],
                    className="" if st.topk_frequency[j] in (0.0, 1.0) else "table-warning")
            for j in order]
    head = html.Thead(html.Tr([html.Th("Feature"), html.Th(f"In top {st.k}"), html.Th("Rank range"),
                               html.Th("Value, mean ± SD over reruns")]))
    return dbc.Table([head, html.Tbody(rows)], size="sm", className="mb-1")


def _one(title: str, st) -> dbc.Col:
    color = "success" if st.identical_sets else ("warning" if st.stable else "danger")
    return dbc.Col([
        html.H6(title),
        dbc.Alert(st.verdict(), color=color, className="py-1 px-2 mb-2 small"),
        metric_row([
            metric(f"Top-{st.k} overlap", fmt(st.topk_overlap, 2), f"mean over {st.n_reruns * (st.n_reruns - 1) // 2} "
                                                                   f"pairs; worst {fmt(st.topk_overlap_min, 2)}"),
            metric(f"Jaccard@{st.k}", fmt(st.jaccard, 2)),
            metric("Spearman ρ", fmt(st.spearman), "of |attribution|, mean over pairs"),
            metric("Kendall τ-b", fmt(st.kendall_tau_b)),
        ]),
        _features_table(st),
    ], lg=6)


def stability_card(view) -> dbc.Card:
    """SHAP (background resamples) beside LIME (seeds) for one row: verdict, pairwise metrics, top-k frequency."""
    body = dbc.Row([_one("SHAP over background resamples", view.shap), _one("LIME over seeds", view.lime)])
    source = (f"each method rerun {view.shap.n_reruns} times on this row; pairwise top-{view.k} overlap, Jaccard@k, "
              "Spearman and Kendall τ-b of |attribution| (docs/methods.md, \"Rank stability\"); a set is called "
              f"unstable when its mean overlap is below {STABLE_OVERLAP:.2f}. SHAP: "
              f"{view.shap.varied}; {view.shap_source}. LIME: {view.lime.varied}; {view.lime_source}")
    return card(f"Row {view.row}: are the top {view.k} features stable over reruns?", [body], source=source)
