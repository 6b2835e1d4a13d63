"""Text Integrated Gradients (LayerIG) on the shared step-doubling loop (explainers.gradients.until_complete).

Expected values were computed by the text module's own loop before it shared the tabular one, on the
same text; the steps chosen and the attributions must not move. A second check calls Captum directly
with the final step count.
"""
import warnings

import numpy as np
import pytest
import torch

from explainers.text import integrated_gradients
from explainers.text._attribution import _pad_baseline, _prepare, explained_output

TEXT = "A gripping, beautifully shot film."

PINNED = {  # keyword arguments -> (steps used, convergence delta, relative gap, word attributions)
    "default": ({}, 50, 1.049041748046875e-05, 3.2384687695320147e-06,
                [0.8777898550033569, 0.63670814037323, 0.32576873898506165, 1.163029432296753,
                 0.31435203552246094, 0.0022365450859069824, -0.08056113868951797]),
    "doubled": (dict(n_steps=2, max_steps=64), 16, 0.00024509429931640625, 7.566240670633889e-05,
                [0.8773903250694275, 0.6394937038421631, 0.3244202733039856, 1.1589871644973755,
                 0.3146423399448395, 0.005445443093776703, -0.08082091808319092]),
    "detached": (dict(n_steps=4, detach_attention=True), 4, -0.5809807777404785, 0.17935302459734792,
                 [0.4724951982498169, 0.6091903448104858, 0.022798985242843628, 0.754396378993988,
                  0.5927350521087646, 0.23232270777225494, -0.02560623735189438]),
}


@pytest.mark.parametrize("case", list(PINNED))
def test_text_ig_matches_the_old_loop(minilm, case):
    kwargs, steps, delta, gap, values = PINNED[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        e = integrated_gradients(minilm, TEXT, **kwargs)
    assert e.params["n_steps"] == steps
    # float32 through 6 transformer layers: another CPU's kernels move the last digits (seen: 9.5e-7), never more
    assert e.params["convergence_delta"] == pytest.approx(delta, abs=1e-5)
    assert e.params["relative_gap"] == pytest.approx(gap, abs=1e-5)
    np.testing.assert_allclose(e.values, values, rtol=0, atol=1e-5)


def test_text_ig_equals_captum_at_the_final_steps(minilm):
    from captum.attr import LayerIntegratedGradients

    e = integrated_gradients(minilm, TEXT, n_steps=2, max_steps=64)
    enc, ids, mask, target = _prepare(minilm, TEXT, None, False)

    def forward(input_ids, attention_mask):
        return explained_output(minilm(input_ids, attention_mask)[0], target, "log_odds")

    attr, delta = LayerIntegratedGradients(forward, minilm.word_embeddings).attribute(
        ids, baselines=_pad_baseline(minilm, enc), additional_forward_args=(mask,), n_steps=e.params["n_steps"],
        method="gausslegendre", return_convergence_delta=True)
    np.testing.assert_array_equal(e.params["token_values"], attr[0].sum(-1).detach().double().numpy())
    assert e.params["convergence_delta"] == float(delta.item())
    assert torch.is_tensor(attr)
