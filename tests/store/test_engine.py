"""store.engine.run_chunks: chunked, resumable, and identical in this process and on Dask."""
import numpy as np
import pytest

from store.engine import chunk_bounds, chunk_path, run_chunks
from workspace.errors import CandorError


def seeded(start, stop):
    """A deterministic chunk: random numbers seeded by each row, plus the row ids."""
    rows = np.arange(start, stop)
    values = np.stack([np.random.default_rng(r).normal(size=3) for r in rows])
    return {"rows": rows, "values": values}


def expected(n):
    return np.stack([np.random.default_rng(r).normal(size=3) for r in range(n)])


class Counting:
    """``seeded`` that records its calls and raises on call number ``fail_on`` (1-based)."""

    def __init__(self, fail_on=None):
        self.calls, self.fail_on = [], fail_on

    def __call__(self, start, stop):
        self.calls.append((start, stop))
        if len(self.calls) == self.fail_on:
            raise RuntimeError("killed")
        return seeded(start, stop)


def test_chunks_cover_the_rows_in_order_and_concatenate(tmp_path):
    seen = []
    out = run_chunks(seeded, 23, chunk_rows=5, out_dir=tmp_path, progress=lambda d, t: seen.append((d, t)))
    assert chunk_bounds(23, 5) == [(0, 5), (5, 10), (10, 15), (15, 20), (20, 23)]
    np.testing.assert_array_equal(out["rows"], np.arange(23))
    np.testing.assert_array_equal(out["values"], expected(23))
    assert seen == [(0, 23), (5, 23), (10, 23), (15, 23), (20, 23), (23, 23)]
    names = sorted(p.name for p in (tmp_path / "chunks").iterdir())
    assert names == ["000000000-000000005.npz", "000000005-000000010.npz", "000000010-000000015.npz",
                     "000000015-000000020.npz", "000000020-000000023.npz"]
    with np.load(chunk_path(tmp_path, 20, 23), allow_pickle=False) as z:
        np.testing.assert_array_equal(z["values"], expected(23)[20:])


def test_a_run_killed_after_k_chunks_resumes_with_only_the_missing_ones(tmp_path):
    first = Counting(fail_on=3)
    with pytest.raises(RuntimeError, match="killed"):
        run_chunks(first, 23, chunk_rows=5, out_dir=tmp_path)
    assert first.calls == [(0, 5), (5, 10), (10, 15)]
    assert len(list((tmp_path / "chunks").iterdir())) == 2      # no partial or temporary file left
    second = Counting()
    seen = []
    out = run_chunks(second, 23, chunk_rows=5, out_dir=tmp_path, progress=lambda d, t: seen.append(d))
    assert second.calls == [(10, 15), (15, 20), (20, 23)]
    assert seen == [10, 15, 20, 23]
    np.testing.assert_array_equal(out["values"], expected(23))
    third = Counting()
    np.testing.assert_array_equal(run_chunks(third, 23, chunk_rows=5, out_dir=tmp_path)["rows"], np.arange(23))
    assert third.calls == []


@pytest.mark.parametrize("bad, message", [
    (lambda s, e: {"x": np.zeros(e - s + 1)}, "expected 5 rows"),
    (lambda s, e: {"x": np.array([object()] * (e - s))}, "Python objects"),
    (lambda s, e: [np.zeros(e - s)], "not a non-empty dict"),
])
def test_a_malformed_chunk_is_refused_in_one_line_and_not_written(tmp_path, bad, message):
    with pytest.raises(CandorError, match=message):
        run_chunks(bad, 10, chunk_rows=5, out_dir=tmp_path)
    assert list((tmp_path / "chunks").iterdir()) == []
