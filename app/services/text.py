"""Text page services (issues 5 and 7): the text classifier, one text's attention and attributions.

The model is the bundled all-MiniLM-L6-v2 with a zero-shot sentiment head, or the user's Hugging Face
classifier folder named by ``CANDOR_TEXT_MODEL`` (:mod:`app.services.text_loader`). It loads lazily,
when the Text page first asks for it (never warmed in advance); a folder that cannot be loaded gives a
:class:`~workspace.errors.CandorError` on the Text page (other pages are unaffected). Fast views (attention,
gradient x input and, for texts of at most :data:`IG_SYNC_MAX_TOKENS` tokens, Integrated Gradients) are
computed in the request and memoized per text; the slow attributions (IG on longer texts, LIME, SHAP)
run in a background job (a forked process) that writes them to an on-disk cache shared by every
process, keyed by the model's tag, so the views can read them back by text.
"""
from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from store.codec import explanation_from_json, explanation_to_json
from workspace.errors import CandorError
from workspace.json_cache import json_cache
from workspace.settings import current
from ._core import row_cache
from .text_loader import ModelInfo, current_model, job_loaded, model_info, text_model  # noqa: F401

MAX_CHARS = 20_000
IG_STEPS = 50
IG_SYNC_MAX_TOKENS = 64
"""IG with 50 steps takes about 2 s at 77 tokens on one core; longer texts get IG in the background job."""
LIME_SAMPLES = 250
"""Text LIME: first neighborhood per fit; 4 seeded fits, doubled within 30 s until the standard errors are small."""
SHAP_MAX_EVALS = 1000
"""Text SHAP: budget of model evaluations for the permutation estimate and its standard errors."""
CACHE_VERSION = "text-v2"
"""v2: LIME and SHAP results carry standard errors (v1 results had none and are not served)."""
TEXT_DIR: Path | None = None
"""Set only to point one process at another folder (tests); None means ``Settings.text_dir``."""


def text_dir() -> Path:
    """Uploads and cached slow results (``CANDOR_TEXT_DIR``); shared by every worker and job of this machine."""
    return TEXT_DIR or current().text_dir

EXAMPLES: tuple[tuple[str, str], ...] = (
    ("The film was a delightful surprise, with warm performances and a clever script.", "positive"),
    ("I waited forty minutes for cold soup and the waiter never apologised.", "negative"),
    ("The battery lasts all day and the screen is gorgeous.", "positive"),
    ("This update broke everything; the app now crashes every time I open it.", "negative"),
    ("Not bad at all, although the ending dragged on a little.", "positive"),
    ("The hotel room was small, noisy and smelled of smoke.", "negative"),
    ("Our guide was friendly, funny and incredibly knowledgeable.", "positive"),
    ("I would not recommend this course to anyone who wants to learn.", "negative"),
    ("Fast delivery, sturdy packaging, and the shoes fit perfectly.", "positive"),
    ("The plot was predictable and the dialogue felt wooden.", "negative"),
    ("She sings beautifully and the band was tight all night.", "positive"),
    ("What a waste of money and an afternoon.", "negative"),
)
"""Built-in example sentences with labels written by the Candor authors (not a benchmark)."""

METHOD_NAMES = {"ig": "Integrated Gradients", "gxi": "gradient x input", "lime": "LIME", "shap": "SHAP"}

_lock = threading.Lock()


def check_text(text) -> str:
    """The text to explain, or a :class:`CandorError` saying why it cannot be used.

    Parameters
    ----------
    text : str or None

    Returns
    -------
    str
        The text, stripped of surrounding whitespace.

    Raises
    ------
    CandorError
        If the text is empty or longer than :data:`MAX_CHARS` characters.
    """
    text = (text or "").strip()
    if not text:
        raise CandorError("type a sentence (or pick one from the examples) and press Analyze")
    if len(text) > MAX_CHARS:
        raise CandorError(f"the text has {len(text):,} characters; the limit is {MAX_CHARS:,}")
    return text


@dataclass(frozen=True)
class TextView:
    """What the fast views of one text need.

    Parameters
    ----------
    attention : explainers.text.TextAttention
    probabilities : ndarray of shape (n_classes,)
        Softmax of the model's logits.
    gxi : Explanation
        Gradient x input (log-odds of the predicted class).
    ig : Explanation or None
        Integrated Gradients, or None when the text is longer than :data:`IG_SYNC_MAX_TOKENS`
        (then it comes from the background job, :func:`attribution`).
    seconds : dict
        Wall time per step.
    info : ModelInfo
        The model that made them.
    """

    attention: object
    probabilities: np.ndarray
    gxi: object
    ig: object
    seconds: dict
    info: ModelInfo

    @property
    def predicted_label(self) -> str:
        return self.attention.labels[self.attention.predicted]


@row_cache(maxsize=64)
def _text_view(text: str, tag: str) -> TextView:
    from explainers.attention.extract import extract_attention
    from explainers.text import gradient_x_input, integrated_gradients

    loaded = current_model()  # ``tag`` only keys the memo: results of another model are never served
    model = loaded.model
    seconds = {}
    t0 = time.perf_counter()
    attn = extract_attention(model, text)
    seconds["attention"] = time.perf_counter() - t0
    target = attn.predicted
    t0 = time.perf_counter()
    gxi = gradient_x_input(model, text, target=target)
    seconds["gradient x input"] = time.perf_counter() - t0
    ig = None
    if attn.encoding.n_tokens <= IG_SYNC_MAX_TOKENS:
        t0 = time.perf_counter()
        ig = integrated_gradients(model, text, target=target, n_steps=IG_STEPS)
        seconds["integrated gradients"] = time.perf_counter() - t0
    z = attn.logits - attn.logits.max()
    probs = np.exp(z) / np.exp(z).sum()
    return TextView(attn, probs, gxi, ig, seconds, loaded.info)


def text_view(text) -> TextView:
    """Attention, prediction and the fast attributions of one text (memoized per text).

    Parameters
    ----------
    text : str

    Returns
    -------
    TextView

    Raises
    ------
    CandorError
        If the text cannot be used (:func:`check_text`) or the model cannot be loaded.
    """
    text = check_text(text)
    tag = model_info().tag
    with _lock:  # concurrent callbacks on a new text compute it once
        return _text_view(text, tag)


def aggregates(text, layer: int = -1) -> list[tuple[str, np.ndarray]]:
    """Per-word attention aggregates (docs/methods.md, "Attention"), display-normalised to sum to 1.

    Parameters
    ----------
    text : str
    layer : int or None, default=-1
        Layer of the CLS-row and mean-over-queries aggregates (rollout uses every layer); negative
        counts from the last layer, None means the last.

    Returns
    -------
    list of (label, ndarray of shape (n_words,))
        Labels name the aggregate, layer and head aggregation.
    """
    from explainers.attention.aggregates import attention_scores

    attn = text_view(text).attention
    layer = check_layer(attn.attention.weights.shape[0], -1 if layer is None else layer)
    out = []
    for key, name in (("cls", f"attention: CLS row, layer {layer}, mean over heads"),
                      ("mean", f"attention: mean over queries, layer {layer}, mean over heads"),
                      ("rollout", "attention: rollout CLS row, all layers (Abnar & Zuidema)")):
        v = attention_scores(attn, key, layer=layer, head=None, head_agg="mean", level="word")
        out.append((name, v / v.sum() if v.sum() > 0 else v))
    return out


def check_layer(n_layers: int, layer) -> int:
    """``layer`` as a 0-based index of a model with ``n_layers`` layers (negative counts from the end).

    Raises
    ------
    CandorError
        If there is no such layer (e.g. a layer chosen for another model).
    """
    layer = int(layer)
    if not -n_layers <= layer < n_layers:
        raise CandorError(f"layer {layer} does not exist; the model has {n_layers} layers (0 to {n_layers - 1})")
    return layer % n_layers


def _key(text: str, method: str, tag: str) -> str:
    params = {"ig": f"steps={IG_STEPS}", "lime": f"samples={LIME_SAMPLES},repeats=4,seed=0",
              "shap": f"max_evals={SHAP_MAX_EVALS},seed=0"}[method]
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{CACHE_VERSION}|{tag}|{method}|{params}|{digest}"


_cache_state: dict = {}


def result_cache():
    """The on-disk cache of the slow text results, under ``text_dir()/results-json``: JSON only.

    Slow attributions (:func:`store.codec.explanation_to_json`) and the head-analysis job's
    :class:`~app.services.text_data.HeadAnalysisView` (``to_dict``) are stored as JSON
    (:func:`workspace.json_cache.json_cache`): a row that is not JSON is never unpickled.

    Returns
    -------
    diskcache.Cache
        One per process (re-opened after a fork), at most 256 MB.
    """
    if _cache_state.get("pid") != os.getpid():
        _cache_state.update(pid=os.getpid(), cache=json_cache(text_dir() / "results-json", size_limit=2 ** 28))
    return _cache_state["cache"]


def attribution(text, method: str):
    """One attribution of ``text`` if it is available, else None.

    Parameters
    ----------
    text : str
    method : {"ig", "gxi", "lime", "shap"}
        ``gxi`` (and ``ig`` on short texts) are computed now; ``lime``, ``shap`` and ``ig`` on long
        texts come from :func:`run_slow_attributions` (None until it has run).

    Returns
    -------
    Explanation or None
    """
    if not isinstance(method, str) or method not in METHOD_NAMES:
        raise CandorError(f"unknown attribution method {str(method)[:40]!r}; expected one of {', '.join(METHOD_NAMES)}")
    view = text_view(text)
    if method == "gxi":
        return view.gxi
    if method == "ig" and view.ig is not None:
        return view.ig
    hit = result_cache().get(_key(check_text(text), method, view.info.tag))
    return None if hit is None else explanation_from_json(hit)


def slow_methods(text, model=None) -> list[str]:
    """The slow attributions of this text: LIME, SHAP and, above :data:`IG_SYNC_MAX_TOKENS` tokens, IG."""
    text = check_text(text)
    model = model or text_model()
    n_tokens = len(model.tokenizer(text, truncation=True, max_length=model.max_length)["input_ids"])
    return (["ig"] if n_tokens > IG_SYNC_MAX_TOKENS else []) + ["lime", "shap"]


def run_slow_attributions(text, progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Compute the slow attributions of ``text`` (:func:`slow_methods`) and store them in
    :func:`result_cache` (JSON).

    Runs inside a background job (uses :func:`job_loaded`); cached results are not recomputed.

    Parameters
    ----------
    text : str
    progress : callable(done, total, message), optional

    Returns
    -------
    dict
        ``{"methods": [...], "seconds": {method: s}}``; seconds are 0 for cached results.
    """
    from explainers.text import integrated_gradients, lime_text, shap_text

    text = check_text(text)
    loaded = job_loaded()
    model, tag = loaded.model, loaded.info.tag
    slow = slow_methods(text, model)
    fns = {"ig": lambda: integrated_gradients(model, text, n_steps=IG_STEPS),
           "lime": lambda: lime_text(model, text, num_samples=LIME_SAMPLES, seed=0),
           "shap": lambda: shap_text(model, text, max_evals=SHAP_MAX_EVALS, seed=0)}
    cache, seconds = result_cache(), {}
    for i, method in enumerate(slow):
        if progress is not None:
            progress(i, len(slow), f"{METHOD_NAMES[method]} ({i + 1} of {len(slow)})")
        t0 = time.perf_counter()
        if _key(text, method, tag) not in cache:
            cache.set(_key(text, method, tag), explanation_to_json(fns[method]()))
        seconds[method] = round(time.perf_counter() - t0, 2)
    if progress is not None:
        progress(len(slow), len(slow), "done")
    return {"methods": list(slow), "seconds": seconds}


def agreement(text, method: str, aggregate: str = "cls"):
    """Agreement of every head's attention with ``|attribution|`` (docs/methods.md, "Agreement"), at word level.

    Parameters
    ----------
    text : str
    method : {"ig", "gxi", "lime", "shap"}
    aggregate : {"cls", "mean"}, default="cls"

    Returns
    -------
    explainers.text.TextAgreementReport or None
        None when the attribution has not been computed yet. Reports are memoized per text, method,
        attention reading and model (a change of metric only draws another of its arrays).
    """
    if aggregate not in ("cls", "mean"):  # a request's value: said in the panel, never a traceback
        raise CandorError(f"unknown attention reading {str(aggregate)[:40]!r}; expected cls or mean")
    if attribution(text, method) is None:
        return None
    return _agreement(check_text(text), method, aggregate, model_info().tag)


@row_cache(maxsize=64)
def _agreement(text: str, method: str, aggregate: str, tag: str):
    from explainers.attention.agreement import compare_attention_attribution

    # ``tag`` only keys the memo; an attribution, once computed, is fixed by the text, method and model
    return compare_attention_attribution(text_view(text).attention, attribution(text, method), aggregate=aggregate,
                                         level="word")
