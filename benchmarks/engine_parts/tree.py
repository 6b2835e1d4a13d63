"""Part 1 of :mod:`benchmarks.engine`: Candor's exact Tree SHAP per model family against brute force, beside shap.

Each family is fitted on a real table cut to at most 8 columns (breast cancer, wine, diabetes from scikit-learn;
Adult from ``shared/data`` for the one-hot Pipeline), so :func:`tests.shapley_oracle.brute_force_shapley` can
enumerate every coalition through the model's own prediction function; the bundled-size case (GradientBoosting on
all 30 breast-cancer columns) uses :func:`tests.shapley_oracle.brute_force_boosted_shapley` instead (tree by tree).

Figures: max |Candor − brute force| over the rows and outputs tried, in the output Candor decomposes (margin for
boosted classifiers, probability for forests, prediction for regressors); shap 0.51's
``TreeExplainer(model, data=bg, feature_perturbation="interventional")`` with ``model_output="raw"`` against the same
oracle and, for classifiers, ``model_output="probability"`` against brute force on ``predict_proba``; and wall µs a
row of ``TreeShap.shap_values`` (100 background rows), one row per call and the whole table in one call.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.ensemble import (ExtraTreesClassifier, GradientBoostingClassifier, GradientBoostingRegressor,
                              HistGradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestClassifier,
                              RandomForestRegressor)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from threadpoolctl import threadpool_limits

from explainers.tree_shap import TreeShap
from tests.shapley_oracle import additive_output, brute_force_boosted_shapley, brute_force_shapley

TIMING_BG = 100
ADULT_KEEP = ["age", "workclass", "education", "marital-status", "occupation", "sex", "hours-per-week",
              "capital-gain"]


def _table(loader, d):
    X, y = loader(return_X_y=True, as_frame=True)
    return X.iloc[:, :d].astype(float), y


def _adult_small(n: int = 3000):
    from benchmarks.build_store import _adult_frame

    df = _adult_frame("adult.data").sample(n, random_state=0).reset_index(drop=True)
    X = df[ADULT_KEEP].copy()
    for c in ("age", "hours-per-week", "capital-gain"):
        X[c] = X[c].astype(float)
    return X, (df["income"] == ">50K").astype(int)


def _onehot_pipeline(n_est):
    X, y = _adult_small()
    cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    pre = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cats)],
                            remainder="passthrough")
    pipe = make_pipeline(pre, GradientBoostingClassifier(n_estimators=n_est, random_state=0)).fit(X, y)
    names = pre.get_feature_names_out()
    groups = np.array([list(X.columns).index(n.split("__", 1)[1].rsplit("_", 1)[0] if n.startswith("cat__")
                                             else n.split("__", 1)[1]) for n in names])
    return pipe, X, groups


def _categorical(n_iter):
    X, y = _table(load_diabetes, 6)
    X = X.copy()
    X["sex"] = pd.Categorical(np.where(X["sex"] > 0, "m", "f"))
    X["bmi_band"] = pd.Categorical(pd.qcut(X["bmi"], 5, labels=list("abcde")).astype(str))
    X = X.drop(columns=["bmi"])
    return HistGradientBoostingRegressor(max_iter=n_iter, max_depth=6, categorical_features="from_dtype",
                                         random_state=0).fit(X, y), X


def families(quick: bool) -> dict:
    """name -> (model, X, pipeline or None, groups or None); sizes cut down in ``quick`` mode."""
    n = 20 if quick else 100
    bc, bc_y = _table(load_breast_cancer, 8)
    wine, wine_y = _table(load_wine, 7)
    dia, dia_y = _table(load_diabetes, 8)
    fam = {
        "gb_binary_margin": (GradientBoostingClassifier(n_estimators=n, random_state=0).fit(bc, bc_y), bc),
        "gb_multiclass_wine": (GradientBoostingClassifier(n_estimators=n, random_state=0).fit(wine, wine_y), wine),
    }
    for d in (3, 5, 8, 12):
        fam[f"hgb_clf_depth{d}"] = (HistGradientBoostingClassifier(max_iter=n, max_depth=d, max_leaf_nodes=None,
                                                                   random_state=0).fit(bc, bc_y), bc)
        fam[f"hgb_reg_depth{d}"] = (HistGradientBoostingRegressor(max_iter=n, max_depth=d, max_leaf_nodes=None,
                                                                  random_state=0).fit(dia, dia_y), dia)
    nan = bc.mask(np.random.default_rng(1).random(bc.shape) < 0.2)
    fam["hgb_nan"] = (HistGradientBoostingClassifier(max_iter=n, max_depth=6, random_state=0).fit(nan, bc_y), nan)
    fam["hgb_categorical"] = _categorical(n)
    forest = 20 if quick else 200
    fam["rf_clf_200"] = (RandomForestClassifier(n_estimators=forest, random_state=0, n_jobs=1).fit(bc, bc_y), bc)
    fam["extra_trees_clf"] = (ExtraTreesClassifier(n_estimators=forest // 2, random_state=0).fit(bc, bc_y), bc)
    fam["rf_reg_bootstrap"] = (RandomForestRegressor(n_estimators=forest // 2, random_state=0).fit(dia, dia_y), dia)
    fam["gb_reg_subsample0.8"] = (GradientBoostingRegressor(n_estimators=n, subsample=0.8, random_state=0)
                                  .fit(dia, dia_y), dia)
    fam = {k: (m, X, None, None) for k, (m, X) in fam.items()}
    try:
        pipe, X, groups = _onehot_pipeline(n)
        fam["onehot_pipeline_raw_players"] = (pipe[-1], X, pipe, groups)
    except FileNotFoundError as err:  # shared/data absent: said in the table
        print(f"onehot_pipeline_raw_players skipped: {err}")
    return fam


def _shap_values(model, bg, x, output) -> np.ndarray:
    """shap 0.51's interventional values as (rows, players, outputs)."""
    import shap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = shap.TreeExplainer(model, data=bg, feature_perturbation="interventional", model_output=output)
        v = np.asarray(ex.shap_values(x, check_additivity=False), float)
    return v[..., None] if v.ndim == 2 else v


def _err(theirs: np.ndarray, oracle: np.ndarray) -> float:
    """max |theirs − oracle|; a two-output answer against a one-output oracle is compared on its class 1."""
    if theirs.shape[-1] != oracle.shape[-1] and theirs.shape[-1] == 2 and oracle.shape[-1] == 1:
        theirs = theirs[..., 1:]
    return float(np.abs(theirs - oracle).max())


def _shap_err(model, bg, x, output, oracle, notes: list) -> float | str:
    try:
        return _err(_shap_values(model, bg, x, output), oracle)
    except Exception as exc:  # shap refuses some families: the table says so, the note why
        notes.append(f"shap {output}: {type(exc).__name__}: {str(exc).splitlines()[0][:90]}")
        return f"error: {type(exc).__name__}"


def accuracy(name, model, X, pipe, groups, n_bg: int, rows: list[int]) -> dict:
    """Max |error| of Candor and shap against brute force over every coalition of X's columns."""
    rng = np.random.default_rng(0)
    bg = X.iloc[rng.choice(len(X), n_bg, replace=False)]
    to_in = (lambda Z: pipe[:-1].transform(Z)) if pipe is not None else (lambda Z: Z)
    f = additive_output(pipe if pipe is not None else model)
    ts = TreeShap(model, to_in(bg), groups=groups)
    V = ts.shap_values(to_in(X.iloc[rows]))
    oracle = np.stack([np.stack([brute_force_shapley(lambda Z, k=k: f(Z)[:, k], X.iloc[[r]], bg)
                                 for k in range(V.shape[2])], axis=-1) for r in rows])
    notes: list[str] = []
    out = {"family": name, "players": ts.n_players, "outputs": V.shape[2], "candor": float(np.abs(V - oracle).max())}
    if pipe is not None:  # shap has no raw-column players: its one-hot children's values, summed per raw column
        try:
            per_child = _shap_values(model, to_in(bg), to_in(X.iloc[rows]), "raw")
            summed = np.stack([np.stack([np.bincount(groups, weights=per_child[i, :, k], minlength=X.shape[1])
                                         for k in range(per_child.shape[2])], -1) for i in range(len(rows))])
            out["shap_raw"] = _err(summed, oracle)
        except Exception as exc:
            out["shap_raw"] = f"error: {type(exc).__name__}"
        notes.append("shap raw: its one-hot children's values summed per raw column (it has no raw-column players)")
    else:
        out["shap_raw"] = _shap_err(model, bg, X.iloc[rows], "raw", oracle, notes)
    clf = hasattr(model, "predict_proba")
    if clf and hasattr(model, "decision_function") and pipe is None:  # boosted: the probability is another game
        P = np.stack([np.stack([brute_force_shapley(lambda Z, k=k: model.predict_proba(Z)[:, k], X.iloc[[r]], bg)
                                for k in range(len(model.classes_))], -1) for r in rows])
        P = P[..., 1:] if P.shape[-1] == 2 else P
        out["shap_probability"] = _shap_err(model, bg, X.iloc[rows], "probability", P, notes)
    elif clf and pipe is None:
        out["shap_probability"] = _shap_err(model, bg, X.iloc[rows], "probability", oracle, notes)
    if notes:
        out["note"] = "; ".join(notes)
    return out


def _us(fn, n: int) -> float:
    t0 = time.perf_counter()
    fn()
    return 1e6 * (time.perf_counter() - t0) / n


def timing(model, X, pipe, groups, one_rows: int) -> dict:
    """Wall µs a row of TreeShap.shap_values over 100 background rows: one row per call (median), whole table."""
    to_in = (lambda Z: pipe[:-1].transform(Z)) if pipe is not None else (lambda Z: Z)
    bg = X.sample(n=min(TIMING_BG, len(X)), random_state=0)
    t0 = time.perf_counter()
    ts = TreeShap(model, to_in(bg), groups=groups)
    build_ms = 1e3 * (time.perf_counter() - t0)
    Z = to_in(X)
    take = (lambda i: Z.iloc[[i]]) if hasattr(Z, "iloc") else (lambda i: Z[[i]])
    ts.shap_values(take(0))  # warm
    one = float(np.median([_us(lambda i=i: ts.shap_values(take(i)), 1) for i in range(one_rows)]))
    table = _us(lambda: ts.shap_values(Z), len(X))
    return {"build_ms": build_ms, "one_row_us": one, "table_us_per_row": table, "table_rows": len(X)}


def bundled_size(quick: bool) -> tuple[dict, dict]:
    """GradientBoosting on all 30 breast-cancer columns: error against brute force tree by tree (shap raw beside
    it) and µs a row on the whole 569-row table with 100 background rows (shap's interventional time beside it)."""
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = GradientBoostingClassifier(n_estimators=20 if quick else 100, random_state=0).fit(X, y)
    bg = X.sample(n=TIMING_BG, random_state=3)
    rows = list(range(0, len(X), 571 if quick else 95))[: 1 if quick else 6]
    ts = TreeShap(model, bg)
    V = ts.shap_values(X.iloc[rows])
    oracle = np.stack([brute_force_boosted_shapley(model, X.iloc[r].to_numpy(), bg.to_numpy())
                       for r in rows])[..., None]
    notes = [f"brute force tree by tree (brute_force_boosted_shapley), {len(rows)} rows, 100 background rows"]
    acc = {"family": "gb_breast_cancer_30_columns", "players": 30, "outputs": 1,
           "candor": float(np.abs(V - oracle).max()),
           "shap_raw": _shap_err(model, bg, X.iloc[rows], "raw", oracle, notes)}
    tim = timing(model, X, None, None, 5 if quick else 50)
    t0 = time.perf_counter()
    _shap_values(model, bg, X, "raw")
    tim["shap_table_us_per_row"] = 1e6 * (time.perf_counter() - t0) / len(X)
    acc["note"] = "; ".join(notes + [f"shap interventional raw on the whole table: {tim['shap_table_us_per_row']:,.0f} "
                                     "µs/row (Candor's: the table column)"])
    return acc, tim


def run(quick: bool = False) -> tuple[list[dict], dict, dict]:
    """Accuracy rows, per-family timings and the headline figures."""
    n_bg, rows = (10, [7]) if quick else (50, [7, 42, 101])
    accs, times = [], {}
    for name, (model, X, pipe, groups) in families(quick).items():
        t0 = time.perf_counter()
        with threadpool_limits(1):  # the oracle's thousands of small predict calls: OpenMP spin-up dominates
            a = accuracy(name, model, X, pipe, groups, n_bg, [r % len(X) for r in rows])
        times[name] = timing(model, X, pipe, groups, 3 if quick else 20)
        a["seconds"] = time.perf_counter() - t0
        accs.append(a)
        print(f"  {name}: candor {a['candor']:.1e} ({a['seconds']:.0f} s)", flush=True)
    acc, tim = bundled_size(quick)
    accs.append(acc)
    times[acc["family"]] = tim
    headline = {"tree_max_abs_error": {a["family"]: a["candor"] for a in accs},
                "shap_max_abs_error": {a["family"]: {k: a[k] for k in ("shap_raw", "shap_probability") if k in a}
                                       for a in accs},
                "tree_us_per_row": {k: {"one_row": round(v["one_row_us"], 1),
                                        "table": round(v["table_us_per_row"], 1)} for k, v in times.items()}}
    return accs, times, headline
