"""No server path, process id or internal id reaches a page or a non-researcher's response (issue 27).

Found: ``/_candor/workspace`` gave any viewer the worker's PID and the selection's generation; the Text page
showed every viewer the server's path to ``--text-model`` (its intro, its model line, its load errors); after a
class switch the navbar showed an upload's stored name (``<id>-wine.csv``); a report named an upload by its
stored name too.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.ensemble import GradientBoostingClassifier

from app import services
from app.callbacks import shell
from app.shell.layout import navbar_content
from app.report.provenance import provenance
from app.services import _core, selection, text_loader
from app.services.selection import Selection
from tests.byo.conftest import write_pair
from tests.security.access_support import dash_app, isolated, login, users_file  # noqa: F401
from workspace.errors import CandorError

STORED_ID = "a1b2c3d4e5f6"


def test_workspace_info_shows_no_pid_to_a_viewer(dash_app, isolated, monkeypatch):
    users_file(isolated, monkeypatch, vic=("viewer", "pw-vic-123"), ana=("analyst", "pw-ana-123"),
               res=("researcher", "pw-res-123"))
    seen = {}
    for name in ("vic", "ana", "res"):
        client = dash_app.server.test_client()
        assert login(client, name, f"pw-{name}-123").status_code == 303
        seen[name] = client.get("/_candor/workspace").get_json()
    for name in ("vic", "ana"):
        assert "pid" not in seen[name] and "generation" not in seen[name]
        assert seen[name]["name"] == "Breast cancer (bundled sample)"
    assert isinstance(seen["res"]["pid"], int)  # the operator's view of multi-worker deployments


def test_the_text_page_names_its_model_folder_never_its_path(dash_app, monkeypatch, tmp_path):
    import sys

    import dash

    # the page module as Dash registered it ("pages.text"): importing app.pages.text again would register the
    # same path twice, and every later create_app in this process would fail on the duplicate
    text_page = sys.modules[dash.page_registry["pages.text"]["module"]]

    folder = tmp_path / "private" / "models" / "reviews-bert"
    monkeypatch.setenv("CANDOR_TEXT_MODEL", str(folder))
    intro = json.dumps(text_page._intro().to_plotly_json(), default=str)
    assert "reviews-bert" in intro and str(tmp_path) not in intro
    with pytest.raises(CandorError) as err:  # the folder is missing: the page says so, by its name
        text_loader.model_labels()
    assert "reviews-bert" in str(err.value) and str(tmp_path) not in str(err.value)
    assert text_loader.without_folder_path(f"text model {folder.resolve()}/config.json: bad") == \
        "text model reviews-bert/config.json: bad"


@pytest.fixture
def uploaded_wine(tmp_path, monkeypatch):
    """The 3-class wine pair installed as an upload (stored as ``<id>-wine.*``); the sample put back after."""
    data = load_wine(as_frame=True)
    X, y = data.data, np.array(["barolo", "grignolino", "barbera"])[data.target]
    model = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(X, y)
    model_path, data_path = write_pair(tmp_path, model, X.assign(cultivar=y), name=f"{STORED_ID}-wine")
    previous_ws, previous_sel = _core._ws, selection.current()
    selection.start(previous_sel, warm=False)
    selection.install(Selection(model=str(model_path), data=str(data_path), target="cultivar", uploaded=True))
    yield model_path, data_path
    selection.start(previous_sel, warm=False)
    services.init(previous_ws, warm=False)


def _shown(ws) -> str:
    return json.dumps([ws.name, ws.source, list(ws.notes), navbar_content().to_plotly_json()], default=str)


def test_an_upload_is_named_as_uploaded_after_a_class_switch(uploaded_wine):
    assert STORED_ID not in _shown(services.workspace()) and "wine.csv" in services.workspace().name
    shell.switch_class("barolo")
    assert services.workspace().classes == ("not barolo", "barolo")
    assert STORED_ID not in _shown(services.workspace())  # was: "a1b2c3d4e5f6-wine.csv" in the navbar
    shell.switch_class("barbera")  # and again, from the re-sliced workspace
    assert STORED_ID not in _shown(services.workspace()) and "wine.csv" in services.workspace().name


def test_a_report_names_an_upload_as_uploaded(uploaded_wine):
    class Section:
        shap = services.shap_row(0)
        persuasive = None

    found = provenance(None, [Section], None, 5)
    names = json.dumps(found.files if hasattr(found, "files") else found, default=str)
    assert STORED_ID not in names and "wine.skops" in names and "wine.csv" in names
