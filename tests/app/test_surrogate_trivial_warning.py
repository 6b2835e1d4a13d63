"""The Surrogate page warns when a surrogate does not beat the trivial one (issue 13, defect 5).

The expected agreements are counted here with numpy on a hand-made table; the page's text must
carry them.
"""
from types import SimpleNamespace

import numpy as np
import pandas as pd

from app.views.surrogate import surrogate_summary, trivial_warning
from explainers.muse import agreement_detail, evaluate_rule_set, make_rule_set
from explainers.types import Predicate


def _view(triples, X, y):
    rs = make_rule_set(triples, X, y, method="muse")
    q, d = evaluate_rule_set(rs, X, y), agreement_detail(rs, X, y, trivial_label="rest")
    return SimpleNamespace(rule_set=rs, heldout=q, detail=d, n_eval=len(y), source="test",
                           rule_texts=(), neighborhood_texts=())


def _text(component) -> str:
    if isinstance(component, str):
        return component
    children = getattr(component, "children", None)
    if children is None:
        return ""
    return " ".join(_text(c) for c in (children if isinstance(children, (list, tuple)) else [children]))


def test_a_surrogate_worse_than_always_the_majority_is_flagged():
    x = np.arange(50.0)
    y = np.where(x < 46, "rest", "this")           # always "rest" agrees on 46 / 50 = 0.92
    X = pd.DataFrame({"x": x})
    bad = _view([((), (Predicate("x", "<=", 13.5),), "this")], X, y)  # 14 wrong rows: 32 / 50
    assert bad.heldout.agreement == np.mean(np.where(x <= 13.5, "this", "rest") == y) == 0.64
    alert = trivial_warning(bad)
    assert alert is not None and alert.color == "warning"
    assert "0.640" in _text(alert) and "0.920" in _text(alert) and "does not beat" in _text(alert)
    assert "does not beat" in _text(surrogate_summary(bad))
    good = _view([((), (Predicate("x", ">", 45.5),), "this")], X, y)  # exact: 50 / 50
    assert good.heldout.agreement == 1.0 and trivial_warning(good) is None
