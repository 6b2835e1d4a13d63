"""What the Performance page shows: its cards (from :func:`app.services.performance.performance`) and the table of
counts and rates at the chosen threshold. The figures are :mod:`app.views.figures_performance`."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import Patch, dcc, html

from app.shell import ids
from app.views import figures_performance as pf
from app.views.components import card, fmt, graph

THRESHOLD_STEPS = 100
"""The threshold control moves in hundredths (the URL's ``threshold`` is a whole number of hundredths)."""


def _graph(figure, graph_id: str | None = None) -> dcc.Graph:
    extra = {} if graph_id is None else {"id": graph_id}
    return dcc.Graph(figure=figure, config={"displaylogo": False}, **extra)


def not_applicable(text: str) -> dbc.Alert:
    """The one line a view that does not apply shows in its place."""
    return dbc.Alert(f"Not shown: {text}.", color="secondary", className="py-2 small mb-2")


def threshold_control(c) -> html.Div:
    """The threshold slider (keyboard: arrows move it a hundredth, Page Up/Down a tenth) and its value in words."""
    what = f"P({c.target})" if c.output_kind == "probability" else f"the logistic of the margin of {c.target}"
    return html.Div([
        dbc.Label(f"Threshold, in hundredths (40 is 0.40): rows with {what} at least this are called {c.target}",
                  html_for=ids.PERF_THRESHOLD),
        dcc.Slider(id=ids.PERF_THRESHOLD, min=0, max=THRESHOLD_STEPS, step=1, value=50,
                   marks={v: f"{v / THRESHOLD_STEPS:.2f}" for v in (0, 25, 50, 75, 100)},
                   tooltip={"placement": "bottom", "always_visible": False}),
        html.Div(id=ids.PERF_THRESHOLD_TEXT, className="small text-muted", role="status"),
    ], className="mb-2 threshold-control")


def threshold_points(v) -> tuple[Patch, Patch]:
    """Patches that move the chosen threshold's circle on the ROC and precision-recall figures (no redraw)."""
    k = v.counts
    roc, pr = Patch(), Patch()
    roc["data"][pf.THRESHOLD_TRACE]["x"], roc["data"][pf.THRESHOLD_TRACE]["y"] = pf.marker_xy(k.fpr), pf.marker_xy(k.tpr)
    pr["data"][pf.THRESHOLD_TRACE]["x"] = pf.marker_xy(k.tpr)
    pr["data"][pf.THRESHOLD_TRACE]["y"] = pf.marker_xy(k.precision)
    return roc, pr


def rates_table(v) -> list:
    """``(threshold line, table)``: the counts at the threshold and their rates, as text beside the figure."""
    k = v.counts
    rows = [("true positive rate (recall)", k.tpr, f"{k.tp} of {k.tp + k.fn} {v.target}"),
            ("false positive rate", k.fpr, f"{k.fp} of {k.fp + k.tn} {v.rest}"),
            ("true negative rate", k.tnr, f"{k.tn} of {k.fp + k.tn} {v.rest}"),
            ("precision", k.precision, f"{k.tp} of {k.tp + k.fp} called {v.target}"),
            ("accuracy", k.accuracy, f"{k.tp + k.tn} of {k.n}")]
    table = html.Table([
        html.Caption(f"Counts and rates at threshold {k.threshold:.2f}"),
        html.Thead(html.Tr([html.Th("rate", scope="col"), html.Th("value", scope="col"),
                            html.Th("rows", scope="col")])),
        html.Tbody([html.Tr([html.Th(name, scope="row"), html.Td(fmt(value)), html.Td(count)])
                    for name, value, count in rows])], className="table table-sm small perf-rates")
    line = (f"Threshold {k.threshold:.2f}: {k.tp} true positives, {k.fp} false positives, {k.tn} true negatives, "
            f"{k.fn} false negatives.")
    return [line, table]


def classifier_cards(view) -> list:
    """ROC and precision-recall, calibration, and the confusion at a threshold (or why each does not apply)."""
    c, why = view.classifier, view.not_applicable
    if c is None:
        return [card("Classifier performance", not_applicable(why["roc"]))]
    calibration = (_graph(pf.calibration_figure(c)) if c.calibration_true is not None
                   else not_applicable(why["calibration"]))
    return [
        card("ROC and precision-recall (the circle: the chosen threshold)",
             dbc.Row([dbc.Col(_graph(pf.roc_figure(c), ids.PERF_ROC), lg=6),
                      dbc.Col(_graph(pf.pr_figure(c), ids.PERF_PR), lg=6)]), source=c.source),
        dbc.Row([
            dbc.Col(card("Calibration", calibration), lg=6),
            dbc.Col(card("Confusion at a threshold", [
                threshold_control(c), graph(ids.PERF_CONFUSION, 320),
                html.Div(id=ids.PERF_RATES)]), lg=6)]),
    ]


def multiclass_card(view) -> html.Div | None:
    """Every class against every other (a multiclass model), beside the one-vs-rest views above."""
    m = view.multiclass
    if m is None:
        return None
    return card("Every class (beside the one-vs-rest views above)", _graph(pf.multiclass_figure(m)), source=m.source)


def regressor_cards(view) -> list:
    """Predicted against actual and the residuals, with R² and RMSE and their intervals."""
    r = view.regressor
    return [card("Predicted vs actual", [
        html.P(f"{pf.interval_text('R²', r.r2)}; {pf.interval_text('RMSE', r.rmse)}.", className="mb-2"),
        dbc.Row([dbc.Col(_graph(pf.predicted_actual_figure(r)), lg=6),
                 dbc.Col(_graph(pf.residuals_figure(r)), lg=6)])], source=r.source),
        not_applicable(view.not_applicable["roc"])]


def page_body(view) -> list:
    """Every card of the Performance page for ``view`` (:class:`app.services.performance.PerformanceView`)."""
    if view.regressor is not None:
        return regressor_cards(view)
    return [*classifier_cards(view), *[c for c in [multiclass_card(view)] if c is not None]]
