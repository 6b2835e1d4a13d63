"""SHAP's background and LIME's training statistics taken from rows of a table by position (``background_rows``,
``training_rows``) equal the same explainers given those rows copied out (``table.iloc[rows]``): the same sampled
rows, index labels, parameters, wording and values, bit for bit (issue 23: the copy was a 21 MB peak at start on
Adult's 24,420 training rows)."""
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier

import explainers as ex
from explainers.model_adapter import ModelAdapter


@pytest.fixture(scope="module")
def table():
    d = load_breast_cancer(as_frame=True)
    X = d.data.set_axis(np.arange(1000, 1000 + len(d.data)))  # labels that are not positions
    rows = np.random.default_rng(3).permutation(len(X))[:400]  # training rows, in no order
    model = GradientBoostingClassifier(n_estimators=30, max_depth=2, random_state=0).fit(X.iloc[rows], d.target.iloc[rows])
    adapter = ModelAdapter.for_table(model, X)
    return adapter.codec.encode(X), rows, adapter


@pytest.mark.parametrize("size", [100, 400, 500])  # sampled from the rows, all of them, more than there are
def test_shap_background_from_positions_is_the_copied_rows_background(table, size):
    Z, rows, adapter = table
    kw = dict(target_index=1, background_size=size, seed=7)
    copied = ex.ShapExplainer(adapter, background=Z.iloc[rows], **kw)
    by_position = ex.ShapExplainer(adapter, background=Z, background_rows=rows, **kw)
    documented = Z.iloc[rows].sample(n=size, random_state=7) if size < len(rows) else Z.iloc[rows]  # pandas' draw
    pd.testing.assert_frame_equal(by_position.background, documented)  # values and index labels, in order
    pd.testing.assert_frame_equal(copied.background, documented)
    assert by_position.params == copied.params and by_position.source == copied.source
    assert by_position.params["background_rows_given"] == 400
    x = Z.iloc[[int(np.setdiff1d(np.arange(len(Z)), rows)[0])]]
    a, b = by_position.explain(x), copied.explain(x)
    assert np.array_equal(a.values, b.values) and a.base_value == b.base_value


@pytest.mark.parametrize("cap", [5000, 150])  # every training row, and a seeded sample of them
def test_lime_statistics_from_positions_are_the_copied_rows_statistics(table, cap):
    Z, rows, adapter = table
    predict = lambda a: adapter.outputs(a)  # noqa: E731
    kw = dict(class_names=adapter.output_names, num_samples=500, seed=2, max_training_rows=cap)
    copied = ex.LimeExplainer(predict, training_data=Z.iloc[rows], **kw)
    by_position = ex.LimeExplainer(predict, training_data=Z, training_rows=rows, **kw)
    assert np.array_equal(by_position._train, copied._train) and by_position.source == copied.source
    drawn = rows if cap >= len(rows) else rows[np.sort(np.random.default_rng(2).choice(len(rows), cap, replace=False))]
    oracle = ex.LimeExplainer(predict, training_data=Z.iloc[drawn], **{**kw, "max_training_rows": len(rows)})
    assert np.array_equal(by_position._train, oracle._train)  # the documented sample, drawn here
    x = Z.iloc[int(np.setdiff1d(np.arange(len(Z)), rows)[0])].to_numpy()
    a, b, c = (e.explain(x, num_samples=500) for e in (by_position, copied, oracle))
    assert np.array_equal(a.values, b.values) and a.params["standard_error"] == b.params["standard_error"]
    assert np.array_equal(a.values, c.values)
