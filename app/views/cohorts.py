"""Views of the Cohorts page (and its report section): the cohort's figures, the error tree's leaves, where the
story misleads most, and fairness rates. Everything is drawn from :class:`app.services.cohorts.CohortsView`."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from dash import dcc, html, no_update

from app import services
from app.views.components import card, choice_names, choice_value, error_alert, fmt, method_note
from app.views.figures import CATEGORICAL, GREY, NEG, POS, _layout, esc, label_margin, plain, tick_labels
from explainers.fairness import RATES
from workspace.errors import CandorError

RATE_WORDS = {"selection_rate": "selection rate", "true_positive_rate": "true positive rate",
              "false_positive_rate": "false positive rate"}


def _ci(mean: float, low: float, high: float, digits: int = 3) -> str:
    if not np.isfinite(mean):
        return "n/a"
    if not (np.isfinite(low) and np.isfinite(high)):
        return fmt(mean, digits)
    return f"{fmt(mean, digits)} [{fmt(low, digits)}, {fmt(high, digits)}]"


def _story(c, measure: str) -> str:
    m = c.story.get(measure)
    return "n/a" if m is None or m[3] == 0 else f"{_ci(*m[:3])} ({m[3]} rows)"


def figures_table(cohorts, k: int) -> html.Table:
    """One row per cohort: rows, accuracy, surrogate agreement, the story's sufficiency and share shown."""
    head = ["Cohort", "Rows", "Accuracy [95 % CI]", "Surrogate agreement", f"Story sufficiency (top {k})",
            "Share of |attribution| shown"]
    body = [html.Tr([html.Td(c.name), html.Td(f"{c.n_rows:,}"), html.Td(_ci(c.accuracy, c.accuracy_low, c.accuracy_high)),
                     html.Td(_ci(c.agreement, c.agreement_low, c.agreement_high)), html.Td(_story(c, "sufficiency")),
                     html.Td(_story(c, "mass_retained"))]) for c in cohorts]
    return html.Table([html.Thead(html.Tr([html.Th(h, scope="col") for h in head])), html.Tbody(body)],
                      className="table table-sm cohort-table")


def leaf_options(view) -> list[dict]:
    """The error tree's leaves as dropdown options (value: the leaf's filters, which set the cohort)."""
    return [{"label": f"Leaf {i + 1}: {plain(leaf.error_rate * 100, 1, trim=True)} % wrong of {leaf.n_rows} rows · {t}",
             "value": choice_value(t if leaf.filters else "")}
            for i, (leaf, t) in enumerate(zip(view.tree.leaves, view.leaf_texts))]


def error_tree_figure(view) -> go.Figure:
    """Each leaf's error rate with its Wilson interval, worst on top; bar width of the label says its size."""
    leaves = view.tree.leaves
    labels = tick_labels([f"Leaf {i + 1} ({leaf.n_rows} rows)" for i, leaf in enumerate(leaves)])[::-1]
    rate = np.array([leaf.error_rate for leaf in leaves])[::-1]
    lo = np.array([leaf.error_low for leaf in leaves])[::-1]
    hi = np.array([leaf.error_high for leaf in leaves])[::-1]
    texts = [esc(t) for t in view.leaf_texts][::-1]
    fig = go.Figure(go.Bar(x=rate, y=labels, orientation="h", marker_color=POS, customdata=texts,
                           error_x=dict(type="data", symmetric=False, array=hi - rate, arrayminus=rate - lo,
                                        color="#444", thickness=1.2, width=3),
                           hovertemplate="%{y}: error rate %{x:.3f}<br>%{customdata}<extra></extra>"))
    fig.add_vline(x=view.tree.error_rate, line_dash="dot", line_color=GREY)
    alt = "Error tree leaves by error rate: " + ", ".join(
        f"leaf {i + 1} {plain(leaf.error_rate, 3, trim=True)} of {leaf.n_rows} rows" for i, leaf in enumerate(leaves[:4]))
    return _layout(fig, f"Error rate per error-tree leaf, 95 % Wilson interval<br>dotted: all "
                        f"{view.tree.n_rows:,} held-out rows, {plain(view.tree.error_rate, 3, trim=True)}", alt=alt,
                   showlegend=False, height=max(260, 34 * len(leaves) + 120), xaxis_range=[0, 1],
                   margin=dict(l=label_margin(labels), t=90))


def misleads_figure(view, measure: str = "sufficiency") -> go.Figure:
    """The cohorts ranked by the story's mean sufficiency (higher: the shown features keep less of the
    prediction), each with its bootstrap interval: where the simplified story misleads most."""
    ranked = [c for c in view.ranked if c.story.get(measure, (np.nan,) * 4)[3] > 0]
    labels = tick_labels([c.name for c in ranked])[::-1]
    mean = np.array([c.story[measure][0] for c in ranked])[::-1]
    lo = np.nan_to_num(np.array([c.story[measure][1] for c in ranked])[::-1], nan=0.0)
    hi = np.nan_to_num(np.array([c.story[measure][2] for c in ranked])[::-1], nan=0.0)
    fig = go.Figure(go.Bar(x=mean, y=labels, orientation="h", marker_color=CATEGORICAL[1],
                           error_x=dict(type="data", symmetric=False, array=np.maximum(hi - mean, 0),
                                        arrayminus=np.maximum(mean - lo, 0), color="#444", thickness=1.2, width=3),
                           hovertemplate="%{y}: sufficiency %{x:.3f}<extra></extra>"))
    alt = "Where the story misleads most, by sufficiency: " + ", ".join(
        f"{c.name} {plain(c.story[measure][0], 3, trim=True)}" for c in ranked[:3])
    return _layout(fig, f"Where the simplified story misleads most<br>mean sufficiency of the top-{view.story_k} story "
                        "(prediction lost keeping only its features), 95 % bootstrap interval", alt=alt,
                   showlegend=False, height=max(260, 34 * len(ranked) + 120),
                   margin=dict(l=label_margin(labels), t=90))


def fairness_figure(f) -> go.Figure:
    """Each rate per group of one sensitive feature, with Wilson intervals."""
    r = f.report
    fig = go.Figure()
    for i, name in enumerate(RATES):
        rows = r.rates[name]
        rate = np.array([x.rate for x in rows], float)
        fig.add_trace(go.Bar(name=RATE_WORDS[name], x=[esc(x.group) for x in rows], y=rate,
                             marker_color=(CATEGORICAL[0], POS, NEG)[i],
                             error_y=dict(type="data", symmetric=False,
                                          array=np.nan_to_num(np.array([x.high for x in rows]) - rate),
                                          arrayminus=np.nan_to_num(rate - np.array([x.low for x in rows])),
                                          color="#444", thickness=1.2, width=3)))
    gap = r.difference["selection_rate"]
    alt = (f"Fairness rates by {r.feature}: selection rate per group " + ", ".join(
        f"{x.group} {plain(x.rate, 3, trim=True)}" for x in r.rates["selection_rate"][:6])
        + f"; largest difference {plain(gap[0], 3, trim=True)}")
    return _layout(fig, f"Rates by {esc(r.feature)} (95 % Wilson intervals)", alt=alt, barmode="group",
                   height=340, yaxis_range=[0, 1], margin=dict(t=70))


def gaps_table(f) -> html.Table:
    """Each rate's difference and ratio between groups (fairlearn's MetricFrame), with 95 % intervals from Jeffreys
    posterior draws of each group's rate (:func:`explainers.fairness.fairness_report`)."""
    r = f.report
    body = [html.Tr([html.Td(RATE_WORDS[n]), html.Td(_ci(*r.difference[n])), html.Td(_ci(*r.ratio[n]))]) for n in RATES]
    return html.Table([html.Thead(html.Tr([html.Th(h, scope="col") for h in
                                           ("Rate", "Difference (largest − smallest)", "Ratio (smallest / largest)")])),
                       html.Tbody(body)], className="table table-sm cohort-table")


def hidden_line(f) -> str:
    """What the story hides of the sensitive feature, tied to the gap it carries (the guardrail's rule)."""
    if not f.measured:
        return f"The story was not measured on this cohort's rows, so whether it hides {f.feature} is not known."
    if not f.hidden:
        return (f"The top story shows {f.feature} wherever it carries more than 5 % of a row's |attribution| "
                f"({f.measured} rows measured).")
    line = (f"The story hides {f.feature} on {f.hidden} of {f.measured} measured rows where it carries more than 5 % "
            f"of the row's |attribution|")
    if f.report is not None:
        return line + f"; the selection rate differs by {_ci(*f.report.difference['selection_rate'])} between its groups."
    return line + "."


def fairness_cards(view, graph_factory) -> list:
    """One card per sensitive feature: the rates figure (``graph_factory(fig, i)``), the gaps and the hidden line."""
    if not view.fairness:
        return [html.P("Name sensitive features above to see fairness rates by their groups.", className="text-muted")]
    out = []
    for i, f in enumerate(view.fairness):
        if f.report is None:
            body = [html.P(f"No rates for {f.feature}: {f.problem}"), html.P(hidden_line(f))]
        else:
            body = [graph_factory(fairness_figure(f), i), gaps_table(f), html.P(hidden_line(f), role="status")]
        out.append(card(f"Fairness by {f.feature}", body,
                        source=f"fairlearn MetricFrame (Bird et al. 2020) on {view.cohort.n_rows:,} held-out rows of "
                               "the cohort; 'selected' = the model labels the positive class; differences and ratios "
                               "with 95 % intervals from 2,000 draws of each group's rate from its Jeffreys posterior "
                               "(Brown, Cai & DasGupta 2001; seed 0), which a group of a few rows widens."))
    return out


def notes(view) -> list:
    """The method lines under the page's figures."""
    return [method_note(n) for n in view.notes]


def render_cohorts(filters, sensitive):
    """The Cohorts page's panels (:func:`app.services.cohorts_view`): note, figures table, error-tree figure,
    the ranking figure, the leaves table, fairness cards, method lines, leaf options; a refusal is one line."""
    try:
        view = services.cohorts_view(filters or "", choice_names(sensitive))
    except CandorError as err:
        return (error_alert(str(err)),) + (no_update,) * 7
    size = f"{view.cohort.n_rows:,} of {view.tree.n_rows:,} held-out rows"
    note = html.P(f"{view.cohort.name} · {size}", className="small fw-semibold")
    leaves = figures_table(view.ranked, view.story_k)
    texts = html.Ol([html.Li(f"Leaf {i + 1}: {t}") for i, t in enumerate(view.leaf_texts)], className="small")
    cards = fairness_cards(view, lambda fig, i: dcc.Graph(figure=fig, config={"displaylogo": False}))
    return (note, figures_table([view.cohort], view.story_k), error_tree_figure(view), misleads_figure(view),
            [leaves, texts], cards, notes(view), leaf_options(view))
