"""The navbar's class picker on a real 3-class model (scikit-learn's wine data), and the shared selection file."""
import json

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.ensemble import GradientBoostingClassifier

from app import services
from app.callbacks import shell
from app.shell.layout import class_picker
from app.services import _core, selection
from app.services.selection import Selection
from tests.byo.conftest import write_pair
from tests.table_records import by_name


@pytest.fixture(scope="module")
def wine_files(tmp_path_factory):
    """A gradient-boosting model of the 3 wine cultivars (178 rows x 13 features), as skops + CSV."""
    data = load_wine(as_frame=True)
    X, y = data.data, np.array(["barolo", "grignolino", "barbera"])[data.target]
    model = GradientBoostingClassifier(n_estimators=30, max_depth=2, random_state=0).fit(X, y)
    model_path, data_path = write_pair(tmp_path_factory.mktemp("wine"), model, X.assign(cultivar=y))
    return model, X, model_path, data_path


@pytest.fixture
def wine_selected(wine_files, tmp_path, monkeypatch):
    """The wine pair installed as this launch's selection; the previous workspace is put back after."""
    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path))
    previous_ws, previous_sel = _core._ws, selection.current()
    model, X, model_path, data_path = wine_files
    selection.start(previous_sel, warm=False)  # as create_app(warm=False): pages computed when asked
    ws = selection.install(Selection(model=str(model_path), data=str(data_path), target="cultivar"))
    yield model, X, ws
    selection.start(previous_sel, warm=False)
    if previous_ws is not None:
        services.init(previous_ws, warm=False)


def test_picker_lists_the_classes_and_defaults_to_the_last(wine_selected):
    model, _, ws = wine_selected
    assert services.class_choices() == (("barbera", "barolo", "grignolino"), "grignolino")
    picker = class_picker()
    assert picker.className == "d-flex align-items-center me-3"
    select = picker.children[1]
    assert [o["value"] for o in select.options] == ["barbera", "barolo", "grignolino"] and select.value == "grignolino"


def test_choosing_a_class_switches_every_view_to_it(wine_selected):
    model, X, _ = wine_selected
    before = services.shap_row(3).prediction
    assert before == pytest.approx(model.decision_function(X.iloc[[3]])[0, 2])  # the boosted model's class score
    done, status = shell.switch_class("barolo")
    assert done == "Explaining class 'barolo' against the rest." and status == "reloading…"
    assert services.class_choices()[1] == "barolo" and services.workspace().classes == ("not barolo", "barolo")
    e = services.shap_row(3)
    # barolo's score before the softmax (exact for the boosted trees), its probability beside
    assert e.prediction == pytest.approx(model.decision_function(X.iloc[[3]])[0, 1]) and e.additivity_gap < 1e-9
    assert "before the softmax" in e.params["units"]
    assert "barolo vs rest" in services.model_summary().task
    labels = services.workspace().y
    assert labels.sum() == 59  # wine: 59 rows of cultivar 0 (barolo here)
    saved = json.loads(selection.state_file().read_text())
    assert saved["target_class"] == "barolo" and saved["generation"] == selection.current().generation


def test_unknown_class_is_refused_and_nothing_changes(wine_selected):
    generation = selection.current().generation
    done, status = shell.switch_class("merlot")
    assert done is None
    assert status == "class 'merlot' is not one of the model's classes: barbera, barolo, grignolino"
    assert selection.current().generation == generation and services.class_choices()[1] == "grignolino"


def test_another_process_picks_up_the_choice(wine_selected, monkeypatch):
    """What a second gunicorn worker does: its own state differs, the file says what to explain."""
    shell.switch_class("barbera")
    chosen = selection.current()
    # pretend this process is a worker that still explains the previous selection
    monkeypatch.setattr(selection, "_current", Selection())
    monkeypatch.setattr(selection, "_seen_mtime", None)
    selection.sync()
    assert selection.current() == chosen and services.workspace().classes == ("not barbera", "barbera")
    # nothing changed since: sync costs one stat and keeps the same workspace object
    ws = services.workspace()
    selection.sync()
    assert services.workspace() is ws


def test_binary_sample_has_no_picker(sample_workspace):
    assert services.class_choices() == ((), None)
    assert class_picker().className == "d-none"


def test_table_and_row_status_show_the_real_class_not_the_rest(wine_selected):
    model, X, ws = wine_selected
    records, _ = services.data_page(0, 3)
    named = by_name(records)
    assert [r["cultivar"] for r in named] == ["barolo", "barolo", "barolo"]  # wine rows 0-2 are cultivar 0
    assert " · true barolo · P(grignolino) " in services.row_status(0)


def test_a_switch_during_a_computation_is_said_and_never_called_a_mutation(wine_selected):
    """Another request choosing a class while this one computes: the fingerprint compares the same model."""
    from workspace.errors import CandorError
    from app.services import tabular

    def switches_meanwhile():
        shell.switch_class("barolo")
        return "result for the previous class"

    with pytest.raises(CandorError, match="the model or class was switched while computing SHAP; reload the page"):
        tabular.guarded("SHAP", switches_meanwhile)


def test_row_results_are_cached_per_workspace(wine_selected):
    """A per-row result computed for one class is never served for another."""
    before = services.shap_row(3)
    shell.switch_class("barolo")
    after = services.shap_row(3)
    assert after is not before and after.prediction != pytest.approx(before.prediction)
