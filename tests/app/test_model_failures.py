"""A model that loads and passes its first rows but raises later is one line on the page and in ``check`` (issue 27).

FAILED before ``explainers.model_adapter.set_model_failure``: the Descriptive row's callback raised the model's
own ValueError (HTTP 500 on the page) and ``python -m app check`` ended in a traceback.
"""
from __future__ import annotations

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from app.views import descriptive
from app.cli.check import main as check
from explainers import model_adapter
from workspace import limits
from workspace.workspace import load_user_workspace

MESSAGE = "the licence server stopped answering"
BROKEN = {"now": False}


class FailsAfterLoading(LogisticRegression):
    """Predicts while Candor loads it (the load-time probe passes), then raises on every call."""

    def predict_proba(self, X):
        if BROKEN["now"]:
            raise ValueError(MESSAGE + "\n(second line of the model's message)")
        return super().predict_proba(X)

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def _load_then_break(*args, **kwargs):
    ws = load_user_workspace(*args, **kwargs)
    BROKEN["now"] = True
    return ws


@pytest.fixture
def pair(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=80), "z": rng.normal(size=80)})
    frame["label"] = np.where(frame.x + 0.3 * frame.z > 0, "hi", "lo")
    BROKEN["now"] = False
    model = FailsAfterLoading().fit(frame[["x", "z"]], frame.label)
    joblib.dump(model, tmp_path / "m.joblib")
    frame.to_csv(tmp_path / "d.csv", index=False)
    yield tmp_path / "m.joblib", tmp_path / "d.csv"
    model_adapter.set_model_failure()  # the process-wide default again


def test_the_descriptive_row_shows_one_line(pair, install):
    ws = _load_then_break(str(pair[0]), str(pair[1]), "label", trust_pickle=True)
    install(ws)
    limits.apply_model_failure()  # as create_app does
    waterfall, lime_bar, alert, notes = descriptive.render_local(3)
    text = str(alert.children)
    assert "the model failed on" in text and f"(ValueError: {MESSAGE})" in text
    assert "\n" not in text and "second line" not in text and notes is None


def test_check_says_it_in_one_line(pair, capsys, monkeypatch):
    import workspace.workspace

    monkeypatch.setattr(workspace.workspace, "load_user_workspace", _load_then_break)
    assert check(["--model", str(pair[0]), "--data", str(pair[1]), "--target", "label", "--trust-model-code"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("candor: error: the model failed on 20 rows") and f"(ValueError: {MESSAGE})" in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
