"""Integrated Gradients (T9), log-odds wrapper, attention rows, head agreement."""
import numpy as np
import pytest
import torch
from torch import nn

from explainers import Explanation
from explainers.attention.aggregates import cls_row
from explainers.attention.agreement import compare_attention_attribution
from explainers.attention.extract import tabular_attention
from explainers.gradients import ClassLogOdds, ClassProbability, integrated_gradients


class Product(nn.Module):
    def forward(self, x):
        return x[:, 0] * x[:, 1]


def test_t9_ig_completeness_on_product():
    e = integrated_gradients(Product(), [2.0, 3.0], [0.0, 0.0], feature_names=("x1", "x2"), target="g",
                             output_space="raw")
    np.testing.assert_allclose(e.values, [3.0, 3.0], atol=1e-5)
    assert abs(e.params["convergence_delta"]) < 1e-5
    assert e.params["n_steps"] == 50
    assert e.prediction == 6.0 and e.base_value == 0.0


def test_t9_ig_of_linear_model_is_gradient_times_input():
    lin = nn.Linear(3, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.5, -2.0, 0.5]]))
        lin.bias.fill_(0.3)
    f = lambda z: lin(z)[:, 0]  # noqa: E731
    module = type("F", (nn.Module,), {"forward": lambda self, z: f(z)})()
    x = np.array([1.0, 2.0, -4.0])
    e = integrated_gradients(module, x, np.zeros(3), feature_names=("a", "b", "c"), target="y", output_space="raw")
    np.testing.assert_allclose(e.values, [1.5, -4.0, -2.0], atol=1e-5)


def test_log_odds_wrapper_matches_probability(toy_transformer):
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    p = ClassProbability(toy_transformer)(x).detach()
    lo = ClassLogOdds(toy_transformer)(x).detach()
    torch.testing.assert_close(lo, torch.log(p / (1 - p)), atol=1e-5, rtol=1e-5)


def test_ig_completeness_on_the_transformer(toy_transformer):
    e = integrated_gradients(ClassLogOdds(toy_transformer), [1.0, -0.5, 2.0, 0.0, 0.3], np.zeros(5),
                             feature_names=tuple("abcde"), target="1")
    assert abs(e.values.sum() - (e.prediction - e.base_value)) <= 0.01 * abs(e.prediction - e.base_value) + 1e-6


def test_attention_rows_sum_to_one(toy_transformer):
    a = tabular_attention(toy_transformer, [1.0, -0.5, 2.0, 0.0, 0.3], tuple("abcde"))
    assert a.weights.shape == (2, 2, 6, 6) and a.tokens[0] == "[CLS]"
    np.testing.assert_allclose(a.weights.sum(axis=-1), 1.0, atol=1e-6)
    assert (a.weights >= 0).all()
    np.testing.assert_array_equal(cls_row(a.weights, layer=None, head_agg=None)[..., 1:], a.weights[:, :, 0, 1:])


def test_head_agreement_is_one_when_attention_equals_attribution():
    attn = np.array([[[0.1, 0.5, 0.4], [0.3, 0.3, 0.4]]])
    e = Explanation("integrated_gradients", ("a", "b", "c"), np.array([-0.1, 0.5, -0.4]), 0.0, 0.0,
                    np.zeros(3), "raw", "y", "test")
    r = compare_attention_attribution(attn, e, k=1)
    assert r.per_head.shape == (1, 2)
    assert r.per_head[0, 0] == pytest.approx(1.0)
    assert r.top_k_overlap[0, 0] == 1.0
    with pytest.raises(ValueError, match="expected"):
        compare_attention_attribution(attn[:, :, :2], e)
