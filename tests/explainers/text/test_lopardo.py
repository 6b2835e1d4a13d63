"""Oracle T13 for the single-layer attention classifier of Lopardo et al. (2024)."""
import numpy as np
import pytest
import torch

from explainers.text import LopardoClassifier, closed_form_gradient, lopardo_scores, train_lopardo


@pytest.fixture()
def small():
    torch.manual_seed(0)
    return LopardoClassifier(vocab_size=12, n_classes=2, d_e=4, d_att=3, d_out=2, n_heads=2,
                             max_len=8, dtype=torch.float64, seed=0)


def test_t13b_closed_form_gradient_equals_autograd(small):
    gen = torch.Generator().manual_seed(0)
    for target in (0, 1):
        e = torch.randn(6, 4, generator=gen, dtype=torch.float64)  # CLS + T=5 tokens
        e.requires_grad_(True)
        logits, _ = small.forward_embeddings(e[None])
        (auto,) = torch.autograd.grad(logits[0, target], e)
        closed = closed_form_gradient(small, e.detach(), target)
        np.testing.assert_allclose(closed.numpy(), auto[1:].numpy(), rtol=1e-6, atol=1e-12)


def test_t13c_alpha_rows_are_distributions(small):
    ids = torch.tensor([[1, 4, 5, 6, 7, 8], [1, 4, 5, 0, 0, 0]])
    _, alpha = small(ids, return_attention=True)
    assert alpha.shape == (2, 2, 6)
    assert torch.all(alpha >= 0)
    assert torch.allclose(alpha.sum(-1), torch.ones(2, 2, dtype=torch.float64))
    assert torch.all(alpha[1, :, 3:] == 0)  # padding gets no attention


def test_t13a_zero_output_layer_gives_zero_gradient_but_nonuniform_attention(small):
    with torch.no_grad():
        small.W_l.zero_()
    e = torch.randn(6, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    logits, alpha = small.forward_embeddings(e[None])
    assert torch.all(logits == 0)
    assert torch.all(closed_form_gradient(small, e, 0) == 0)
    assert alpha[0].std(-1).min() > 1e-3  # attention is not uniform


def test_training_on_text_and_scores():
    texts = ["good great fun", "great good film", "fun and good", "bad awful dull",
             "awful bad plot", "dull and bad"] * 5
    labels = [1, 1, 1, 0, 0, 0] * 5
    model, vocab, acc = train_lopardo(texts, labels, epochs=30, lr=0.05, seed=0)
    assert acc == 1.0
    again, _, _ = train_lopardo(texts, labels, epochs=30, lr=0.05, seed=0)
    assert torch.equal(model.W_e, again.W_e)  # seeded, bit-for-bit
    s = lopardo_scores(model, vocab, "good but dull film")
    assert s["words"] == ("good", "but", "dull", "film")
    for key in ("alpha_avg", "alpha_max", "grad_avg", "grad_l1", "grad_l2", "gradient_x_input"):
        assert s[key].shape == (4,)
    assert s["alpha_avg"].sum() <= 1 + 1e-9 and s["alpha_max"].max() <= 1  # CLS share removed
