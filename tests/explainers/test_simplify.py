"""Persuasive top-k: METHODS §7 T10 (k = d changes nothing), T12 (ERASER), the sentence's claims."""
import numpy as np
import pandas as pd
import pytest

from explainers import Explanation, comprehensiveness, masked_output, simplify_top_k, sufficiency

SUM3 = lambda a: np.asarray(a, dtype=float).sum(axis=1)  # noqa: E731  g(x) = x1 + x2 + x3


def _expl(values, x, prediction, base=0.0):
    return Explanation("shap", ("a", "b", "c"), np.array(values, float), base, prediction, np.array(x, float),
                       "probability", "yes", "test")


def test_t12_eraser_single_rationale():
    x, zero = np.array([3.0, 2, 1]), np.zeros((1, 3))
    assert comprehensiveness(SUM3, x, [0], zero) == pytest.approx(3.0)
    assert sufficiency(SUM3, x, [0], zero) == pytest.approx(3.0)
    assert [6 - masked_output(SUM3, x, [], zero) + 0, comprehensiveness(SUM3, x, [0, 1], zero)] == [6.0, 5.0]


def test_comprehensiveness_of_empty_set_is_zero():
    assert comprehensiveness(SUM3, [3, 2, 1], [], np.zeros((4, 3))) == 0.0


def test_masked_output_averages_over_background():
    bg = np.array([[0.0, 0, 0], [2, 2, 2]])
    assert masked_output(SUM3, [3, 2, 1], [0], bg) == pytest.approx(3 + (0 + 4) / 2)


def test_t10_k_equals_d_loses_nothing():
    e = _expl([3, 2, 1], [3, 2, 1], prediction=6.0)
    s = simplify_top_k(e, 3, predict_fn=SUM3, background=np.zeros((2, 3)), reference=np.ones(3),
                       class_names=("no", "yes"))
    assert s.fidelity_after["mass_retained"] == 1.0
    assert s.fidelity_after["sufficiency"] == 0.0
    assert s.fidelity_after["output"] == s.fidelity_before["output"] == 6.0
    np.testing.assert_array_equal(s.values, e.values)
    assert s.dropped == ()


def test_top_k_drops_the_smallest_and_counts_the_cost():
    e = _expl([0.5, -0.2, 0.1], [3, 0, 1], prediction=0.9, base=0.5)
    s = simplify_top_k(e, 1, predict_fn=SUM3, background=np.zeros((1, 3)), reference=np.ones(3),
                       class_names=("no", "yes"))
    assert s.kept == ("a",) and s.dropped == ("b", "c")
    assert s.fidelity_after["mass_retained"] == pytest.approx(0.5 / 0.8)
    np.testing.assert_array_equal(s.values, [0.5, 0, 0])
    assert s.operators[0] == ("top_k", {"k": 1})
    assert s.complexity_after["n_items"] == 1 < s.complexity_before["n_items"]


def test_sentence_names_kept_features_with_direction_and_values():
    e = _expl([0.5, -0.2, 0.1], [3, 0, 1], prediction=0.9, base=0.5)
    s = simplify_top_k(e, 2, predict_fn=SUM3, background=np.zeros((1, 3)), reference=np.ones(3),
                       class_names=("no", "yes"))
    assert s.statement == ("The model predicts yes (probability of yes 0.90, 0.50 on average) mainly because "
                           "a is high (3 > median 1), although b is low (0 < median 1).")
    assert "c " not in s.statement


def test_sentence_says_partly_when_named_support_is_small():
    e = _expl([0.1, -0.2, 0.5], [3, 0, 1], prediction=0.2, base=0.5)
    s = simplify_top_k(e, 1, predict_fn=SUM3, background=np.zeros((1, 3)), reference=np.ones(3),
                       class_names=("no", "yes"))
    assert s.statement.startswith("The model predicts no") and " although c is typical" in s.statement
    e2 = _expl([0.4, -0.5, 0.45], [3, 0, 1], prediction=0.2, base=0.5)
    s2 = simplify_top_k(e2, 1, predict_fn=SUM3, background=np.zeros((1, 3)), reference=np.ones(3),
                        class_names=("no", "yes"))
    assert "partly because b is low" in s2.statement


def test_k_out_of_range():
    e = _expl([1, 2, 3], [1, 2, 3], prediction=6.0)
    with pytest.raises(ValueError, match="between 0 and 3"):
        simplify_top_k(e, 4, predict_fn=SUM3, background=np.zeros((1, 3)), reference=np.ones(3),
                       class_names=("no", "yes"))


def test_batched_all_k_equals_one_k_at_a_time(bc, gb_model):
    from explainers import ShapExplainer, simplify_top_k_all

    X, _, train, _ = bc
    e = ShapExplainer(gb_model, background=X.iloc[train], background_size=30).explain(X.iloc[[11]])
    f = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))[:, 1]  # noqa: E731
    kw = dict(predict_fn=f, background=X.iloc[train[:30]].to_numpy(), reference=np.zeros(30),
              class_names=("benign", "malignant"))
    many = simplify_top_k_all(e, [0, 4, 30], **kw)
    for k, s in zip([0, 4, 30], many):
        one = simplify_top_k(e, k, **kw)
        assert s.fidelity_after == pytest.approx(one.fidelity_after) and s.kept == one.kept
        assert s.fidelity_after["sufficiency"] == pytest.approx(
            sufficiency(f, X.iloc[11].to_numpy(), np.array([X.columns.get_loc(n) for n in s.kept], dtype=int),
                        kw["background"]))
    assert many[2].fidelity_after["sufficiency"] == pytest.approx(0.0, abs=1e-12)
    assert many[0].fidelity_after["comprehensiveness"] == 0.0
