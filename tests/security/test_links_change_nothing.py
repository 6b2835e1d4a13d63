"""Opening a link (a GET) changes nothing for anyone else: a link's ``?class=`` never switches the class (issue 27).

Found: ``/descriptive?class=barolo`` switched the explained class of a multiclass model for everyone using the
server (a clientside callback set the navbar's picker from the URL, whose callback switched the server's class).
Now the page shows a one-line note naming the link's class, with the switch offered to users who may make it.
The browser half is tests/e2e/test_class_links.py.
"""
from __future__ import annotations

import json

import flask

from accounts.users import User
from app.shell import ids
from app import services
from app.services import selection
from tests.app.test_class_picker import wine_files, wine_selected  # noqa: F401
from tests.security.access_support import dash_app  # noqa: F401


def _layout(**query):
    import dash

    return next(p for p in dash.page_registry.values() if p["path"] == "/descriptive")["layout"](**query)


def _find(tree, cid):
    for c in tree._traverse_ids():
        if c.id == cid:
            return c
    return None


def _text(component) -> str:
    return json.dumps(component.to_plotly_json(), default=str)


def test_a_link_for_another_class_switches_nothing_and_offers_the_switch(dash_app, wine_selected):
    generation = selection.current().generation
    page = _layout(**{"class": "barolo", "row": "3"})
    assert services.class_choices()[1] == "grignolino" and selection.current().generation == generation
    note = _find(page, ids.URL_CLASS_NOTE)
    assert "made for class 'barolo'; every page explains 'grignolino' now" in _text(note)
    assert _find(page, ids.URL_CLASS_SWITCH) is not None  # outside a request: every role, as the local user
    assert _find(page, ids.URL_CLASS_WANTED).data == "barolo"


def test_a_viewer_is_told_who_may_switch(dash_app, wine_selected):
    app = flask.Flask(__name__)
    with app.test_request_context("/descriptive?class=barolo"):
        flask.g.candor_user = User("vic", "viewer")
        page = _layout(**{"class": "barolo"})
    assert "Switching the class needs the analyst role." in _text(_find(page, ids.URL_CLASS_NOTE))
    assert _find(page, ids.URL_CLASS_SWITCH) is None
    assert services.class_choices()[1] == "grignolino"


def test_a_link_for_the_current_class_has_no_note(dash_app, wine_selected):
    assert _find(_layout(**{"class": "grignolino"}), ids.URL_CLASS_NOTE) is None
