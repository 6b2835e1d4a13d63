"""Text LIME reports the held-out local R² that tabular LIME reports (docs/methods.md, "LIME").

Oracle: LIME 0.2.0.1's text sampler re-implemented in numpy with the same ``RandomState(seed + 1)``
calls (seed + repeats; number of removed words uniform in 1..d, then which ones), LIME's kernel
``sqrt(exp(-(100 (1 - sqrt(m/d)))^2 / 25^2))`` and the weighted R² written out by hand. The masked
strings come from lime's own ``IndexedString`` (the library, not Candor's code).
"""
import numpy as np
import pytest
import torch
from lime.lime_text import IndexedString

from explainers.text import lime_text

TEXT = "Terrible battery, great screen."


def test_lime_text_heldout_r2_matches_numpy(tiny_bert):
    n, seed = 200, 0
    e = lime_text(tiny_bert, TEXT, num_samples=n, seed=seed)
    words = list(e.feature_names)
    d, target = len(words), tiny_bert.labels.index(e.target)
    rs = np.random.RandomState(seed + e.params["repeats"])  # the fits use seed .. seed + repeats - 1
    Z = np.ones((n, d))
    for i, size in enumerate(rs.randint(1, d + 1, n - 1), start=1):
        Z[i, rs.choice(range(d), size, replace=False)] = 0
    indexed = IndexedString(TEXT, split_expression=lambda _s: words, bow=False,
                            mask_string=tiny_bert.tokenizer.pad_token)
    strings = [indexed.inverse_removing(np.flatnonzero(row == 0)) for row in Z]
    batch = tiny_bert.tokenizer(strings, padding=True, truncation=True, max_length=tiny_bert.max_length,
                                return_tensors="pt")
    with torch.no_grad():
        y = torch.softmax(tiny_bert(batch["input_ids"], batch["attention_mask"])[0], -1)[:, target].double().numpy()
    w = np.sqrt(np.exp(-(100 * (1 - np.sqrt(Z.sum(1) / d))) ** 2 / 25 ** 2))
    y_hat = e.base_value + Z @ e.values
    mean = np.sum(w * y) / np.sum(w)
    expected = 1 - np.sum(w * (y - y_hat) ** 2) / np.sum(w * (y - mean) ** 2)
    assert e.params["heldout_r2"] == pytest.approx(expected, abs=1e-6)
    assert e.params["heldout_r2"] != pytest.approx(e.params["score"], abs=1e-9)  # a second sample, not a copy
