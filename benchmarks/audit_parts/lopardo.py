"""Audit part: Lopardo et al. (2024, ICML, arXiv 2402.03485) on a model trained on real sentences.

The single-layer attention classifier is trained with the Text page's settings (2 heads, d_e 32,
d_att 16, d_out 16, Adam lr 1e-2, batch 32, seed 0) on the UCI Sentiment Labelled Sentences
(``shared/data/sentiment_sentences``, amazon + imdb + yelp, 3,000 sentences, the first 80 % after a
seeded shuffle for training). On held-out sentences of 4 to 10 words:

* **LIME approximation** - the product's :func:`explainers.text._lopardo_lime.lime_approximation`
  against (a) the product's LIME run (:func:`lopardo_lime`, the page's figure) and (b) LIME run here
  directly with the ``lime`` library (``LimeTextExplainer``, ``bow=False``, 5,000 samples, our own
  classifier function) and (c) LIME's exact large-sample limit by enumerating every mask with LIME's
  sampling law and kernel (numpy weighted least squares). Pearson r per text; the headline
  ``lopardo_lime_pearson`` is the median over texts of (b).
* **Gradient vs attention** - Spearman ρ between α-avg and the L2 norm of the gradient per word: the
  product's closed form (:func:`lopardo_scores`) against torch autograd and the model's own attention.
  Headline ``lopardo_grad_attention_spearman`` (median, autograd).
"""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "sentiment_sentences"
FILES = ("amazon_cells_labelled.txt", "imdb_labelled.txt", "yelp_labelled.txt")


def _sentences():
    texts, labels = [], []
    for name in FILES:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            text, _, label = line.rpartition("\t")
            if text.strip() and label.strip() in ("0", "1"):
                texts.append(text.strip())
                labels.append(int(label))
    return texts, np.array(labels)


def _masked_logits(model, vocab, words, rows, target):
    """Logit ``target`` for each mask row (1 keeps the word), removed words -> [MASK] (id 3); own code."""
    import torch

    ids = torch.tensor([[1] + [vocab.stoi.get(w, 2) if z else 3 for w, z in zip(words, row)] for row in rows])
    with torch.no_grad():
        return model(ids)[:, target].double().numpy()


def lime_limit(model, vocab, words, target) -> np.ndarray:
    """LIME's large-sample coefficients: weighted least squares over every mask with LIME's law and kernel."""
    d = len(words)
    Z = np.array(list(itertools.product([0, 1], repeat=d)), dtype=float)
    kept = Z.sum(1)
    Z, kept = Z[kept < d], kept[kept < d]
    weight = (1.0 / d / np.array([math.comb(d, int(d - m)) for m in kept])
              * np.sqrt(np.exp(-(100 * (1 - np.sqrt(kept / d))) ** 2 / 25 ** 2)))
    y = _masked_logits(model, vocab, words, Z.astype(int), target)
    A = np.column_stack([np.ones(len(Z)), Z])
    Aw = A * weight[:, None]
    return np.linalg.solve(A.T @ Aw, Aw.T @ y)[1:]


def lime_direct(model, vocab, words, target, num_samples: int) -> np.ndarray:
    """LIME run with the lime library on our own classifier function (bow=False, one feature per word)."""
    from lime.lime_text import LimeTextExplainer

    mask = "zzmaskzz"

    def fn(strings):
        rows = [[0 if w == mask else 1 for w in s.split(" ")] for s in strings]
        return np.column_stack([_masked_logits(model, vocab, words, rows, c) for c in range(2)])

    exp = LimeTextExplainer(split_expression=lambda s: s.split(" "), bow=False, mask_string=mask,
                            random_state=1).explain_instance(" ".join(words), fn, labels=(target,),
                                                             num_features=len(words), num_samples=num_samples)
    out = np.zeros(len(words))
    for j, w in exp.as_map()[target]:
        out[j] = w
    return out


def autograd_rho(model, vocab, text, target) -> float:
    """Spearman ρ of α-avg (the model's attention) with ||∂f/∂e_t||_2 from torch autograd."""
    import torch
    from scipy import stats

    ids = vocab.encode([text], model.max_len)
    e = model.embed(ids)[0].detach().requires_grad_(True)
    logits, alpha = model.forward_embeddings(e[None])
    (grad,) = torch.autograd.grad(logits[0, target], e)
    return float(stats.spearmanr(alpha[0, :, 1:].mean(0).detach().numpy(), grad[1:].norm(dim=-1).numpy())[0])


def run(quick: bool = False) -> tuple[list[dict], dict]:
    """Product vs independent LIME-approximation agreement and gradient-attention ρ."""
    import torch
    from scipy import stats

    from explainers.text import lopardo_scores, train_lopardo
    from explainers.text._lopardo_lime import lime_approximation, lopardo_lime

    if not DATA.is_dir():
        return [dict(item="Lopardo LIME approximation", product=None, independent=None, difference=None,
                     note=f"skipped: {DATA} not found")], {"lopardo_lime_pearson": None}
    torch.set_num_threads(1)
    texts, labels = _sentences()
    order = np.random.default_rng(0).permutation(len(texts))
    n_train = int(0.8 * len(texts))
    train_idx, test_idx = order[:n_train], order[n_train:]
    if quick:
        train_idx = train_idx[:200]
    epochs, n_texts, samples = (2, 3, 300) if quick else (30, 30, 5000)
    model, vocab, train_acc = train_lopardo([texts[i] for i in train_idx], labels[train_idx], n_heads=2, d_e=32,
                                            d_att=16, d_out=16, epochs=epochs, lr=1e-2, batch_size=32,
                                            max_len=64, seed=0)
    with torch.no_grad():
        test_acc = float((model(vocab.encode([texts[i] for i in test_idx], 64)).argmax(-1).numpy()
                          == labels[test_idx]).mean())
    chosen = [texts[i] for i in test_idx if 4 <= len(vocab.split(texts[i])) <= 10][:n_texts]
    r_prod, r_direct, r_limit, r_lime_limit, rho_prod, rho_auto = [], [], [], [], [], []
    for text in chosen:
        words = vocab.split(text)
        with torch.no_grad():
            target = int(model(vocab.encode([text], 64)).argmax())
        approx = lime_approximation(model, vocab, text, target)
        product_lime = lopardo_lime(model, vocab, text, target, num_samples=500, seed=0).values
        direct = lime_direct(model, vocab, words, target, samples)
        limit = lime_limit(model, vocab, words, target)
        r_prod.append(stats.pearsonr(approx, product_lime)[0])
        r_direct.append(stats.pearsonr(approx, direct)[0])
        r_limit.append(stats.pearsonr(approx, limit)[0])
        r_lime_limit.append(stats.pearsonr(direct, limit)[0])
        s = lopardo_scores(model, vocab, text, target)
        rho_prod.append(stats.spearmanr(s["alpha_avg"], s["grad_l2"])[0])
        rho_auto.append(autograd_rho(model, vocab, text, target))
    med = lambda v: float(np.median(v))  # noqa: E731
    iqr = lambda v: f"IQR {np.percentile(v, 25):.3f}-{np.percentile(v, 75):.3f}"  # noqa: E731
    setting = (f"{len(chosen)} held-out sentences of 4-10 words; model trained {epochs} epochs on {len(train_idx)} "
               f"UCI sentences (train acc {train_acc:.3f}, held-out acc {test_acc:.3f})")
    rows = [
        dict(item="Pearson r, LIME approx. vs LIME (median)", product=med(r_prod), independent=med(r_direct),
             difference=med(r_prod) - med(r_direct),
             note=f"product: page's LIME run (500 samples); independent: lime library directly, {samples} samples; "
                  f"{iqr(r_direct)}; {setting}"),
        dict(item="Pearson r, LIME approx. vs LIME's exact limit (median)", product=med(r_direct),
             independent=med(r_limit), difference=med(r_direct) - med(r_limit),
             note=f"limit by enumeration of every mask (LIME's sampling law and kernel); {iqr(r_limit)}"),
        dict(item="Pearson r, sampled LIME vs its exact limit (median)", product=None, independent=med(r_lime_limit),
             difference=None, note="checks the enumeration oracle: LIME converges to it"),
        dict(item="Spearman ρ, α-avg vs gradient L2 norm (median)", product=med(rho_prod), independent=med(rho_auto),
             difference=med(rho_prod) - med(rho_auto),
             note=f"product: closed-form gradient; independent: torch autograd; {iqr(rho_auto)}"),
    ]
    return rows, {"lopardo_lime_pearson": med(r_direct), "lopardo_grad_attention_spearman": med(rho_auto)}


if __name__ == "__main__":
    import json
    import sys

    out_rows, figures = run(quick="--quick" in sys.argv)
    cell = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    for row in out_rows:
        print(f"{row['item']:<58} {cell(row['product']):>10} {cell(row['independent']):>10} "
              f"{cell(row['difference']):>10}  {row['note']}")
    print(json.dumps(figures))
