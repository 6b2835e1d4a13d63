"""Issue 26: every advised trial logs ``surrogate_agreement`` with its fidelity figures: the agreement with the
model of the explanation's rule surrogate, or missing (null) when the explanation has none. The study's
explanations are attributions (SHAP, its top-k simplification), so each logs it as missing; the regression
then names it and says why (``tests/study/test_study_fidelity_regression.py``). Oracle for a rule surrogate:
a rule simplification's own ``agreement`` (``explainers/persuasive/_rules.py``: the share of rows where the
rules' prediction equals the model's label), computed here by hand and logged as it is."""

from __future__ import annotations

import numpy as np
import pytest

from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import serve_study


def test_attribution_explanations_log_surrogate_agreement_as_missing(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app.services.study_stimuli import stimulus_view

    study = serve_study(db_url, tmp_path, monkeypatch)
    for cond in ("descriptive", "persuasive"):
        m = stimulus_view(study, "r12", cond).context.fidelity_measures
        assert "surrogate_agreement" in m and m["surrogate_agreement"] is None and "agreement" not in m
    assert stimulus_view(study, "r12", "none").context.fidelity_measures is None  # prediction only: no explanation


def test_a_rule_surrogate_agreement_is_logged_as_the_rules_agreement_with_the_model():
    from app.services.study_stimuli import _measures

    rng = np.random.default_rng(0)
    pred, y = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    by_hand = float(np.mean(pred == y))
    logged = _measures({"agreement": by_hand, "coverage": 0.8, "mass_retained": float("nan")})
    assert logged == {"coverage": 0.8, "mass_retained": None, "surrogate_agreement": pytest.approx(by_hand)}
    assert _measures({"mass_retained": 0.5}) == {"mass_retained": 0.5, "surrogate_agreement": None}
