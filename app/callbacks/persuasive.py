"""Persuasive page callbacks: one k control drives every panel."""
from dash import Input, Output, callback, html
from dash.exceptions import PreventUpdate

from app import figures, ids, services
from app.components import card, empty_figure, error_alert, fmt, metric, metric_row
from app.errors import CandorError


@callback(Output(ids.STATEMENT, "children"), Output(ids.COST, "children"), Output(ids.FULL_BAR, "figure"),
          Output(ids.TOPK_BAR, "figure"), Output(ids.TRADEOFF, "figure"),
          Input(ids.ROW_INPUT, "value"), Input(ids.K_SLIDER, "value"))
def render_persuasive(row, k):
    if row is None or k is None:
        raise PreventUpdate
    try:
        view = services.persuasive(row, k)
    except CandorError as err:
        return error_alert(str(err)), None, *(empty_figure(str(err)),) * 3
    s, e = view.simplification, view.simplification.parent
    before, after = s.fidelity_before, s.fidelity_after
    statement = card(f"What a reader is told (k = {len(s.kept)})", html.P(s.statement, className="statement"),
                     source=f"template over the top-{len(s.kept)} SHAP attributions; 'high'/'low' compare with "
                            "the training median; 'mainly' only when the named supporting features carry ≥ 50 % "
                            "of total |attribution|")
    cost = card("What the simplification costs", metric_row([
        metric("|attribution| dropped", f"{1 - after['mass_retained']:.1%}", f"{len(s.dropped)} features hidden"),
        metric("Output, all features", fmt(before["output"]), f"P({e.target}) = f(x)"),
        metric(f"Output, top-{len(s.kept)} only", fmt(after["output"]), "the rest set to the background"),
        metric("Sufficiency", fmt(after["sufficiency"]), "f(x) − f(top-k only); 0 is best"),
        metric("Comprehensiveness", fmt(after["comprehensiveness"]), "f(x) − f(without top-k)"),
        metric("Words", f"{s.complexity_after['n_words']} vs {s.complexity_before['n_words']}", "shown vs all features"),
    ]), source=f"{e.source}; dropped features take each of the 100 background rows' values and outputs are "
               "averaged (ERASER sufficiency/comprehensiveness, DeYoung et al. 2020)")
    full = figures.attribution_bar(e, max_display=len(e.values), title="Descriptive: every SHAP attribution")
    topk = figures.attribution_bar(e, max_display=len(e.values), values=s.values,
                                   title=f"Persuasive: top {len(s.kept)} only")
    return statement, cost, full, topk, figures.simplification_tradeoff(view.curve, len(s.kept))
