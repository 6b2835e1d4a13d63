"""The widest value text of each column is found by formatting few values (issue 27): on a 10,000-column table the
Descriptive step formatted 2 million texts. Oracle: every value formatted, the first of the longest kept (the former
loop), on the bundled sample, on real COMPAS columns and on numbers chosen to carry, round and trim.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from app import services
from app.services import row_view, tabular
from explainers._codec import TabularCodec, value_labels
from explainers.numbers import number_text, plain, plain_length_bound
from tests.shared_data import compas_csv

HARD = np.array([9.9996, 999.96, 9999.6, 99999.5, 0.099996, 0.99996, 1000.0, 1e-8, 9e-9, -1e-9, 0.0, -0.0, 1e12,
                 -123456.789, 0.1, 0.30000000000000004, 2.5, -2.5, 1e-5, 123.4, 1234.0, 12345.0, 10.0, 100.0,
                 np.nan, np.inf, -np.inf, 5e-7, -9.99949, 7.00001, 0.5e-3])


def _every_value(col, text) -> str:
    widest = ""
    for v in col:  # the former loop: a longer text replaces the one kept
        t = text(float(v))
        if len(t) > len(widest):
            widest = t
    return widest


def test_the_bound_bounds_every_length_and_is_the_length_of_most():
    rng = np.random.default_rng(0)
    v = np.concatenate([HARD, rng.normal(size=3000) * 10.0 ** rng.integers(-9, 13, 3000),
                        np.round(rng.normal(size=500), 2), rng.integers(-10**6, 10**6, 500).astype(float)])
    for digits in (3, 4, 6):
        bound = plain_length_bound(v, digits)
        lengths = np.array([len(plain(x, digits)) for x in v])
        assert np.all(bound >= lengths)
        finite = np.isfinite(v)
        assert np.mean(bound[finite] == lengths[finite]) > 0.95  # tight: few values are formatted


@pytest.mark.parametrize("column", range(6))
def test_longest_is_the_first_longest_of_every_value(column):
    rng = np.random.default_rng(column)
    col = [HARD, rng.normal(size=200), rng.normal(size=200) * 1e4, np.round(rng.normal(size=200), 1),
           np.full(50, np.nan), rng.choice(HARD, 300)][column]
    text = lambda v: number_text(v, ".4g")  # noqa: E731
    assert row_view._longest(col, text, plain_length_bound(col, 4)) == _every_value(col, text)
    assert row_view._longest(col, text, None) == _every_value(col, text)


def test_compas_columns_with_their_codec():
    path = compas_csv()
    df = pd.read_csv(path)[["age", "priors_count", "days_b_screening_arrest", "c_days_from_compas", "sex", "race",
                            "decile_score", "c_jail_in"]]
    codec = TabularCodec(df)
    Z = codec.encode(df).to_numpy()
    for j, c in enumerate(codec.columns):
        bound = plain_length_bound(Z[:, j], 4) if c.kind == "numeric" and c.display is None else None
        assert row_view._longest(Z[:, j], c.text, bound) == _every_value(Z[:, j], c.text), c.name


def test_the_sample_tables_widest_labels_are_the_former_loops(sample_workspace, monkeypatch):
    from explainers import _column_code

    formatted, real = [], _column_code.number_text
    monkeypatch.setattr(_column_code, "number_text", lambda *a: formatted.append(1) or real(*a))
    with services.overridden(services.ServiceState(sample_workspace)):
        got = row_view._widest()
        n_formatted = len(formatted)
        X = sample_workspace.X.to_numpy(dtype=float)
        codec = tabular.display_codec()
    rows = row_view.shown_rows(len(X), row_view.WIDEST_SAMPLE).rows
    extremes = [int(i) for col in X.T for i in (np.nanargmin(col), np.nanargmax(col))]
    want = [""] * X.shape[1]
    for r in np.unique(np.concatenate([rows, extremes])):
        for j, t in enumerate(value_labels(X[r], codec)):
            if len(t) > len(want[j]):
                want[j] = t
    assert got == tuple(want) and len(got) == 30
    assert n_formatted <= 4 * 30  # a few texts a column; the former loop formatted every measured row's


def test_the_table_is_read_a_column_at_a_time_never_copied_whole(sample_workspace):
    """Each column's smallest and largest value are found a column at a time: a copy of the whole table was 27 MB of
    the warm-up's peak memory on Adult (32,561 x 108, issue 23). Oracle: tracemalloc's peak while measuring a table of
    the sample's rows 40 times (5.5 MB) stays under a quarter of the table (the former copy was all of it)."""
    import dataclasses
    import tracemalloc

    X = sample_workspace.X
    big = dataclasses.replace(sample_workspace, X=pd.concat([X] * 40, ignore_index=True))
    with services.overridden(services.ServiceState(big)):
        row_view._widest()  # imports and caches first, then the measured call
        tracemalloc.start()
        try:
            got = row_view._widest()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        codec = tabular.display_codec()
    Z = big.X.to_numpy(dtype=float)
    rows = row_view.shown_rows(len(Z), row_view.WIDEST_SAMPLE).rows
    extremes = [int(i) for col in Z.T for i in (np.nanargmin(col), np.nanargmax(col))]
    want = [""] * Z.shape[1]
    for r in np.unique(np.concatenate([rows, extremes])):  # the former measure, as in the test above
        for j, t in enumerate(value_labels(Z[r], codec)):
            if len(t) > len(want[j]):
                want[j] = t
    assert got == tuple(want) and len(got) == 30
    assert peak < Z.nbytes / 4
