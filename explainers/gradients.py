"""Gradient attributions for PyTorch models on tabular inputs.

Integrated Gradients (Sundararajan, Taly, Yan 2017, "Axiomatic Attribution for
Deep Networks", arXiv 1703.01365) through Captum, with the convergence delta
(completeness gap) checked as docs/methods.md, "Integrated Gradients" asks; and SHAP's
GradientExplainer (expected gradients; Lundberg & Lee 2017, arXiv 1705.07874).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import torch
from torch import nn

from .types import Explanation

__all__ = ["ClassProbability", "ClassLogOdds", "integrated_gradients", "gradient_shap"]


class ClassProbability(nn.Module):
    """Wrap a logits model so that it outputs P(class ``target_index``), shape (batch,).

    Parameters
    ----------
    model : nn.Module
        Maps (batch, n_features) to logits (batch, n_classes).
    target_index : int, default=1
    """

    def __init__(self, model: nn.Module, target_index: int = 1) -> None:
        super().__init__()
        self.model, self.target_index = model, target_index

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.model(x), dim=-1)[:, self.target_index]


class ClassLogOdds(nn.Module):
    """Wrap a logits model so that it outputs the log-odds of class ``target_index``, shape (batch,).

    ``log p_c - log(1 - p_c)``, computed stably as ``logit_c - logsumexp(other logits)``;
    for two classes this is ``logit_1 - logit_0``. Smoother than the probability
    along an Integrated Gradients path, so the quadrature converges in fewer steps.
    """

    def __init__(self, model: nn.Module, target_index: int = 1) -> None:
        super().__init__()
        self.model, self.target_index = model, target_index

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.model(x)
        others = torch.cat([logits[:, : self.target_index], logits[:, self.target_index + 1:]], dim=1)
        return logits[:, self.target_index] - torch.logsumexp(others, dim=1)


class Completed(NamedTuple):
    """What :func:`until_complete` settled on."""

    attributions: torch.Tensor
    n_steps: int
    delta: float
    gap: float


def until_complete(attribute: Callable[[int], tuple], change: float, n_steps: int, max_steps: int,
                   tolerance: float = 0.01) -> Completed:
    """The one Integrated Gradients step-doubling loop (tabular IG and text LayerIG both call it).

    Runs ``attribute(n_steps)``, then doubles the steps while the completeness gap
    ``|delta| / |f(x) - f(baseline)|`` exceeds ``tolerance`` and the doubled count stays within
    ``max_steps`` (docs/methods.md, "Integrated Gradients" [D]). Pass ``max_steps=n_steps`` for a single run.

    Parameters
    ----------
    attribute : callable
        ``attribute(n_steps) -> (attributions, delta)``, e.g. Captum's ``attribute(...,
        return_convergence_delta=True)``; ``delta`` holds one value (one input row).
    change : float
        ``f(x) - f(baseline)`` of the explained scalar; ``|change|`` below 1e-12 counts as 1e-12.
    n_steps, max_steps : int
    tolerance : float, default=0.01

    Returns
    -------
    Completed
        ``attributions`` of the last run, the ``n_steps`` it used, its ``delta``
        (``sum(attributions) - change``) and ``gap = |delta| / max(|change|, 1e-12)``.
    """
    scale = max(abs(change), 1e-12)
    steps = n_steps
    while True:
        attr, delta = attribute(steps)
        delta = float(torch.as_tensor(delta).reshape(-1)[0])
        if abs(delta) <= tolerance * scale or steps * 2 > max_steps:
            return Completed(attr, steps, delta, abs(delta) / scale)
        steps *= 2


def _tensor(a) -> torch.Tensor:
    return torch.as_tensor(np.asarray(a, dtype=np.float32)).reshape(1, -1)


def integrated_gradients(forward: nn.Module, x, baseline, *, feature_names, target: str,
                         output_space: str = "log_odds", n_steps: int = 50, method: str = "gausslegendre", max_steps: int = 400,
                         baseline_name: str = "training median") -> Explanation:
    """Integrated Gradients of a scalar-output model for one row.

    Parameters
    ----------
    forward : nn.Module
        Maps (batch, n_features) to (batch,), e.g. :class:`ClassLogOdds`.
    x, baseline : array-like of shape (n_features,)
    feature_names : sequence of str
    target : str
        Name of the explained class, for display.
    output_space : {"log_odds", "probability"}, default="log_odds"
        Units of ``forward``'s output, recorded on the result.
    n_steps : int, default=50
        Quadrature points; doubled (up to ``max_steps``) while the completeness
        gap exceeds 1 % of ``|f(x) - f(baseline)|`` (docs/methods.md, "Integrated Gradients" [D]).
    method : str, default="gausslegendre"
        Captum's quadrature rule.

    Returns
    -------
    Explanation
        ``base_value = f(baseline)``; ``params["convergence_delta"]`` is
        ``sum(IG) - (f(x) - f(baseline))`` and ``params["n_steps"]`` the steps used.
    """
    from captum.attr import IntegratedGradients

    xt, bt = _tensor(x), _tensor(baseline)
    with torch.no_grad():
        fx, fb = float(forward(xt)[0]), float(forward(bt)[0])
    ig = IntegratedGradients(forward)
    attr, steps, delta, _ = until_complete(
        lambda n: ig.attribute(xt, baselines=bt, n_steps=n, method=method, return_convergence_delta=True),
        fx - fb, n_steps, max_steps)
    return Explanation(
        method="integrated_gradients", feature_names=tuple(feature_names),
        values=attr.detach().numpy()[0].astype(float), base_value=fb, prediction=fx,
        feature_values=np.asarray(x, dtype=float), output_space=output_space, target=target,
        source=f"Captum Integrated Gradients, {steps} steps ({method}), baseline = {baseline_name}",
        params={"n_steps": steps, "method": method, "convergence_delta": delta, "baseline": baseline_name},
    )


def gradient_shap(forward: nn.Module, x, background, *, feature_names, target: str,
                  output_space: str = "log_odds", nsamples: int = 200, seed: int = 0) -> Explanation:
    """SHAP values of a differentiable model by expected gradients (``shap.GradientExplainer``).

    Parameters
    ----------
    forward : nn.Module
        Maps (batch, n_features) to (batch,).
    x : array-like of shape (n_features,)
    background : ndarray of shape (n_background, n_features)
    nsamples : int, default=200
    seed : int, default=0

    Returns
    -------
    Explanation
        ``base_value`` is the mean output over ``background``. Expected
        gradients are additive only in expectation, so ``additivity_gap`` is
        reported, not asserted (docs/methods.md, "SHAP").
    """
    import shap

    class _Column(nn.Module):
        def __init__(self, f):
            super().__init__()
            self.f = f

        def forward(self, z):
            return self.f(z).unsqueeze(-1)

    bg = torch.as_tensor(np.asarray(background, dtype=np.float32))
    explainer = shap.GradientExplainer(_Column(forward), bg)
    values = np.asarray(explainer.shap_values(_tensor(x), nsamples=nsamples, rseed=seed), dtype=float)
    with torch.no_grad():
        base = float(forward(bg).mean())
        fx = float(forward(_tensor(x))[0])
    return Explanation(
        method="shap", feature_names=tuple(feature_names), values=values.reshape(-1), base_value=base,
        prediction=fx, feature_values=np.asarray(x, dtype=float), output_space=output_space, target=target,
        source=f"SHAP {shap.__version__} GradientExplainer (expected gradients), {len(bg)} background rows, "
               f"{nsamples} samples (seed {seed})",
        params={"nsamples": nsamples, "seed": seed, "background_size": len(bg)},
    )
