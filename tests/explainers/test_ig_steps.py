"""The one Integrated Gradients step-doubling loop (gradients.until_complete) on tabular IG.

Expected values were computed by the loop each IG had of its own before they shared one (commit
before "one IG step-doubling loop"), on the same inputs; the steps chosen and the attributions must
not move. A second check calls Captum directly with the final step count.
"""
import numpy as np
import pytest
import torch

from explainers.gradients import ClassLogOdds, integrated_gradients, until_complete

X = [1.0, -0.5, 2.0, 0.0, 0.3]

PINNED = {  # (n_steps, max_steps) -> (steps used, convergence delta, attributions) from the old loop
    (50, 400): (50, 5.960464477539063e-08,
                [-0.009826038032770157, -0.02497541531920433, 0.07245086133480072, -0.0, 0.04189341142773628]),
    (2, 64): (4, -0.0005601942539215088,
              [-0.00983790960162878, -0.02497752010822296, 0.07189767807722092, -0.0, 0.04190031439065933]),
    (1, 2): (2, 0.011643320322036743,
             [-0.009705843403935432, -0.025130636990070343, 0.0845378190279007, -0.0, 0.041484735906124115]),
}


@pytest.mark.parametrize("n_steps,max_steps", list(PINNED))
def test_tabular_ig_matches_the_old_loop(toy_transformer, n_steps, max_steps):
    torch.set_num_threads(1)
    e = integrated_gradients(ClassLogOdds(toy_transformer), X, np.zeros(5), feature_names=tuple("abcde"),
                             target="1", n_steps=n_steps, max_steps=max_steps)
    steps, delta, values = PINNED[(n_steps, max_steps)]
    assert e.params["n_steps"] == steps
    # float32 sums: another CPU's kernels move the last digits (seen: 1.4e-7 on this machine's), never more
    assert e.params["convergence_delta"] == pytest.approx(delta, abs=1e-6)
    np.testing.assert_allclose(e.values, values, rtol=0, atol=1e-6)


def test_tabular_ig_equals_captum_at_the_final_steps(toy_transformer):
    from captum.attr import IntegratedGradients

    f = ClassLogOdds(toy_transformer)
    e = integrated_gradients(f, X, np.zeros(5), feature_names=tuple("abcde"), target="1", n_steps=2, max_steps=64)
    xt = torch.tensor([X], dtype=torch.float32)
    attr, delta = IntegratedGradients(f).attribute(xt, baselines=torch.zeros(1, 5), n_steps=e.params["n_steps"],
                                                   method="gausslegendre", return_convergence_delta=True)
    np.testing.assert_array_equal(e.values, attr.detach().numpy()[0].astype(float))
    assert e.params["convergence_delta"] == float(delta[0])


def test_until_complete_doubles_until_the_gap_is_small_or_the_cap_is_hit():
    calls = []

    def attribute(n):  # delta halves with each doubling: 0.08, 0.04, 0.02, 0.01, ...
        calls.append(n)
        return torch.tensor([float(n)]), torch.tensor([0.08 * 4 / n])

    done = until_complete(attribute, 1.0, 4, 400)
    assert calls == [4, 8, 16, 32] and done.n_steps == 32
    assert done.delta == pytest.approx(0.01) and done.gap == pytest.approx(0.01)
    calls.clear()
    assert until_complete(attribute, 1.0, 4, 15).n_steps == 8 and calls == [4, 8]
    calls.clear()
    assert until_complete(attribute, 1.0, 4, 4).n_steps == 4 and calls == [4]
