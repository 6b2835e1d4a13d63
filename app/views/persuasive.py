"""Persuasive page views: a row's story (verified sentences only), the claim-by-claim check, the guardrail notes,
what was dropped, the cost, both bar charts and the row's tradeoff."""
import dash_bootstrap_components as dbc
from dash import html
from dash.exceptions import PreventUpdate

from app import services
from app.views import figures, figures_persuasive
from app.views.components import card, choice_names, empty_figure, error_alert, fmt, gilpin_badge
from app.views.figures_persuasive import COST_ROWS
from app.views.markdown import markdown_panel, md_table, md_text
from workspace.errors import CandorError


_ROW = COST_ROWS


def render_persuasive(row, k, rounding="exact", grouping=None, sensitive=None, draw=None):
    """The row's story, its checks and costs and three figures, or why not (``draw``: a kept drawing,
    :func:`app.callbacks.persuasive.render_row`)."""
    if row is None or k is None:
        raise PreventUpdate
    try:
        return (draw or draw_row)(row, k, rounding, bool(grouping), tuple(choice_names(sensitive)))
    except CandorError as err:
        return (error_alert(str(err)), None, None, None, None, *(empty_figure(str(err)),) * 3)


def draw_row(row, k, rounding, grouping, sensitive):
    """:func:`render_persuasive`'s panels from :func:`app.services.persuasive_view` (raises CandorError)."""
    view = services.persuasive_view(row, k, rounding, grouping, list(sensitive))
    s, e = view.simplification, view.simplification.parent
    full = figures.attribution_bar(e, max_display=len(e.values), title=f"Descriptive: every SHAP attribution"
                                   f"<br><sup>Gilpin: {view.descriptive_label.text()}</sup>")
    full.update_layout(margin=dict(t=75))
    shown = figures_persuasive.persuasive_items(s, f"Persuasive: {len(s.items)} item(s) shown"
                                                   f"<br><sup>Gilpin: {view.persuasive_label.text()}</sup>")
    if s.statement:  # the figure's text alternative is the verified plain-language summary it illustrates
        shown.update_layout(meta=dict(alt=figures.alt_text(s.statement)))
    return (_statement(view), _verification(s), _guardrail(view), _dropped(view), _cost(view), full, shown,
            figures_persuasive.row_tradeoff(view.curve, s))


def _statement(view):
    s = view.simplification
    chain = " → ".join(name for name, _ in s.operators)
    withheld = sum(not c.ok for c in s.sentences)
    body = [html.Div([gilpin_badge(view.persuasive_label)], className="mb-2"),
            html.P(s.statement or "(nothing to say: k = 0)", className="statement")]
    if withheld:
        body.append(dbc.Alert(f"{withheld} sentence(s) withheld: a claim did not match the descriptive explanation "
                              "(see the check below).", color="warning", class_name="py-1"))
    return card(f"What a reader is told (k = {view.settings['k']})", body,
                source=f"operators {chain}; each sentence is a template whose every claim (class, numbers, "
                       "direction, rank, level, 'mainly') is checked against the SHAP attributions before it is shown; "
                       "'high'/'low' compare with the training median")


def _verification(s):
    lines = []
    for c in s.sentences:
        lines.append(f"- **{'shown' if c.ok else 'withheld'}:** {md_text(c.sentence.text)}")
        lines += [f"    - ✓ {md_text(ch.claim)}: {md_text(ch.detail)}" if ch.ok else
                  f"    - **✗ {md_text(ch.claim)}**: {md_text(ch.detail)}" for ch in c.checks]
    n_claims = sum(len(c.checks) for c in s.sentences)
    n_ok = sum(ch.ok for c in s.sentences for ch in c.checks)
    return html.Details([html.Summary(f"Claim-by-claim check: {n_ok} of {n_claims} claims hold, "
                                      f"{sum(c.ok for c in s.sentences)} of {len(s.sentences)} sentences shown"),
                         markdown_panel("\n".join(lines), "verify-list")], className="mb-3 verify-details")


def _guardrail(view):
    if not view.guardrail:
        watched = ", ".join(view.sensitive) or "none declared"
        return html.Div(f"Guardrail: the top-ranked feature is shown; sensitive features ({watched}) are not hidden "
                        f"above {view.settings['max_share']:.0%} of |attribution|.", className="guardrail-ok mb-2")
    return [dbc.Alert(n.message, color="danger", class_name="py-1 mb-1") for n in view.guardrail]


DROPPED_ROWS = 10
"""The dropped features a row of the table each (the largest |attribution| first, and every sensitive one); the rest
share one line. The full SHAP bar beside it draws every attribution (27 rows of the table were 148 of the Persuasive
page's 554 components when each cell was one; the table is now one Markdown component, :mod:`app.views.markdown`)."""


def _dropped(view):
    source = "rank and share of total |attribution| in the descriptive SHAP explanation"
    if not view.dropped:
        return card("What was dropped (0 features)", html.P("Nothing: every feature is named."), source=source)
    ranked = sorted(view.dropped, key=lambda d: d.rank)
    in_table = [i < DROPPED_ROWS or d.sensitive for i, d in enumerate(ranked)]
    rows = [d for d, shown in zip(ranked, in_table) if shown]
    rest = [d for d, shown in zip(ranked, in_table) if not shown]
    text = md_table(("feature", "rank", "attribution", "share"),
                    [(d.feature + (" (sensitive)" if d.sensitive else ""), d.rank, f"{d.attribution:+.4f}",
                      f"{d.share:.1%}") for d in rows], right=(False, True, True, True))
    if rest:
        text += "\n\n" + md_text(f"and {len(rest)} more, together {sum(d.share for d in rest):.1%} of |attribution| "
                                  "(each drawn in the chart of every SHAP attribution below): "
                                  + ", ".join(d.feature for d in rest) + ".")
    body = [markdown_panel(text, "dropped-table")]
    return card(f"What was dropped ({len(view.dropped)} features)", body, source=source)


def _cost(view):
    s = view.simplification
    before, after = s.fidelity_before, s.fidelity_after
    def cell(values, key, f):
        return (f.format(values[key]) if f else fmt(values[key])) if key in values else "n/a"

    rows = [(label, cell(after, key, f), cell(before, key, f)) for key, label, f in _ROW]
    rows.append(("Items / words / chunks", f"{s.complexity_after['n_items']} / {s.complexity_after['n_words']} / "
                 f"{s.complexity_after['n_chunks']} ({len(s.dropped)} features hidden)",
                 f"{s.complexity_before['n_items']} / {s.complexity_before['n_words']} / "
                 f"{s.complexity_before['n_chunks']}"))
    body = [markdown_panel(md_table(("measure", "this story", "all features"), rows, right=(False, True, True)),
                           "cost-table")]
    if after.get("curve_gap_small"):
        body.append(dbc.Alert(f"Deletion/insertion say little for this row: the training-median baseline already scores "
                              f"{fmt(after['curve_gap'])} from the row's output (g(x) − g(baseline)), under a quarter of "
                              "the output's spread over the background rows or of the range the curves travel, so "
                              "their normalised areas divide by almost nothing and can leave 0 to 1.",
                              color="warning", class_name="py-1 mt-2"))
    return card("What the simplification costs", body,
                source=f"{s.parent.source}; ERASER sufficiency/comprehensiveness and AOPC (DeYoung et al. 2020) with "
                       "hidden features set to each background row, AOPC over the ranks the view shows; "
                       "deletion/insertion AUC (Petsiuk et al. 2018) towards the training median, as a share of "
                       "g(x) − g(baseline), hidden features in the full explanation's order; local R² on a seeded "
                       "500-sample neighborhood")
