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


def test_the_result_is_read_into_one_array_not_all_chunks_then_their_concatenation(tmp_path):
    """Peak traced memory while reading 20 chunks back is the result plus about one chunk (was twice the result)."""
    import tracemalloc

    def wide(start, stop):
        return {"values": np.arange(start * 50, stop * 50, dtype=np.float64).reshape(stop - start, 50)}

    run_chunks(wide, 20_000, chunk_rows=1_000, out_dir=tmp_path)       # every chunk on disk: the rerun only reads
    result_bytes = 20_000 * 50 * 8
    tracemalloc.start()
    try:
        out = run_chunks(wide, 20_000, chunk_rows=1_000, out_dir=tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(out["values"], np.arange(20_000 * 50, dtype=np.float64).reshape(20_000, 50))
    assert result_bytes <= peak < 1.3 * result_bytes                     # one chunk is 0.05 of the result


def test_chunks_of_different_widths_and_kinds_stack_as_numpy_concatenate_does(tmp_path):
    def mixed(start, stop):
        rows = np.arange(start, stop)
        label = np.array(["x" * (1 + start // 4)] * (stop - start))      # wider text in later chunks
        number = rows.astype(np.float64 if start >= 8 else np.int64)    # ints first, floats after
        return {"label": label, "number": number}

    out = run_chunks(mixed, 14, chunk_rows=4, out_dir=tmp_path)
    parts = [mixed(s, e) for s, e in chunk_bounds(14, 4)]
    for name in ("label", "number"):
        expected_array = np.concatenate([p[name] for p in parts])
        assert out[name].dtype == expected_array.dtype and np.array_equal(out[name], expected_array)
    assert out["label"].dtype == np.dtype("<U4") and out["number"].dtype == np.float64


def test_chunks_of_another_task_on_disk_are_refused_in_one_line(tmp_path):
    run_chunks(lambda s, e: {"v": np.zeros((e - s, 3))}, 10, chunk_rows=5, out_dir=tmp_path)
    chunk_path(tmp_path, 5, 10).unlink()
    with pytest.raises(CandorError, match="do not stack"):
        run_chunks(lambda s, e: {"v": np.zeros((e - s, 4))}, 10, chunk_rows=5, out_dir=tmp_path)
    chunk_path(tmp_path, 5, 10).unlink()
    with pytest.raises(CandorError, match="different tasks"):
        run_chunks(lambda s, e: {"w": np.zeros(e - s)}, 10, chunk_rows=5, out_dir=tmp_path)
    chunk_path(tmp_path, 5, 10).write_bytes(b"not a zip")
    with pytest.raises(CandorError, match="cannot be read"):
        run_chunks(lambda s, e: {"v": np.zeros((e - s, 3))}, 10, chunk_rows=5, out_dir=tmp_path)


# -- on Dask: a LocalCluster of worker processes gives exactly the single-process result ------------

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster_client():
    """A LocalCluster of two single-threaded worker processes (tasks are pickled to them)."""
    with distributed.Client(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as client:
        yield client


@pytest.fixture(scope="module")
def thread_client():
    """A LocalCluster of two worker threads in this process (shap is already imported here)."""
    with distributed.Client(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as client:
        yield client


class TreeShapRows:
    """Tree SHAP values (shap's TreeExplainer, log-odds) of rows of breast cancer, one chunk at a time."""

    def __init__(self, model, X):
        self.model, self.X = model, X

    def __call__(self, start, stop):
        import shap

        values = shap.TreeExplainer(self.model).shap_values(self.X[start:stop])
        return {"shap": np.asarray(values, dtype=np.float64)}


def test_dask_gives_the_single_process_result(tmp_path, cluster_client):
    here = run_chunks(seeded, 47, chunk_rows=6, out_dir=tmp_path / "here")
    seen = []
    there = run_chunks(seeded, 47, chunk_rows=6, out_dir=tmp_path / "dask", client=cluster_client,
                       progress=lambda d, t: seen.append(d))
    for name in ("rows", "values"):
        assert np.array_equal(there[name], here[name])
    np.testing.assert_array_equal(there["values"], expected(47))
    assert seen[0] == 0 and seen[-1] == 47 and len(seen) == 9 and seen == sorted(seen)


def test_dask_tree_shap_of_breast_cancer_equals_the_single_process_run(tmp_path, thread_client, bc, gb_model):
    import shap

    X = bc[0].to_numpy()[:120]
    task = TreeShapRows(gb_model, X)
    here = run_chunks(task, len(X), chunk_rows=25, out_dir=tmp_path / "here")
    there = run_chunks(task, len(X), chunk_rows=25, out_dir=tmp_path / "dask", client=thread_client)
    assert np.array_equal(there["shap"], here["shap"])
    explainer = shap.TreeExplainer(gb_model)
    direct = explainer.shap_values(X)                      # one call over all rows, no chunks
    np.testing.assert_allclose(here["shap"], direct, rtol=0, atol=1e-12)
    margin = gb_model.decision_function(X)                 # additivity: base + sum = the model's log-odds
    np.testing.assert_allclose(explainer.expected_value + here["shap"].sum(axis=1), margin, atol=1e-8)


def test_a_dask_run_interrupted_by_a_failing_chunk_resumes_with_only_the_missing_ones(tmp_path, cluster_client):
    def failing(start, stop):
        if start == 18:
            raise RuntimeError("killed")
        return seeded(start, stop)

    with pytest.raises(RuntimeError, match="killed"):
        run_chunks(failing, 30, chunk_rows=6, out_dir=tmp_path, client=cluster_client)
    left = {(s, e) for s, e in chunk_bounds(30, 6) if not chunk_path(tmp_path, s, e).exists()}
    assert (18, 24) in left
    again = Counting()
    out = run_chunks(again, 30, chunk_rows=6, out_dir=tmp_path)
    assert set(again.calls) == left and len(again.calls) == len(left)
    np.testing.assert_array_equal(out["values"], expected(30))


class SlowOnce:
    """``seeded``, but the chunk at ``start == slow`` first writes its worker's pid and waits to be killed."""

    def __init__(self, slow, pid_file, killed_file):
        self.slow, self.pid_file, self.killed_file = slow, pid_file, killed_file

    def __call__(self, start, stop):
        import os
        import time

        if start == self.slow and not self.killed_file.exists():
            part = self.pid_file.with_suffix(".part")  # renamed whole: the killer never reads a half-written file
            part.write_text(str(os.getpid()))
            part.replace(self.pid_file)
            time.sleep(60)                                 # killed long before this ends
        return seeded(start, stop)


def test_a_worker_killed_mid_run_still_gives_the_single_process_result(tmp_path, cluster_client):
    import os
    import signal
    import threading
    import time

    import psutil

    pid_file, killed_file = tmp_path / "pid", tmp_path / "killed"
    task = SlowOnce(12, pid_file, killed_file)
    client = cluster_client  # its nanny starts a new worker for the one killed here
    worker_pids = set(client.run(os.getpid).values())
    killed = {}

    def kill_when_started():  # the client is used from the thread that made it only: Dask's client is not
        deadline = time.monotonic() + 60  # thread-safe across event loops ("Event bound to a different loop")
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        killed["pid"] = int(pid_file.read_text())
        killed_file.write_text("1")
        os.kill(killed["pid"], signal.SIGKILL)

    killer = threading.Thread(target=kill_when_started)
    killer.start()
    result = run_chunks(task, 30, chunk_rows=6, out_dir=tmp_path / "run", client=client)
    killer.join(10)
    pid = killed["pid"]
    assert pid in worker_pids and pid != os.getpid()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    np.testing.assert_array_equal(result["values"], expected(30))
    np.testing.assert_array_equal(result["rows"], np.arange(30))
