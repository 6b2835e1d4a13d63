"""Model performance (issue 25) against independent oracles: the curves and their areas against scikit-learn's
``roc_curve``/``roc_auc_score``/``precision_recall_curve``/``average_precision_score``; the confusion at a threshold
against a brute-force count; each interval against a brute-force bootstrap (every resample's rows copied out and
scored by scikit-learn); calibration against a pandas group-by; a regressor's R² and RMSE against numpy."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (average_precision_score, brier_score_loss, precision_recall_curve, r2_score,
                             roc_auc_score, roc_curve)

from explainers import performance as perf


@pytest.fixture(scope="module")
def tied():
    """300 rows whose probabilities are rounded to 2 decimals (many ties), about a third positive."""
    rng = np.random.default_rng(3)
    y = (rng.random(300) < 0.35).astype(int)
    p = np.round(np.clip(0.25 * y + 0.75 * rng.random(300), 0, 1), 2)
    return y, p


def test_curves_and_areas_equal_scikit_learn_with_ties(tied):
    y, p = tied
    c = perf.classifier_performance(y, p, n_boot=0)
    fpr, tpr, thr = roc_curve(y, p, drop_intermediate=False)
    np.testing.assert_allclose(c.fpr, fpr)
    np.testing.assert_allclose(c.tpr, tpr)
    np.testing.assert_array_equal(c.roc_thresholds[1:], thr[1:])  # scikit-learn's first is max + 1 or inf
    precision, recall, pr_thr = precision_recall_curve(y, p)
    np.testing.assert_allclose(c.precision, precision)
    np.testing.assert_allclose(c.recall, recall)
    np.testing.assert_array_equal(c.pr_thresholds, pr_thr)
    assert c.roc_auc.value == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    assert c.average_precision.value == pytest.approx(average_precision_score(y, p), abs=1e-12)
    assert c.brier.value == pytest.approx(brier_score_loss(y, p), abs=1e-12)
    assert c.prevalence == pytest.approx(y.mean())
    # the bootstrap's per-resample kernels give the same areas on the rows as they are (all counts 1)
    _, ends, tps, fps = perf.curve_counts(y, p)
    assert perf._auc(tps[None], fps[None])[0] == pytest.approx(roc_auc_score(y, p), abs=1e-12)


def test_confusion_at_a_threshold_equals_a_brute_force_count(tied):
    y, p = tied
    c = perf.classifier_performance(y, p, n_boot=0)
    for t in (0.0, 0.3, 0.5, 0.51, 0.77, 1.0):
        k = perf.confusion_at(c, t)
        oracle = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
        for label, prob in zip(y, p):
            called = prob >= t
            oracle[("t" if called == bool(label) else "f") + ("p" if called else "n")] += 1
        assert (k.tp, k.fp, k.tn, k.fn) == (oracle["tp"], oracle["fp"], oracle["tn"], oracle["fn"])
        assert k.threshold == t and k.n == len(y)
        if k.tp + k.fn:
            assert k.tpr == oracle["tp"] / (oracle["tp"] + oracle["fn"])
    # a margin is compared through its logistic: the same counts as the probability it maps to
    m = perf.classifier_performance(y, np.log(np.clip(p, 1e-6, 1 - 1e-6) / (1 - np.clip(p, 1e-6, 1 - 1e-6))),
                                    output_kind="margin", n_boot=0)
    assert m.brier is None and m.calibration_true is None
    k, km = perf.confusion_at(c, 0.7), perf.confusion_at(m, 0.7)
    assert (k.tp, k.fp, k.tn, k.fn) == (km.tp, km.fp, km.tn, km.fn)
    with pytest.raises(ValueError, match="threshold"):
        perf.confusion_at(c, 1.5)


def test_intervals_equal_a_brute_force_stratified_bootstrap(tied, monkeypatch):
    """Every resample drawn as the protocol says (positives then negatives, blocks of block_size), its rows copied
    out and scored by scikit-learn; the percentile bounds must equal the vectorized ones."""
    y, p = tied
    monkeypatch.setattr(perf, "BLOCK_CELLS", 40 * len(y))  # blocks of 40 resamples: 40, 40, 40, 30
    n_boot, seed = 150, 7
    assert perf.block_size(len(y)) == 40
    c = perf.classifier_performance(y, p, n_boot=n_boot, seed=seed)
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    aucs, aps, briers = [], [], []
    for start in range(0, n_boot, 40):
        b = min(40, n_boot - start)
        drawn_pos = pos[rng.integers(0, len(pos), size=(b, len(pos)))]
        drawn_neg = neg[rng.integers(0, len(neg), size=(b, len(neg)))]
        for i in range(b):
            rows = np.r_[drawn_pos[i], drawn_neg[i]]
            aucs.append(roc_auc_score(y[rows], p[rows]))
            aps.append(average_precision_score(y[rows], p[rows]))
            briers.append(brier_score_loss(y[rows], p[rows]))
    for got, samples in ((c.roc_auc, aucs), (c.average_precision, aps), (c.brier, briers)):
        lo, hi = np.quantile(samples, [0.025, 0.975])
        assert (got.low, got.high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
        assert (got.n_boot, got.seed, got.level) == (n_boot, seed, 0.95)
        assert got.low <= got.value <= got.high


def test_calibration_equals_a_pandas_group_by(tied):
    y, p = tied
    c = perf.classifier_performance(y, p, n_boot=0, n_bins=8)
    frame = pd.DataFrame({"y": y, "p": p, "bin": pd.cut(p, np.linspace(0, 1, 9), include_lowest=True)})
    groups = frame.groupby("bin", observed=True).agg(true=("y", "mean"), predicted=("p", "mean"), rows=("y", "size"))
    np.testing.assert_allclose(c.calibration_true, groups["true"].to_numpy())
    np.testing.assert_allclose(c.calibration_predicted, groups["predicted"].to_numpy())
    np.testing.assert_array_equal(c.calibration_counts, groups["rows"].to_numpy())
    assert c.n_bins == 8 and c.calibration_counts.sum() == len(y)


def test_regressor_r2_and_rmse_equal_numpy_and_a_brute_force_bootstrap(monkeypatch):
    monkeypatch.setattr(perf, "BLOCK_CELLS", 50 * 200)  # blocks of 50 resamples: 50, 50, 20
    rng = np.random.default_rng(0)
    actual = rng.normal(size=200) * 3 + 10
    predicted = actual + rng.normal(size=200)
    r = perf.regressor_performance(actual, predicted, n_boot=120, seed=2)
    assert r.r2.value == pytest.approx(1 - np.sum((actual - predicted) ** 2) / np.sum((actual - actual.mean()) ** 2))
    assert r.r2.value == pytest.approx(r2_score(actual, predicted))
    assert r.rmse.value == pytest.approx(np.sqrt(np.mean((actual - predicted) ** 2)))
    np.testing.assert_allclose(r.residuals, actual - predicted)
    rng = np.random.default_rng(2)
    r2s, rmses = [], []
    block = perf.block_size(200)
    assert block == 50
    for start in range(0, 120, block):
        drawn = rng.integers(0, 200, size=(min(block, 120 - start), 200))
        for rows in drawn:
            r2s.append(r2_score(actual[rows], predicted[rows]))
            rmses.append(np.sqrt(np.mean((actual[rows] - predicted[rows]) ** 2)))
    assert (r.r2.low, r.r2.high) == tuple(pytest.approx(v, abs=1e-10) for v in np.quantile(r2s, [0.025, 0.975]))
    assert (r.rmse.low, r.rmse.high) == tuple(pytest.approx(v, abs=1e-10)
                                              for v in np.quantile(rmses, [0.025, 0.975]))


def test_multiclass_confusion_and_refusals():
    true, predicted = np.array([0, 0, 1, 1, 2, 2, 2]), np.array([0, 1, 1, 1, 2, 0, 2])
    m = perf.multiclass_confusion(true, predicted, ("a", "b", "c"))
    oracle = pd.crosstab(pd.Series(true), pd.Series(predicted)).reindex(index=range(3), columns=range(3),
                                                                          fill_value=0).to_numpy()
    np.testing.assert_array_equal(m.matrix, oracle)
    assert m.accuracy == pytest.approx(5 / 7) and m.accuracy_low < 5 / 7 < m.accuracy_high
    with pytest.raises(ValueError, match="both labels"):
        perf.classifier_performance([1, 1, 1], [0.2, 0.5, 0.9])
    with pytest.raises(ValueError, match="lie in"):
        perf.classifier_performance([0, 1], [0.2, 1.5])
    with pytest.raises(ValueError, match="class indices"):
        perf.multiclass_confusion([0, 3], [0, 1], ("a", "b"))
