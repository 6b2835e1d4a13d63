"""Persuasive: the simplified story beside the full explanation, with what each operator costs."""
import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app.shell import ids
from app import services
from app.serve.access import has_role
from app.shell.url_state import from_url
from app.services import counterfactuals as cfs
from app.views import sent
from app.views.components import choice_options, graph, row_status_store, slider_marks
from app.views.whatif import editor_card
from app.views.counterfactuals import story_controls
from app.views.persuasive_rules import OPENING

REQUIRES = "persuasive"
"""The method family this page shows (:func:`app.services.why_not` says whether it applies)."""

dash.register_page(__name__, path="/persuasive", name="Persuasive", title="Candor · Persuasive", order=3,
                   requires=REQUIRES)

ROUNDING_OPTIONS = [{"label": "exact", "value": "exact"}, {"label": "round to 0.01", "value": "0.01"},
                    {"label": "round to 0.05", "value": "0.05"}, {"label": "round to 0.1", "value": "0.1"},
                    {"label": "strong / moderate / weak", "value": "qualitative"},
                    {"label": "direction only", "value": "direction"}]


@from_url('/persuasive')  # the view's state from and to its URL (app/shell/url_state.py)
def layout(**_):
    if (why := services.why_not(REQUIRES)) is not None:
        return html.Div([html.H2("Persuasive"), dbc.Alert(why, color="secondary")])
    columns = list(services.workspace().X.columns)
    d = min(len(columns), services.persuasive_max_k())
    slider = dcc.Slider(id=ids.K_SLIDER, min=1, max=d, step=1, value=services.persuasive_opening_k(),
                        marks={k: str(k) for k in slider_marks(d)},
                        tooltip={"placement": "bottom", "always_visible": False})
    controls = dbc.Row([
        dbc.Col([dbc.Label("k: items shown", html_for=ids.K_SLIDER), slider], md=4, className="k-control"),
        dbc.Col([dbc.Label("Values", html_for=ids.ROUNDING),
                 dcc.Dropdown(id=ids.ROUNDING, options=ROUNDING_OPTIONS, value="exact", clearable=False)], md=2),
        dbc.Col([dbc.Label("Grouping", html_for=ids.GROUPING),
                 dbc.Checklist(id=ids.GROUPING, options=[{"label": "merge features with |Spearman ρ| ≥ 0.8",
                                                          "value": "on"}], value=[], switch=True)], md=3),
        dbc.Col([dbc.Label("Sensitive features", html_for=ids.SENSITIVE),
                 dcc.Dropdown(id=ids.SENSITIVE, options=choice_options(columns), value=[], multi=True,
                              placeholder="e.g. race, sex")], md=3),
    ], className="mb-3")
    return html.Div([
        html.H2("Persuasive: the simplified story and its cost"), row_status_store("persuasive"), sent.store("persuasive"),
        editor_card("persuasive"),  # what-if: edit the row's features (issue 25)
        controls,
        dbc.Row([dbc.Col([html.Div(id=ids.GUARDRAIL), html.Div(id=ids.STATEMENT), html.Div(id=ids.VERIFY)], md=8),
                 dbc.Col(html.Div(id=ids.DROPPED, className="dropped-panel"), md=4)]),
        _story_test(),
        html.Div(id=ids.COST),
        dbc.Row([dbc.Col(graph(ids.FULL_BAR, 520), md=4), dbc.Col(graph(ids.TOPK_BAR, 520), md=4),
                 dbc.Col(graph(ids.TRADEOFF, 520), md=4)]),
        dbc.Row([dbc.Col(graph(ids.GLOBAL_TRADEOFF, 420), md=8)]),
        _rules_section(),
    ])


def _story_test():
    """The story test and the row's counterfactuals (one background job), or why they do not apply."""
    why = cfs.why_not()
    return story_controls(has_role("analyst"), cfs.features() if why is None else [], why)


def _rules_section():
    """Rule surrogates simplified: keep fewer rules, round thresholds, phrase predicates; cost re-measured."""
    controls = dbc.Row([
        dbc.Col([dbc.Label("Descriptive surrogate (from the Surrogate page's frontier)", html_for=ids.RULES_SOURCE),
                 dcc.Dropdown(id=ids.RULES_SOURCE, clearable=False)], md=5),
        dbc.Col([dbc.Label("Rules shown", html_for=ids.RULES_KEEP),
                 dbc.Input(id=ids.RULES_KEEP, type="number", min=0, max=30, step=1, value=OPENING[0])], md=2),
        dbc.Col([dbc.Label("Round thresholds", html_for=ids.RULES_ROUND),
                 dcc.Dropdown(id=ids.RULES_ROUND, clearable=True, placeholder="exact",
                              options=[{"label": f"{n} significant digits", "value": n} for n in (1, 2, 3)])], md=3),
        dbc.Col([dbc.Label("Plain language", html_for=ids.RULES_PLAIN),
                 dbc.Checklist(id=ids.RULES_PLAIN, options=[{"label": "phrase predicates", "value": "on"}],
                               value=[], switch=True)], md=2),
    ], className="mb-2")
    return html.Div([
        html.H3("Rules: the simplified surrogate and its cost", className="h4 mt-4"),
        controls, html.Div(id=ids.RULES_LINK_NOTE, role="status"),
        dbc.Row([dbc.Col([html.Div(id=ids.RULES_SHOWN), html.Div(id=ids.RULES_COST)], md=7),
                 dbc.Col(graph(ids.RULES_TRADEOFF, 380), md=5)]),
    ])
