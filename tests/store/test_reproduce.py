"""Issue 23: a store says enough for anyone to recompute its values (manifest ``reproduce``, the row files).

A RandomForest on 6 breast-cancer columns is saved as a user's files and built into a store; a stored SHAP row
is then recomputed from ``table.iloc[background rows]`` alone by brute force over all 2^6 coalitions (the
interventional Shapley value of P(class 1), independent of Candor's Tree SHAP), and a stored LIME row by a fresh
:class:`explainers.LimeExplainer` given only the manifest's training rows and settings.
"""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

COLUMNS = ["mean radius", "mean texture", "mean smoothness", "worst area", "worst concavity", "worst symmetry"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    import skops.io as sio
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from app import services
    from app.cli.build import build
    from store.read import open_store
    from store.hashes import source_hashes
    from workspace.settings import Settings

    folder = tmp_path_factory.mktemp("reproduce")
    data = load_breast_cancer(as_frame=True).frame[[*COLUMNS, "target"]]
    model = RandomForestClassifier(n_estimators=25, max_depth=6, random_state=0)
    model.fit(data[COLUMNS], data["target"])
    sio.dump(model, folder / "rf.skops")
    data.to_csv(folder / "table.csv", index=False)
    settings = Settings(model=folder / "rf.skops", data=folder / "table.csv", target="target", warm=False,
                        cache_dir=folder / "cache", state_dir=folder / "state")
    previous = services.state().workspace
    build(settings, folder / "store", max_rows=3, chunk_rows=2, skip=("persuasive", "surrogates", "cohorts"))
    ws = services.workspace()
    model_sha, data_sha = source_hashes(settings, ws)
    st = open_store(folder / "store", model_sha256=model_sha, data_sha256=data_sha, max_bytes=2**30)
    yield st, ws, model, data
    if previous is not None:
        services.init(previous, warm=False)


def _brute_force_shap(f, x: np.ndarray, background: np.ndarray) -> tuple[np.ndarray, float]:
    """Interventional Shapley values of ``f`` at ``x`` over ``background``: every coalition, the exact weights."""
    d = len(x)
    value = {}
    for mask in itertools.product((0, 1), repeat=d):
        rows = np.where(np.array(mask, bool), x, background)
        value[mask] = float(np.mean(f(rows)))
    phi = np.zeros(d)
    for j in range(d):
        for mask, v in value.items():
            if mask[j]:
                continue
            s = sum(mask)
            with_j = tuple(1 if k == j else m for k, m in enumerate(mask))
            phi[j] += math.factorial(s) * math.factorial(d - s - 1) / math.factorial(d) * (value[with_j] - v)
    return phi, value[(0,) * d]


def test_a_stored_shap_row_is_recomputed_from_the_manifests_background_rows_alone(built):
    st, _, model, data = built
    rep = st.reproduction("shap")
    assert rep["output_space"] == "probability" and rep["units"] == "probability of class '1'"
    assert rep["exact"] and rep["n_background"] == 100 and len(rep["background_rows"]) == 100
    X = data[COLUMNS]
    background = X.iloc[np.asarray(rep["background_rows"])].to_numpy(dtype=float)

    def f(rows):
        return model.predict_proba(pd.DataFrame(rows, columns=COLUMNS))[:, 1]

    i = 1
    row = int(st.rows[i])
    phi, base = _brute_force_shap(f, X.iloc[row].to_numpy(dtype=float), background)
    np.testing.assert_allclose(st.array("shap_values")[i], phi, rtol=0, atol=1e-9)
    assert abs(float(st.array("shap_base")[i]) - base) < 1e-9
    e = st.explanation("shap", row)
    assert e.output_space == rep["output_space"] and e.params["units"] == rep["units"]


def test_a_stored_lime_row_is_recomputed_from_the_manifests_training_rows_and_settings(built):
    import explainers as ex

    st, _, model, data = built
    rep = st.reproduction("lime")
    assert rep["output_space"] == "probability" and rep["units"] == "probability of '1'"
    limits = json.loads(json.dumps(st.manifest["explainers"]["lime"]["limits"]))
    X = data[COLUMNS]
    train = X.iloc[np.asarray(rep["training_rows"])]
    lime = ex.LimeExplainer(lambda a: model.predict_proba(pd.DataFrame(a, columns=COLUMNS)), training_data=train,
                            class_names=("0", "1"), num_samples=rep["num_samples"], seed=rep["seed"],
                            max_samples=int(limits["max_samples"]), time_budget_s=float(limits["time_budget_s"]))
    row = int(st.rows[0])
    again = lime.explain(X.iloc[[row]])
    np.testing.assert_allclose(st.array("lime_values")[0], again.values, rtol=0, atol=1e-12)
    assert abs(float(st.array("lime_base")[0]) - again.base_value) < 1e-12


def test_a_store_without_the_reproduce_section_still_opens(built, tmp_path):
    """Stores built before issue 23 (format version 1 without the section) are read as before."""
    import shutil

    from store.hashes import file_sha256
    from store.read import open_store

    st = built[0]
    copy = tmp_path / "old"
    shutil.copytree(st.folder, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest.pop("reproduce")
    for name in ("shap_background_rows.npy", "lime_training_rows.npy"):
        manifest["files"].pop(name)
        (copy / name).unlink()
    (copy / "manifest.json").write_text(json.dumps(manifest))
    old = open_store(copy, model_sha256=manifest["model"]["sha256"], data_sha256=manifest["data"]["sha256"],
                     max_bytes=2**30)
    assert old.reproduction("shap") is None and old.explanation("shap", int(old.rows[0])) is not None
    assert file_sha256(copy / "rows.npy") == file_sha256(st.folder / "rows.npy")
