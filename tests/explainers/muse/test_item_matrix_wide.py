"""MUSE's item matrix compares every threshold item on a column of numbers at once (issue 27): a 10,000-column table
has 60,000 threshold items, and one Series, ``to_numeric`` and column lookup per item took seconds of each fit. The
matrix is the per-item one (``conjunction_mask`` of each item's predicates), checked on real data with integers,
floats with missing values, strings and tree-path items of two predicates.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explainers.muse import _items
from explainers.rules import conjunction_mask
from explainers.types import Predicate
from tests.shared_data import compas_csv


@pytest.fixture(scope="module")
def compas():
    path = compas_csv()
    df = pd.read_csv(path)
    cols = ["age", "sex", "race", "juv_fel_count", "priors_count", "c_charge_degree", "days_b_screening_arrest",
            "c_days_from_compas", "decile_score", "is_violent_recid"]
    return df[cols].iloc[:3000].reset_index(drop=True)


def _per_item(items, X):
    return np.column_stack([conjunction_mask(it.predicates, X) for it in items])


@pytest.mark.parametrize("binning", ["threshold", "interval"])
def test_the_matrix_is_the_per_item_one(compas, binning, monkeypatch):
    X = compas
    assert X.days_b_screening_arrest.isna().any() and X.age.dtype.kind == "i"  # floats holding NaN (COMPAS's own), integers
    items = _items.make_items(X, 4, binning)
    paths = [_items.Item("age", (Predicate("age", ">", 25.5), Predicate("age", "<=", 40.0))),
             _items.Item("priors_count", (Predicate("priors_count", ">", 2.5),)),
             _items.Item("c_days_from_compas", (Predicate("c_days_from_compas", "<=", 1.0),))]
    items = items + paths
    want = _per_item(items, X)
    calls = []
    real = _items.conjunction_mask
    monkeypatch.setattr(_items, "conjunction_mask", lambda *a, **k: calls.append(1) or real(*a, **k))
    got = _items.item_matrix(items, X)
    assert got.dtype == bool and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    levels = sum(1 for it in items if it.predicates[0].op == "==")
    assert levels > 0 and len(calls) == levels  # only the string levels go one by one (old: every item)
    assert not want[X.days_b_screening_arrest.isna().to_numpy()][:, [k for k, it in enumerate(items) if
                                                                     it.feature == "days_b_screening_arrest"]].any()


def test_a_wide_table_of_floats_in_one_block():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 2_000)), columns=[f"f{j}" for j in range(2_000)])
    X.iloc[3, 5] = np.nan
    items = _items.make_items(X)
    assert len(items) == 6 * 2_000
    np.testing.assert_array_equal(_items.item_matrix(items, X), _per_item(items, X))


def _items_column_by_column(X, n_bins, binning, monkeypatch):
    """make_items with every column taken alone (its path for a column holding NaN or no numpy numbers)."""
    monkeypatch.setattr(_items, "_whole_float_columns", lambda X: ())
    try:
        return _items.make_items(X, n_bins, binning)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("binning", ["threshold", "interval"])
@pytest.mark.parametrize("n_bins", [2, 4, 7])
def test_items_of_whole_number_columns_at_once_are_the_column_by_column_ones(compas, binning, n_bins, monkeypatch):
    rng = np.random.default_rng(n_bins)
    X = compas.assign(noise=rng.normal(size=len(compas)), heavy=np.where(rng.random(len(compas)) < 0.9, 0.0, 5.0),
                      flag=rng.random(len(compas)) > 0.5)  # a float column, one with a heavy value, a bool
    whole = [X.columns[j] for j in _items._whole_float_columns(X)]  # the integers and floats without NaN
    assert {"age", "priors_count", "noise", "heavy"} <= set(whole)
    assert not {"days_b_screening_arrest", "sex", "flag"} & set(whole)
    want = _items_column_by_column(X, n_bins, binning, monkeypatch)
    got = _items.make_items(X, n_bins, binning)
    assert got == want and len(got) > 20
