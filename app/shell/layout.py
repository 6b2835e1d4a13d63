"""The shell: navbar from ``dash.page_registry``, the global row and class pickers, the page container."""
from __future__ import annotations

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from ..serve import access
from . import ids
from .. import services
from ..report.button import export_button


def _nav_links() -> list:
    pages = sorted((p for p in dash.page_registry.values() if p.get("order") is not None and p["order"] < 100
                    and services.why_not(p.get("requires")) is None),
                   key=lambda p: p["order"])
    return [dbc.NavItem(dbc.NavLink(p["name"], href=p["relative_path"], active="exact")) for p in pages]


def _random_row_title(pool: dict) -> str:
    """What "Random row" picks from, said on the button's tooltip."""
    if pool.get("stored") is not None:
        return (f"a random one of the {pool['stored']:,} held-out rows the store holds (of {pool['of']:,}); "
                "type any other row to explain it")
    return f"a random held-out row (of {pool['of']:,})"


def row_picker(shown: bool = True) -> html.Div:
    """The navbar's row number, "Random row" and status line (``shown`` False: hidden, off a row page)."""
    n = len(services.workspace().X)
    pool = services.random_row_pool()
    return html.Div([
        dbc.Label("Row", html_for=ids.ROW_INPUT, className="me-2 mb-0 text-white"),
        # the row lives in the URL (?row=N), not in browser storage: a link shows the same row to anyone
        dbc.Input(id=ids.ROW_INPUT, type="number", min=0, max=n - 1, step=1, value=services.default_row(),
                  debounce=True, size="sm", className="row-input"),
        dbc.Button("Random row", id=ids.ROW_RANDOM, size="sm", color="light", className="ms-2", n_clicks=0,
                   title=_random_row_title(pool)),
        html.Span(id=ids.ROW_STATUS, className="ms-2 text-white-50 small"),
        dcc.Store(id=ids.ROW_URL_SYNC),
        dcc.Store(id=ids.ROW_POOL, data=pool),  # "Random row" picks in the browser
        dcc.Store(id=ids.WHATIF), dcc.Store(id=ids.WHATIF_URL_SYNC),  # the what-if edits of the row (app/views/whatif.py)
    ], className="d-flex align-items-center" if shown else "d-none", id=ids.ROW_PICKER)


def class_picker() -> html.Div:
    """The class a multiclass model's pages explain against the rest (absent for other models).

    Disabled, with a note, for a user without the analyst role (the server refuses their switch too).
    """
    choices, current = services.class_choices()
    allowed = access.has_role("analyst")
    return html.Div([
        dbc.Label("Class", html_for=ids.CLASS_SELECT, className="me-2 mb-0 text-white"),
        # a dcc.Dropdown: dbc.Select always renders an empty placeholder option first (a first-time user saw it)
        dcc.Dropdown(id=ids.CLASS_SELECT, options=[{"label": c, "value": c} for c in choices], value=current,
                     clearable=False, searchable=False, className="class-select", disabled=not allowed),
        dcc.Loading(html.Span(id=ids.CLASS_STATUS, className="ms-2 text-white-50 small"), type="dot",
                    color="#ffffff", parent_className="d-inline-block"),
        dcc.Store(id=ids.CLASS_SWITCHED),
    ], className="d-flex align-items-center me-3" if choices else "d-none",
        title="every page explains this class against the rest" if allowed
        else "switching the class needs the analyst role")


def class_note(wanted) -> html.Div | None:
    """The one-line note of a link made for another class than the one the server explains now, or None.

    A link never switches the class (it is the server's, for everyone): the note says which class the link was
    made for and, to a user whose role may switch it, offers the switch (a click, a POST the server checks).
    """
    if wanted is None:
        return None
    now = services.class_choices()[1]
    if wanted == now:
        return None
    text = (f"This link was made for class {wanted!r}; every page explains {now!r} now (the class is chosen for "
            "everyone using this server). ")
    if access.has_role("analyst"):
        offer = dbc.Button(f"Explain {wanted!r} for everyone", id=ids.URL_CLASS_SWITCH, size="sm", color="link",
                           className="p-0 align-baseline small", n_clicks=0)
    else:
        offer = "Switching the class needs the analyst role."
    return html.Div(dbc.Alert([text, offer, dcc.Store(id=ids.URL_CLASS_WANTED, data=wanted)], color="info",
                              className="py-1 px-2 mb-2 small"), id=ids.URL_CLASS_NOTE, role="status")


def user_box() -> html.Div:
    """Who is logged in, with a Log out button (a form POST to /logout); empty for the local user."""
    user = access.current_user()
    if user is None or user.name == access.LOCAL_USER:
        return html.Div()
    return html.Form([
        html.Span(f"{user.name} ({user.role})", className="text-white-50 small me-2"),
        dbc.Button("Log out", type="submit", size="sm", color="light", outline=True),
    ], action=access.LOGOUT_PATH, method="post", className="d-flex align-items-center ms-3 mb-0")


def navbar_content(row_picker_shown: bool = True) -> dbc.Container:
    """What the navbar holds for the model explained now: its name, the pages it offers, the class and row
    pickers; rendered again when an upload switches the model (:mod:`app.callbacks.upload`)."""
    ws = services.workspace()
    return dbc.Container([
        dbc.NavbarBrand(["Candor", html.Span(f" · {ws.name}", className="brand-sub")], href="/"),
        dbc.Nav(_nav_links(), navbar=True, className="me-auto"),
        class_picker(),
        row_picker(row_picker_shown),
        export_button(),  # every page offers the review report of the current row (app/report/)
        user_box(),
    ], fluid=True)


def shell() -> html.Div:
    if access.current_user() is None:  # a study participant (or someone about to log in): no analyst navbar
        return html.Div([dcc.Location(id=ids.URL), dbc.Container(dash.page_container, fluid=True)])
    navbar = dbc.Navbar(navbar_content(), color="dark", dark=True, className="mb-3", id=ids.NAVBAR)
    return html.Div([dcc.Location(id=ids.URL), navbar, dbc.Container(dash.page_container, fluid=True)])
