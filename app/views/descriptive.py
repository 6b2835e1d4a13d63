"""Descriptive page views: the global SHAP view, and a row's SHAP and LIME with their agreement and notes."""
from dash import html
from dash.exceptions import PreventUpdate

from app import services
from app.views import figures, figures_rows
from app.views.components import card, empty_figure, error_alert, fmt, gilpin_badge, method_note, metric, metric_row
from explainers.persuasive import gilpin_label
from workspace.errors import CandorError


def render_global(_pathname):
    """Global SHAP importance and beeswarm, and which rows they cover (all, or a seeded sample and why)."""
    try:
        return draw_global()
    except CandorError as err:
        return empty_figure(str(err)), empty_figure(str(err)), error_alert(str(err))


def draw_global():
    """:func:`render_global`'s figures and note from :func:`app.services.global_view` (raises CandorError)."""
    view = services.global_view()  # the beeswarm's rows drawn: all, or a stated sample (services.row_plots)
    g = view.importance
    return (figures.importance_bar(g), figures_rows.beeswarm(view.beeswarm),
            html.Div([gilpin_badge(gilpin_label(g)), method_note(f"Global view: {g.source}")]))


def render_local(row, players="children"):
    """The row's SHAP waterfall and LIME bars, whether they agree, and their method notes, or why not
    (``players``: "raw" for Shapley values with the raw columns as players)."""
    if row is None:
        raise PreventUpdate
    try:
        return draw_local(row, players)
    except CandorError as err:
        return empty_figure(str(err)), empty_figure(str(err)), error_alert(str(err)), None


def draw_local(row, players="children"):
    """:func:`render_local`'s figures, summary and notes from :func:`app.services.local_view` (raises CandorError;
    the notebook's :meth:`app.notebook.Candor.figure` draws the same figures)."""
    view = services.local_view(row, k=5, raw_players=players == "raw")
    s, l, a = view.shap, view.lime, view.agreement
    lime_title = (f"LIME attributions (local R² {fmt(l.fidelity.value)} in-sample, "
                  f"{fmt(l.params['heldout_r2'])} held-out)")
    title = f"Row {int(row['row'])} as edited" if isinstance(row, dict) else f"Row {int(row)}"
    summary = card(f"{title}: do SHAP and LIME agree?", metric_row([
        metric("Spearman ρ of |attribution|", fmt(a.spearman)),
        metric(f"Top-{a.k} overlap", fmt(a.top_k_overlap, 2)),
        metric("Kendall τ-b", fmt(a.kendall_tau_b)),
        metric("Sign agreement", fmt(a.sign_agreement, 2)),
        metric("SHAP additivity gap", figures.gap_text(s.additivity_gap), "|base_value + Σφ − f(x)|"),
        _shap_error_metric(s),
        metric("LIME local R²", fmt(l.fidelity.value), f"in-sample; held-out {fmt(l.params['heldout_r2'])}"),
    ]))
    notes = html.Div([gilpin_badge(gilpin_label(s)), method_note(s.source + _players_note(s)), gilpin_badge(gilpin_label(l)),
                      method_note(l.source + "; values are ridge coefficients on LIME's binary interpretable "
                                  f"features, in the units of the output ({l.params['units']})")])
    widest = view.widest or None  # both figures keep one height whatever the row
    return (figures.waterfall(s, value_labels=view.labels, widest_labels=widest),
            figures.attribution_bar(l, title=lime_title, widest_labels=widest), summary, notes)


ALGORITHM_WORDS = {"tree": "Tree SHAP", "linear": "LinearExplainer", "exact": "exact Shapley values",
                   "permutation": "permutation SHAP", "kernel": "KernelExplainer"}
"""The words the SHAP method line (``source``) uses for each ``params["algorithm"]``: the card names the same one."""


def _shap_error_metric(s):
    """How sure the SHAP values are: exact (SE 0), or the largest standard error and whether sampling converged,
    naming the algorithm that computed this row in the method line's words (a Tree SHAP row redone by
    permutation SHAP says permutation SHAP in both)."""
    algo = s.params.get("algorithm", "")
    name = ALGORITHM_WORDS.get(algo, algo)
    se = s.params.get("standard_error") or ()
    finite = [v for v in se if v == v]
    if not finite:
        return metric("SHAP standard error", "n/a", f"{name}: this backend reports none")
    if max(finite) == 0:
        return metric("SHAP standard error", "0 (exact)", name)
    tol = s.params.get("tolerance")
    state = "converged" if s.params.get("converged") else "budget reached, not converged"
    n = s.params.get("orderings")
    return metric("SHAP largest standard error", figures.plain(max(finite)),
                  f"{name}, {state}" + (f" after {int(n):,} orderings" if n else "")
                  + (f"; tolerance {figures.plain(tol)}" if tol is not None else ""))


def _players_note(s) -> str:
    """What a raw column's number is, in words."""
    players = s.params.get("players", "")
    if players.startswith("transformed features (raw column value"):
        return "; each raw column shows the sum of its one-hot children's SHAP values, not its Shapley value"
    if s.params.get("space") == "raw_shapley":
        return "; Shapley values with the raw columns as players"
    return ""
