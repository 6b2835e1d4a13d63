"""LIME's neighbourhoods drawn on two threads (issue 25): the same explanation, bit for bit, as on one."""
import threading
import time

import numpy as np
import pandas as pd
import pytest

from explainers import LimeExplainer
from explainers import _lime_threads
from explainers._lime_threads import draw_all


def _explainer(bc, gb_model, threads):
    X, _, train, _ = bc
    predict = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    return LimeExplainer(predict, training_data=X.iloc[train], class_names=("benign", "malignant"), num_samples=1100,
                         threads=threads, time_budget_s=float("inf"), max_samples=8000)  # sizes by tolerance alone


@pytest.fixture
def slow_draws(monkeypatch):
    """Each neighbourhood takes 20 ms more (a sleep: the GIL is free), so the pool thread surely draws some of them;
    records which thread drew which seed."""
    drawn = {}

    def wrap(space):
        sample = space.sample

        def slow(row, n, seed):
            time.sleep(0.02)
            drawn[seed] = threading.current_thread().name
            return sample(row, n, seed)
        monkeypatch.setattr(space, "sample", slow)
    return drawn, wrap


def test_two_threads_give_every_fit_of_a_round_and_the_held_out_draw_of_its_own_seed(bc, gb_model, slow_draws):
    """Each fit of a round is compared with the one-thread fit at its position: drawing a seed's neighbourhood into
    another seed's slot (the fits' mean may round alike) fails here."""
    drawn, wrap = slow_draws
    one, two = _explainer(bc, gb_model, 1), _explainer(bc, gb_model, 2)
    row = bc[0].iloc[7].to_numpy(dtype=float)
    row_t = one._to_lime(row[None])[0]
    seeds, spare = [10, 11, 12, 13, 14], {}
    alone = one._fit_round(row_t, one._model_fn(row, row_t), seeds, 1200)
    wrap(two._space)
    shared = two._fit_round(row_t, two._model_fn(row, row_t), seeds, 1200, spare)
    assert len(shared) == len(alone) == 5
    for a, b in zip(alone, shared):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    assert len({a[0].tobytes() for a in alone}) == 5  # the seeds' fits differ: a swap would show
    assert set(drawn) == {*seeds, 15} and "candor-lime-draws" in "".join(drawn.values())  # both threads drew
    assert threading.current_thread().name in drawn.values()
    binary, inverse = one._space.sample(row_t, 1200, 15)  # the held-out neighbourhood: seed seeds[-1] + 1
    np.testing.assert_array_equal(spare[1200][0], binary)
    np.testing.assert_array_equal(spare[1200][1], inverse)


@pytest.mark.parametrize("num_samples", [None, 1200])
def test_two_threads_explain_as_one(bc, gb_model, slow_draws, num_samples):
    """Values, standard errors, convergence, sizes and the held-out R² (drawn beside the last round) are equal."""
    one, two = _explainer(bc, gb_model, 1), _explainer(bc, gb_model, 2)
    slow_draws[1](two._space)
    for r in (0, 3, 40):
        x = bc[0].iloc[[r]]
        a, b = one.explain(x, num_samples=num_samples), two.explain(x, num_samples=num_samples)
        np.testing.assert_array_equal(a.values, b.values)
        assert a.base_value == b.base_value and a.prediction == b.prediction and a.fidelity == b.fidelity
        for key in ("standard_error", "converged", "tolerance", "num_samples", "total_samples", "heldout_r2",
                    "local_pred", "unidentified"):
            assert a.params[key] == b.params[key], key
    assert one.threads == 1 and _explainer(bc, gb_model, 0).threads == 1


def test_a_busy_pool_thread_leaves_every_draw_to_the_caller(bc, gb_model):
    """Another request's draws hold the one pool thread: this request draws alone rather than wait behind them."""
    lime = _explainer(bc, gb_model, 2)
    row_t = lime._to_lime(bc[0].iloc[[5]].to_numpy(dtype=float))[0]
    release, names = threading.Event(), []
    busy = _lime_threads._pool().submit(release.wait, 30)
    try:
        sample = lime._space.sample

        def traced(row, n, seed):
            names.append(threading.current_thread().name)
            return sample(row, n, seed)
        lime._space.sample = traced
        out = draw_all(lime._space, row_t, 1200, [1, 2, 3], threads=2)
    finally:
        release.set()
        busy.result()
    assert names == [threading.current_thread().name] * 3
    for (b, i), s in zip(out, [1, 2, 3]):
        ref = sample(row_t, 1200, s)
        np.testing.assert_array_equal(b, ref[0])
        np.testing.assert_array_equal(i, ref[1])


def test_an_error_in_the_pool_thread_reaches_the_caller(bc, gb_model):
    lime = _explainer(bc, gb_model, 2)
    row_t = lime._to_lime(bc[0].iloc[[5]].to_numpy(dtype=float))[0]
    sample, caller = lime._space.sample, threading.current_thread()

    def failing(row, n, seed):
        time.sleep(0.02)
        if threading.current_thread() is not caller:
            raise MemoryError("no room for the neighbourhood")
        return sample(row, n, seed)
    lime._space.sample = failing
    with pytest.raises(MemoryError, match="no room"):
        draw_all(lime._space, row_t, 1200, [1, 2, 3, 4], threads=2)


def test_small_neighbourhoods_are_drawn_in_the_calling_thread(bc, gb_model, slow_draws):
    drawn, wrap = slow_draws
    lime = _explainer(bc, gb_model, 2)
    wrap(lime._space)
    row_t = lime._to_lime(bc[0].iloc[[5]].to_numpy(dtype=float))[0]
    small = _lime_threads.MIN_CELLS // 30 - 1  # 30 features: just under the cells worth sharing out
    out = draw_all(lime._space, row_t, small, [1, 2, 3], threads=2)
    assert set(drawn.values()) == {threading.current_thread().name} and [len(b) for b, _ in out] == [small] * 3
    assert lime._fit_round(row_t, lime._model_fn(bc[0].iloc[5].to_numpy(dtype=float), row_t), [1, 2], small, spare := {})
    assert spare == {}  # no held-out neighbourhood drawn beside a round drawn in one thread


def test_a_forked_process_makes_its_own_pool_thread():
    """A worker forked after the pool was made (gunicorn --preload) would hold an executor whose thread is not in it."""
    import multiprocessing

    pool = _lime_threads._pool()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as child:
        assert child.apply(_pool_is_fresh, (id(pool),)) is True
    assert _lime_threads._pool() is pool


def _pool_is_fresh(parent_id):
    return id(_lime_threads._pool()) != parent_id and _lime_threads._pool().submit(lambda: 7).result(timeout=10) == 7
