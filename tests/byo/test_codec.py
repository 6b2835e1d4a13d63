"""The raw-space encoding: every dtype round-trips exactly, missing values are an explicit level, notes say what changed."""
import numpy as np
import pandas as pd
import pytest

from explainers._codec import TabularCodec
from explainers._column_code import MISSING


def test_every_dtype_round_trips_exactly():
    frame = pd.DataFrame({
        "a[a1]:x2": [1, 2, 3], "age<30": pd.array([1, None, 3], dtype="Int64"), "s": ["x", None, ""],
        "c": pd.Categorical(["p", "q", None]), "when": pd.to_datetime(["2020-01-01", None, "2021-01-01"]),
        "f": [1.5, np.nan, 2.0], "b": [True, False, True]})
    codec = TabularCodec(frame)
    Z = codec.encode(frame)
    assert [c.kind for c in codec.columns] == ["numeric", "numeric", "category", "category", "datetime", "numeric",
                                               "numeric"]
    assert Z["when"].tolist()[0] == 18262.0 and np.isnan(Z["age<30"][1])
    pd.testing.assert_frame_equal(codec.decode(Z), frame)
    assert codec.labels(Z.iloc[1]) == ("2", MISSING, MISSING, "q", MISSING, MISSING, "0")
    assert codec.labels(Z.iloc[2])[2] == "(empty string)"
    assert codec.notes() == ("when: encoded as days since 1970-01-01",)


def test_perturbed_codes_are_rounded_and_clipped_to_a_level():
    frame = pd.DataFrame({"s": ["a", "b", "c"]})
    codec = TabularCodec(frame)
    assert codec.decode(np.array([[0.4], [1.6], [7.0], [-2.0]]))["s"].tolist() == ["a", "c", "c", "a"]


def test_unexplainable_dtype_is_named():
    with pytest.raises(TypeError, match=r"column 'span' has dtype timedelta64\[\w+\]"):
        TabularCodec(pd.DataFrame({"span": pd.to_timedelta([1, 2], unit="D")}))
    with pytest.raises(TypeError, match="column 'obj' .* holds list values"):
        TabularCodec(pd.DataFrame({"obj": pd.Series([[1], [2]], dtype=object)}))
