"""Rows the store lacks (issue 23): explained live and added to the store, by SHAP and LIME explainers the warm-up
builds (and LIME's neighbourhood outputs it keeps), on the store :mod:`tests.store.test_build_serve` builds."""
from __future__ import annotations

import numpy as np
import pytest

from tests.store.test_build_serve import _same, built, serving  # noqa: F401  (its fixtures: a store of this module)


def test_a_missing_row_is_explained_live_and_added_to_the_store(serving, built):
    services, ws, folder = serving
    row = int(ws.train_idx[3])  # the store holds held-out rows only
    added = folder / "added" / "lime" / f"{row}.json"
    assert not added.exists()
    e = services.lime_row(row)
    assert added.is_file()
    from store.read import open_for

    again = open_for(built[0], ws).explanation("lime", row)  # a fresh process would read it back
    assert again.to_dict() == e.to_dict()
    np.testing.assert_array_equal(again.values, e.values)


def test_the_warm_up_builds_the_explainers_of_rows_the_store_lacks(serving, monkeypatch):
    """Served from a store, the warm-up builds SHAP's and LIME's explainers (the first row the store lacked paid for
    them, issue 23); the row then explained is the one they give."""
    services, ws, folder = serving
    from app.services import _core, tabular

    assert "lacking_row_explainers" in _core._warm_order
    assert not services.is_ready("shap") and not services.is_ready("lime")
    assert _core.get("lacking_row_explainers") is True
    assert services.is_ready("shap") and services.is_ready("lime")
    built_lime = tabular._lime()
    assert built_lime._kept.values > 0  # the warm-up explained a row: its neighbourhoods' model outputs are kept
    row = int(ws.train_idx[5])
    sent, own = [], ws.adapter.outputs
    monkeypatch.setattr(ws.adapter, "outputs", lambda Z: sent.append(len(Z)) or own(Z))
    tabular._make_lime().explain(ws.X.iloc[[row]])  # an explainer that has kept nothing: what the row sent before
    fresh, sent[:] = sum(sent), []
    monkeypatch.setattr(tabular, "_make_lime", lambda: pytest.fail("LIME's explainer built again for a row"))
    shown = services.lime_row(row)
    # the first round's neighbourhoods (the rounds the warm-up's row needed) are not sent again: the guard's
    # fingerprint rows aside, the row sends at most the samples of rounds the warm-up's row did not need
    assert 0 < sum(sent) - tabular.PROBE_ROWS < fresh - 500
    monkeypatch.setattr(ws.adapter, "outputs", own)
    assert _same(shown, built_lime.explain(ws.X.iloc[[row]]))


def test_live_the_first_rows_view_builds_them_instead(sample_workspace):
    from app import services
    from app.services import _core

    services.init(sample_workspace, warm=False)
    assert _core.get("lacking_row_explainers") is False
    assert not services.is_ready("lime")
