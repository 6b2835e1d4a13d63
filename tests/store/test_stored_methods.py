"""The table of methods in a store (issue 24): a global method (permutation importance) is one optional JSON
document of its result, written by the build's loop over the table, checked at open, served without recomputing;
a store built before it opens as before. Uses the build of ``test_build_serve`` (the bundled sample, 6 rows)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.store.test_build_serve import _copy, built, serving  # noqa: F401  (fixtures: one build per module)
from workspace.errors import CandorError
from workspace.settings import Settings


def _rehashed(copy: Path, name: str, text: str | None) -> dict:
    """Rewrite ``name`` with ``text`` (None: remove it) and its manifest entry, as a store built so would have it."""
    import hashlib

    manifest = json.loads((copy / "manifest.json").read_text())
    if text is None:
        manifest["files"].pop(name)
        (copy / name).unlink()
    else:
        (copy / name).write_text(text)
        raw = (copy / name).read_bytes()
        manifest["files"][name] = {**manifest["files"][name], "bytes": len(raw),
                                   "sha256": hashlib.sha256(raw).hexdigest()}
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return manifest


def test_permutation_importance_is_stored_and_served_without_recomputing(serving, monkeypatch):
    """A global method of the table of methods is one JSON document of its result, served as built."""
    from sklearn.inspection import permutation_importance

    from app.services import importance, methods

    services, ws, folder = serving
    stored = json.loads((folder / "permutation_importance.json").read_text())
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["explainers"]["permutation_importance"] == {"n_repeats": 10, "seed": 0, "rows": "held-out"}
    oracle = permutation_importance(ws.adapter.model, ws.X.iloc[ws.test_idx], ws.y[ws.test_idx], scoring="roc_auc",
                                    n_repeats=10, random_state=0)
    np.testing.assert_allclose(stored["importances"], oracle.importances_mean, atol=1e-12)

    def boom(*_):
        raise AssertionError("recomputed although the store has it")

    monkeypatch.setattr(importance, "guarded", boom)  # every live computation of it goes through guarded
    assert methods.method("permutation_importance").result().to_dict() == stored


def test_a_store_without_a_global_methods_document_opens_and_computes_it_live(built, tmp_path):
    """A version-1 store built before permutation importance existed opens as before; the method is live."""
    from app import services
    from app.services import methods
    from store.read import open_for

    settings, ws, folder = built
    copy = _copy(folder, tmp_path)
    _rehashed(copy, "permutation_importance.json", None)
    old = open_for(Settings(store=copy), ws)
    assert old.result("permutation_importance") is None and old.explanation("shap", int(old.rows[0])) is not None
    services.use_built_store(old)
    services.init(ws, warm=False)
    try:
        live = methods.method("permutation_importance").result()
        assert live.to_dict() == json.loads((folder / "permutation_importance.json").read_text())
    finally:
        services.use_built_store(None)
        services.init(ws, warm=False)


def test_a_malformed_global_methods_document_is_refused_in_one_line(built, tmp_path):
    from store.read import open_for

    settings, ws, folder = built
    copy = _copy(folder, tmp_path)
    doc = json.loads((copy / "permutation_importance.json").read_text())
    _rehashed(copy, "permutation_importance.json", json.dumps({**doc, "feature_names": doc["feature_names"][::-1]}))
    with pytest.raises(CandorError, match=r"permutation_importance.json is not a permutation importance of this "
                                          r"table's columns$"):
        open_for(Settings(store=copy), ws)
    _rehashed(copy, "permutation_importance.json", json.dumps({**doc, "repeats": [[1.0]]}))
    with pytest.raises(CandorError, match=r"permutation_importance.json is not a permutation importance"):
        open_for(Settings(store=copy), ws)


def test_partial_dependence_is_stored_and_the_dependence_page_serves_it_without_recomputing(serving, monkeypatch):
    """The second global method: the top 3 features' PDP and ICE, one document, equal to a brute-force average."""
    from app.services import dependence, methods

    services, ws, folder = serving
    stored = json.loads((folder / "partial_dependence.json").read_text())
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["explainers"]["partial_dependence"]["n_ice"] == 500
    assert [p["feature"] for p in stored["partials"]] == list(dependence.features()[:3])
    first = stored["partials"][0]
    X = ws.X.iloc[ws.test_idx].iloc[first["rows"]]
    brute = []
    for value in first["grid"]:  # the oracle: set the column, call the model, average
        edited = X.copy()
        edited[first["feature"]] = value
        brute.append(ws.output(edited).mean())
    np.testing.assert_allclose(first["average"], brute, atol=1e-12)

    def boom(*_):
        raise AssertionError("recomputed although the store has it")

    monkeypatch.setattr(dependence, "_explainer", boom)  # every live PDP goes through the explainer
    assert methods.method("partial_dependence").result().to_dict() == stored
    assert dependence.dependence(first["feature"]).partial.to_dict() == first
