"""IG completeness on MiniLM, PAD baseline, T9 quadrature, G x I, LIME and SHAP text."""
import numpy as np
import pytest
import torch

from explainers.text import gradient_x_input, integrated_gradients, lime_text, shap_text

TEXT = "The food was absolutely wonderful, but the service was unbelievably slow and rude."


def test_ig_completeness_within_one_percent_at_50_steps(minilm):
    e = integrated_gradients(minilm, TEXT, n_steps=50, max_steps=50)
    assert e.params["n_steps"] == 50
    gap = abs(e.values.sum() - (e.prediction - e.base_value))
    assert gap <= 0.01 * abs(e.prediction - e.base_value)
    assert e.params["relative_gap"] <= 0.01
    # word values are sums of the content-token values; specials carry no value
    tv = np.asarray(e.params["token_values"])
    assert e.values.sum() == pytest.approx(tv[1:-1].sum())
    assert e.params["n_special_excluded"] == 2
    assert e.output_space == "log_odds" and e.target == minilm.labels[0]
    assert e.feature_names[e.feature_names.index("unbelievably")] == "unbelievably"


def test_pad_baseline_uses_the_special_token_id_not_the_word_pad(minilm):
    e = integrated_gradients(minilm, "the pad was too hot", max_steps=50)
    pad_id = minilm.tokenizer.pad_token_id
    word_pad_id = minilm.tokenizer.convert_tokens_to_ids("pad")
    assert word_pad_id != pad_id
    base = e.params["baseline_ids"]
    assert base[0] == minilm.tokenizer.cls_token_id and base[-1] == minilm.tokenizer.sep_token_id
    assert base[1:-1] == [pad_id] * (len(base) - 2)
    assert e.params["tokens"][2] == "pad"
    assert e.values[e.feature_names.index("pad")] != 0.0  # the real word "pad" differs from [PAD]


def test_t9_gauss_legendre_quadrature_is_exact_for_a_product():
    from captum.attr import IntegratedGradients

    ig = IntegratedGradients(lambda x: x[:, 0] * x[:, 1])
    x = torch.tensor([[2.0, 3.0]], dtype=torch.float64)
    attr, delta = ig.attribute(x, baselines=torch.zeros_like(x), n_steps=50,
                               method="gausslegendre", return_convergence_delta=True)
    assert attr[0].tolist() == pytest.approx([3.0, 3.0], abs=1e-6)
    assert abs(float(delta)) < 1e-6
    attr, delta = ig.attribute(x, baselines=torch.zeros_like(x), n_steps=50,
                               method="riemann_right", return_convergence_delta=True)
    assert attr[0].tolist() == pytest.approx([3.06, 3.06], abs=1e-6)  # Captum's alphas are float32
    assert float(delta) == pytest.approx(0.12, abs=1e-6)


def test_gradient_x_input_matches_finite_difference_direction(minilm):
    e = gradient_x_input(minilm, "a great, great movie")
    assert e.values.shape == (len(e.feature_names),) and np.isfinite(e.values).all()
    assert e.target == "positive"
    assert len(e.params["saliency_l1"]) == len(e.params["tokens"])


def test_lime_text_words_align(minilm):
    e = lime_text(minilm, "Terrible battery, great screen.", num_samples=100, max_samples=100, seed=0)
    assert e.feature_names == ("Terrible", "battery", ",", "great", "screen", ".")
    assert e.output_space == "probability" and 0 <= e.params["model_probability"] <= 1
    again = lime_text(minilm, "Terrible battery, great screen.", num_samples=100, max_samples=100, seed=0)
    assert np.array_equal(e.values, again.values)  # seeded


def test_shap_text_is_additive(minilm):
    e = shap_text(minilm, "Terrible battery, great screen.", max_evals=60)
    assert e.values.shape == (6,)
    assert e.additivity_gap < 1e-4


def test_detach_attention_changes_gradients_not_outputs(minilm):
    text = "a fine movie"
    plain = gradient_x_input(minilm, text)
    detached = gradient_x_input(minilm, text, detach_attention=True)
    assert detached.prediction == pytest.approx(plain.prediction, abs=1e-6)
    assert not np.allclose(plain.values, detached.values, atol=1e-4)
    assert detached.params["detach_attention"] and "detached" in detached.source
    assert np.array_equal(gradient_x_input(minilm, text).values, plain.values)  # switch restored
