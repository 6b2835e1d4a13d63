"""Surrogate page services: the CART rule surrogate and its fidelity-vs-complexity sweep."""
from __future__ import annotations

import explainers as ex

from ._core import lazy, workspace
from .tabular import model_labels

SURROGATE_LEAVES = 8


def _make_surrogate() -> ex.Surrogate:
    ws = workspace()
    labels = model_labels()
    s = ex.TreeRuleSurrogate(max_leaf_nodes=SURROGATE_LEAVES).fit(ws.X.iloc[ws.train_idx], labels[ws.train_idx])
    names = {c: n for c, n in zip(ws.model.classes_, ws.classes)}
    return s.to_surrogate(ws.X.iloc[ws.test_idx], labels[ws.test_idx], label_names=names)


def _make_curve() -> ex.SurrogateCurve:
    ws = workspace()
    labels = model_labels()
    return ex.tree_surrogate_curve(ws.X.iloc[ws.train_idx], labels[ws.train_idx],
                                   ws.X.iloc[ws.test_idx], labels[ws.test_idx])


_surrogate = lazy("surrogate", _make_surrogate, warm=True)
_curve = lazy("curve", _make_curve, warm=True)


def surrogate() -> tuple[ex.Surrogate, ex.SurrogateCurve]:
    """The CART rule surrogate and its fidelity-vs-complexity sweep."""
    return _surrogate(), _curve()
