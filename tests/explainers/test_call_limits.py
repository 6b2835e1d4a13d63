"""The model-call deadline is carried by each adapter, not set for the whole process (issue 24).

FAILED before: ``explainers.model_adapter`` held one process-wide deadline (``set_model_timeout``), so two adapters
in one process could not have different deadlines, and a library user's adapter inherited the server's.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from explainers import model_adapter as ma
from explainers.model_adapter import CallLimits, ModelAdapter, ModelFailed, ModelTimeout


class Slow:
    """A classifier that takes 20 ms per call (per batch of rows)."""

    classes_ = np.array([0, 1])

    def predict_proba(self, X):
        time.sleep(0.02)
        return np.tile([0.25, 0.75], (len(X), 1))

    def predict(self, X):
        time.sleep(0.02)
        return np.ones(len(X), dtype=int)


class Broken(Slow):
    def predict_proba(self, X):
        raise ValueError("no licence\nsecond line")


class OwnTimeout(ModelTimeout):
    """An application's own deadline error."""


class OwnFailure(ModelFailed):
    """An application's own failure error."""


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(ma, "BATCH_CELLS", 20)  # 10 rows of 2 columns per call: 40 calls for 400 rows


X = pd.DataFrame({"a": np.arange(400.0), "b": np.arange(400.0)})


def test_two_adapters_in_one_process_keep_their_own_deadlines(small_batches):
    hurried = ModelAdapter.for_table(Slow(), X, limits=CallLimits(seconds=0.05, timeout=OwnTimeout))
    patient = ModelAdapter.for_table(Slow(), X)  # no deadline
    with pytest.raises(OwnTimeout, match=r"the model took longer than 0.05 s on \d+ of 400 rows"):
        hurried.outputs(X)
    out = patient.outputs(X)  # all 40 batches, after the other adapter's deadline passed
    assert out.shape == (400, 2) and np.all(out[:, 1] == 0.75)
    with pytest.raises(OwnTimeout):
        hurried.predict(X)  # predict is under the same limits
    assert patient.limits == CallLimits() and hurried.limits.seconds == 0.05


def test_limited_gives_a_copy_and_leaves_the_adapter_as_it_was(small_batches):
    patient = ModelAdapter.for_table(Slow(), X)
    hurried = patient.limited(CallLimits(seconds=0.05))
    assert hurried is not patient and hurried.model is patient.model and hurried.codec is patient.codec
    with pytest.raises(ModelTimeout):
        hurried.outputs(X)
    assert patient.outputs(X).shape == (400, 2)


def test_a_failing_model_raises_each_adapters_own_error_in_one_line():
    mine = ModelAdapter.for_table(Broken(), X, limits=CallLimits(failed=OwnFailure))
    plain = ModelAdapter.for_table(Broken(), X)
    with pytest.raises(OwnFailure, match=r"^the model failed on 5 rows \(ValueError: no licence\)$") as err:
        mine.outputs(X.iloc[:5])
    assert isinstance(err.value.__cause__, ValueError)
    with pytest.raises(ModelFailed) as err:
        plain.outputs(X.iloc[:5])
    assert not isinstance(err.value, OwnFailure)


def test_nothing_process_wide_is_left_in_the_adapter_module():
    assert not hasattr(ma, "set_model_timeout") and not hasattr(ma, "set_model_failure")
    assert not hasattr(ma, "_deadline")


class OpenMPReader(Slow):
    """Records the OpenMP runtimes' thread count (``omp_get_max_threads``, threadpoolctl) in the thread that calls it."""

    seen: list = []

    def predict_proba(self, X):
        from threadpoolctl import threadpool_info

        counts = {i["num_threads"] for i in threadpool_info() if i["user_api"] == "openmp"}
        assert len(counts) == 1  # at least scikit-learn's runtime
        OpenMPReader.seen.append(counts.pop())
        return np.tile([0.25, 0.75], (len(X), 1))


def _in_a_thread_with_three_openmp_threads(fn):
    """``fn()`` in a new thread whose OpenMP runtimes were set to 3 threads first (a request thread's own setting)."""
    import threading

    from threadpoolctl import threadpool_limits

    def run():
        threadpool_limits(limits=3, user_api="openmp")
        fn()

    t = threading.Thread(target=run)
    t.start()
    t.join()


def test_openmp_threads_are_limited_in_the_thread_that_calls_the_model():
    """FAILED before (issue 25): the server set one OpenMP thread in its loading thread only; a request thread called
    HistGradientBoosting with its own count (3 here, 2 on the server), spinning against the machine's load."""
    import sklearn.ensemble  # noqa: F401  (scikit-learn's OpenMP runtime loaded, as a served model loads it)

    OpenMPReader.seen = []
    served = ModelAdapter.for_table(OpenMPReader(), X, limits=CallLimits(openmp_threads=1))
    mine = ModelAdapter.for_table(OpenMPReader(), X)  # a library user's adapter: left as the thread has it
    _in_a_thread_with_three_openmp_threads(lambda: (served.outputs(X), served.predict_proba(X), mine.outputs(X)))
    assert OpenMPReader.seen == [1, 1, 1]  # the served adapter's limit stays set in that thread
    OpenMPReader.seen = []
    _in_a_thread_with_three_openmp_threads(lambda: mine.outputs(X))
    assert OpenMPReader.seen == [3]


def test_the_servers_limits_ask_for_one_openmp_thread():
    from workspace import limits

    assert limits.model_call_limits().openmp_threads == 1
    assert limits.model_call_limits(timeout=False).openmp_threads is None  # check and build keep their own
