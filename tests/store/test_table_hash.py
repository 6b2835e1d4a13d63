"""``store.hashes.table_sha256`` hashes a table a few rows at a time (no copy of the whole table in memory),
and its hash is the SHA-256 of the whole table's bytes as before: a store built earlier still matches.

Oracle: hashlib over the column names' JSON, the whole float64 table as one C-ordered buffer, then the target.
"""
import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from store.hashes import HASH_ROWS, table_sha256


@pytest.mark.parametrize("n", [0, 1, HASH_ROWS - 1, HASH_ROWS, 2 * HASH_ROWS + 7])
def test_the_chunked_hash_is_the_hash_of_the_whole_table(n):
    rng = np.random.default_rng(n)
    X = pd.DataFrame(rng.normal(size=(n, 5)), columns=["a", "b", "c", "d", "e"])
    X["d"] = rng.integers(0, 9, n)  # mixed blocks: an int column among floats
    y = rng.integers(0, 2, n)
    whole = hashlib.sha256(json.dumps(["a", "b", "c", "d", "e"]).encode())
    whole.update(np.asarray(X, dtype=float).copy(order="C").tobytes())
    whole.update(np.asarray(y, dtype=float).tobytes())
    assert table_sha256(X, y) == whole.hexdigest()
    if n > 1:  # and it sees the row order
        assert table_sha256(X.iloc[::-1].reset_index(drop=True), y) != whole.hexdigest()
