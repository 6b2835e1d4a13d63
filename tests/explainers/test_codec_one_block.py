"""A table whose columns are all one numpy integer dtype (a one-hot table, e.g. ``pandas.get_dummies(dtype=int)``)
decodes as one block, with the frame the column-by-column decoding gives (issue 23: 108 columns decoded one by one
were a quarter of a model call's time for a row the store lacks).

Oracle: :meth:`TabularCodec._decoded_column` of every column, assembled as ``decode`` assembles it otherwise."""
import numpy as np
import pandas as pd
import pytest

from explainers._codec import TabularCodec
from tests.shared_data import adult_data


@pytest.fixture(scope="module")
def onehot():
    df = adult_data().sample(2000, random_state=0).reset_index(drop=True).drop(columns=["income"])
    cats = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    return pd.get_dummies(df.fillna({c: "Unknown" for c in cats}), columns=cats, dtype=int)


def _by_column(codec: TabularCodec, Z: np.ndarray) -> pd.DataFrame:
    out = pd.DataFrame({j: codec._decoded_column(code, dtype, Z[:, j])
                        for j, (code, dtype) in enumerate(zip(codec.columns, codec._dtypes))}, copy=False)
    out.columns = codec._raw_columns
    return out


@pytest.mark.parametrize("case", ["encoded rows", "perturbed codes", "one row"])
def test_one_integer_dtype_decodes_as_one_block_with_the_same_frame(onehot, case, monkeypatch):
    codec = TabularCodec(onehot)
    Z = codec.encode(onehot).to_numpy(dtype=float)
    if case == "perturbed codes":  # LIME's and SHAP's rows are not always whole numbers
        Z = Z + np.random.default_rng(0).normal(scale=0.4, size=Z.shape)
    elif case == "one row":
        Z = Z[7:8]
    expected = _by_column(codec, Z)
    monkeypatch.setattr(TabularCodec, "_decoded_column", lambda *a: pytest.fail("decoded column by column"))
    got = codec.decode(Z)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got.dtypes.unique().tolist() == [np.dtype(int)] and got._mgr.nblocks == 1


def test_a_missing_value_or_a_second_dtype_is_decoded_column_by_column(onehot):
    codec = TabularCodec(onehot)
    Z = codec.encode(onehot.head(50)).to_numpy(dtype=float, copy=True)
    Z[3, 4] = np.nan  # that column becomes float64 (as decoding always made it), the others stay integers
    got = codec.decode(Z)
    pd.testing.assert_frame_equal(got, _by_column(codec, Z), check_exact=True)
    assert got.dtypes.iloc[4] == np.float64 and got.dtypes.iloc[0] == np.dtype(int)
    mixed = TabularCodec(onehot.astype({onehot.columns[0]: float}))
    assert mixed._block is None


def test_decoding_one_block_holds_the_block_and_nothing_else(onehot):
    """``np.round(Z).astype(dtype)`` held a float64 copy of ``Z`` beside the block: LIME's model calls of a row the store
    lacks on Adult (2 million cells, 16 MB a copy) set the server's peak memory (issue 23). Oracle: tracemalloc."""
    import tracemalloc

    codec = TabularCodec(onehot)
    Z = codec.encode(onehot).to_numpy(dtype=float) + np.random.default_rng(1).normal(scale=0.4, size=(len(onehot), 1))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        got = codec.decode(Z)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    block = got.to_numpy().nbytes
    assert block == Z.nbytes and peak < 1.25 * block, (peak, block)  # 2.0x the block before (a float64 copy beside)
    np.testing.assert_array_equal(got.to_numpy(), np.round(Z).astype(int))
