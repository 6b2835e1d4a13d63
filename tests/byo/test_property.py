"""Property: random small tables (dtypes, NaN, pd.NA, odd names) through the loader and both explainers.

Every outcome is a result or a CandorError naming the problem; never another exception.
"""
import string

import numpy as np
import pandas as pd
import skops.io as sio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.dummy import DummyClassifier, DummyRegressor

from workspace.errors import CandorError
from workspace.workspace import load_pair
from explainers import LimeExplainer, ShapExplainer

NAMES = st.text(alphabet=string.ascii_letters + "[]<>:. _-éü∑0", min_size=1, max_size=8)
KINDS = ("float", "int", "Int64", "str", "category", "bool", "datetime", "empty")


@st.composite
def tables(draw):
    n = draw(st.integers(4, 12))
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique_by=str.strip).filter(
        lambda ns: "target" not in ns and all(n.strip() == n for n in ns)))
    data = {}
    for name in names:
        kind = draw(st.sampled_from(KINDS))
        nan = draw(st.booleans())
        vals = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
        if kind == "float":
            col = pd.Series(np.array(vals, dtype=float))
        elif kind == "int":
            col = pd.Series(np.array(vals, dtype=np.int64))
            nan = False
        elif kind == "Int64":
            col = pd.Series(pd.array(vals, dtype="Int64"))
        elif kind in ("str", "category"):
            col = pd.Series([["", "a", "b b", "=1", "é"][abs(v) % 5] for v in vals])
            col = col.astype("category") if kind == "category" else col
        elif kind == "bool":
            col = pd.Series([v > 0 for v in vals])
            nan = False
        elif kind == "datetime":
            col = pd.Series(pd.to_datetime("2020-01-01") + pd.to_timedelta(vals, unit="D"))
        else:
            col = pd.Series([np.nan] * n)
        if nan:
            col = col.copy()
            col.iloc[0] = None
        data[name] = col
    frame = pd.DataFrame(data)
    regression = draw(st.booleans())
    labels = draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=n, max_size=n))
    frame["target"] = np.arange(n, dtype=float) if regression else labels
    return frame, regression, draw(st.sampled_from(["csv", "parquet"]))


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=tables())
def test_random_tables_give_a_result_or_a_candor_error(tmp_path, case):
    frame, regression, fmt = case
    features = frame.drop(columns="target")
    model = (DummyRegressor() if regression else DummyClassifier(strategy="prior")).fit(features, frame["target"])
    sio.dump(model, tmp_path / "m.skops")
    data = tmp_path / f"d.{fmt}"
    frame.to_parquet(data) if fmt == "parquet" else frame.to_csv(data, index=False)
    try:
        ws = load_pair(tmp_path / "m.skops", data, "target")
    except CandorError as err:
        assert str(err) and "\n" not in str(err)
        return
    a, X = ws.adapter, ws.X
    assert list(X.columns) == [str(c) for c in features.columns]
    k = a.default_output()
    e = ShapExplainer(a, background=X, target_index=k, target_name=a.output_names[k], background_size=10)
    expl = e.explain(X.iloc[[0]])
    assert expl.additivity_gap < 1e-9 and np.allclose(expl.values, 0)  # a constant model: nothing to attribute
    mode = "classification" if a.kind == "probability" else "regression"
    lime = LimeExplainer(a.outputs, training_data=X, class_names=a.output_names, target_index=k, num_samples=50,
                         mode=mode, missing_columns=tuple(np.flatnonzero(X.isna().to_numpy().any(axis=0))))
    le = lime.explain(X.iloc[[0]])
    assert le.values.shape == (X.shape[1],) and np.isfinite(le.prediction)
