"""The cohort filter language writes and reads back every filter exactly, whatever the names of its columns and
levels: an independent oracle is the filter itself (the rows it selects, counted by pandas)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from explainers._codec import TabularCodec
from explainers.cohort_filters import cohort_mask, filters_text, parse_filters

NAMES = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from(
    list(';,"\\ =<>')), min_size=1, max_size=12)


def test_levels_and_columns_with_commas_semicolons_quotes_and_spaces_read_back():
    """A level "Married, spouse absent" was read as two levels and a column "a;b" as two conditions."""
    raw = pd.DataFrame({"marital status; as asked": ["Married, spouse absent", "Divorced", ' "quoted" ', "a\\b"],
                        "age": [30, 40, 50, 60]})
    codec = TabularCodec(raw)
    X = codec.encode(raw)
    col = "marital status; as asked"
    want = raw[col].isin(["Married, spouse absent", ' "quoted" ']) & (raw["age"] > 20)
    f = parse_filters(f'"{col}" in "Married, spouse absent", " \\"quoted\\" "; age > 20', X.columns, codec)
    assert cohort_mask(X, f).tolist() == want.tolist()
    text = filters_text(f, codec)
    assert text == '"marital status; as asked" in "Married, spouse absent", " \\"quoted\\" "; age > 20'
    assert parse_filters(text, X.columns, codec) == f
    assert cohort_mask(X, parse_filters(filters_text(parse_filters(f'"{col}" == "a\\\\b"', X.columns, codec), codec),
                                        X.columns, codec)).tolist() == [False, False, False, True]
    for bad in (f'"{col}" == "Divorced', f'"{col} == Divorced', f'"{col}" == "a"b"'):
        with pytest.raises(ValueError, match="cannot read"):
            parse_filters(bad, X.columns, codec)


@settings(max_examples=60, deadline=None)
@given(levels=st.lists(NAMES, min_size=2, max_size=5, unique=True), columns=st.lists(NAMES, min_size=2, max_size=2,
                                                                                    unique=True), data=st.data())
def test_any_names_round_trip(levels, columns, data):
    """Random level and column names (any printable text, commas, semicolons, quotes, backslashes, operators and
    spaces included): the text written for a filter reads back to the same filter, selecting the rows pandas does."""
    cat, num = columns
    rows = data.draw(st.lists(st.sampled_from(levels), min_size=len(levels), max_size=8))
    raw = pd.DataFrame({cat: rows + levels, num: np.arange(len(rows) + len(levels), dtype=float)})
    codec = TabularCodec(raw)
    X = codec.encode(raw)
    chosen = data.draw(st.lists(st.sampled_from(levels), min_size=1, max_size=3, unique=True))
    cut = data.draw(st.integers(0, len(raw)))
    col = codec.column(cat)
    codes = tuple(float(list(map(str, col.levels)).index(v)) for v in chosen)
    from explainers.cohort_filters import Filter

    filters = (Filter(cat, "in", codes), Filter(num, ">=", float(cut)))
    text = filters_text(filters, codec)
    assert parse_filters(text, X.columns, codec) == filters
    want = raw[cat].isin(chosen) & (raw[num] >= cut)
    assert cohort_mask(X, parse_filters(text, X.columns, codec)).tolist() == want.tolist()
