"""Persuasive page, the story test: the job's controls (immutable features, run, cancel, progress), its verdict beside
the story, and the row's counterfactuals (the unrestricted search's cheapest, each with its distance and changes)."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from app.services import counterfactuals as cfs
from app.shell import ids
from app.views.components import card, choice_options, method_note, metric, metric_row
from explainers.numbers import plain

__all__ = ["story_controls", "story_hint", "story_card", "search_phase"]

HINT = ("Story test: search for the smallest changes that flip this row's decision, once changing only the features "
        "the story names and once changing any feature (a few seconds, at most "
        f"{2 * cfs.BUDGET:,} model evaluations).")


def search_phase(done: int, total: int) -> tuple[str, int, int]:
    """The job's progress counted per search, as the card names them: the story test's ``total`` is twice one
    search's budget, the story-only search's first (a search that ends early jumps to the next's start)."""
    per = total // 2
    return ("story's features only", done, per) if done <= per else ("any feature", done - per, total - per)


def story_hint() -> html.Div:
    """What the card shows before the job has run for the story shown."""
    return method_note(HINT)


def story_controls(analyst: bool, features, why: str | None = None) -> html.Div:
    """The immutable-feature picker, Run / Cancel, the progress bar and the card's place (the job needs an analyst);
    ``why``: why the story test does not apply to the model (Run disabled, the card says why)."""
    picker = dbc.Col([dbc.Label("Features held fixed (immutable)", html_for=ids.STORY_IMMUTABLE),
                      dcc.Dropdown(id=ids.STORY_IMMUTABLE, options=choice_options(features), value=[], multi=True,
                                   placeholder="e.g. age, race")], md=5)
    buttons = dbc.Col(html.Div([
        dbc.Button("Run the story test", id=ids.STORY_RUN, color="secondary", size="sm", n_clicks=0, className="me-2",
                   disabled=not analyst or why is not None),
        *([] if analyst else [html.Small("Running this job needs the analyst role.", className="text-muted me-2")]),
        dbc.Button("Cancel", id=ids.STORY_CANCEL, color="outline-secondary", size="sm", n_clicks=0, disabled=True),
        dbc.Progress(id=ids.STORY_PROGRESS, value=0, label="", className="ms-3 flex-grow-1 job-progress"),
    ], className="d-flex align-items-center"), md=7, className="d-flex align-items-end")
    return html.Div([
        html.H3("Story test: can the story's features change the outcome?", className="h4 mt-3"),
        dbc.Row([picker, buttons], className="mb-2"),
        html.Div(story_hint() if why is None else dbc.Alert(f"Story test: {why}.", color="secondary", class_name="py-1"),
                 id=ids.STORY_CARD),
    ], className="mb-3")


def _verdict_color(test) -> str:
    if not test.any_feature.found:
        return "secondary"
    if not test.story_flips or test.share >= 0.5:
        return "warning"
    return "success"


def _search_line(name: str, c) -> str:
    done = f"{c.n_evaluated:,} of {c.budget:,} model evaluations in {c.n_calls} calls"
    return f"{name}: {len(c.pool)} counterfactual(s) found, {done}" + (" (budget spent)" if c.exhausted else "")


def _story_panel(view) -> dbc.Col:
    t = view.test
    only, free = t.story_only, t.any_feature
    share = "n/a" if t.k == 0 else f"{t.n_need_hidden} of {t.k}"
    interval = "" if t.k == 0 else f"{t.share:.0%}, 95 % Wilson {t.share_low:.0%}–{t.share_high:.0%}"
    return dbc.Col([
        dbc.Alert(cfs.verdict(t), color=_verdict_color(t), className="py-2 mb-2 story-verdict"),
        html.P(["Story names: ", html.Strong(", ".join(t.story) or "nothing (k = 0)"),
                f" · held fixed: {', '.join(view.settings['immutable']) or 'none'}"], className="small mb-2"),
        metric_row([
            metric("Story alone flips", "yes" if t.story_flips else "no", _search_line("story's features", only)),
            metric("Cheapest distance", "n/a" if only.cheapest is None else plain(only.cheapest, 3, trim=True),
                   "any feature: " + ("n/a" if free.cheapest is None else plain(free.cheapest, 3, trim=True))),
            metric("Cheapest flips needing a hidden feature", share, interval or None),
        ]),
        html.Small(_search_line("any feature", free), className="text-muted"),
    ], lg=5)


def _change_text(c) -> str:
    return f"{c.feature}: {c.before} → {c.after}"


def _list_panel(view) -> dbc.Col:
    free = view.test.any_feature
    if not free.shown:
        return dbc.Col(html.P("No counterfactual found within the budget: nothing to list."), lg=7)
    story = set(view.test.story)
    rows = [html.Tr([html.Td(i + 1), html.Td(plain(c.distance, 3, trim=True)), html.Td(c.n_changed),
                     html.Td(html.Ul([html.Li(_change_text(ch) + ("" if ch.feature in story else " (hidden by the story)"))
                                      for ch in c.changes], className="mb-0 ps-3")),
                     html.Td(plain(c.output, 3, trim=True))]) for i, c in enumerate(free.shown)]
    head = html.Thead(html.Tr([html.Th("#"), html.Th("Distance"), html.Th("Features changed"), html.Th("Changes"),
                               html.Th("New output")]))
    caption = html.Caption(f"Counterfactuals of this row: the decision becomes {free.wanted} (now {free.decision}, "
                           f"output {plain(free.output, 3, trim=True)}); cheapest first, each changing a different set "
                           "of features", className="caption-top")
    return dbc.Col(dbc.Table([caption, head, html.Tbody(rows)], size="sm", className="mb-1 counterfactual-table"),
                   lg=7)


def story_card(view) -> dbc.Card:
    """The story test's verdict and figures beside the row's counterfactuals."""
    s = view.settings
    source = (f"two searches with the same budget ({s['budget']:,} model evaluations each) and immutable features, "
              "one changing only the story's features, one any feature; distance: "
              f"{view.test.any_feature.distance}; the share counts the {s['k_cheapest']} cheapest counterfactuals "
              "of the unrestricted search, one per set of changed features, with a Wilson interval that treats them "
              "as independent (they come from one search) (docs/methods.md, \"Counterfactuals and the story test\")")
    body = dbc.Row([_story_panel(view), _list_panel(view)])
    return card(f"Row {view.row}: the story at k = {s['k']} against what would flip the decision", [body],
                source=source)
