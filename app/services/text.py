"""Text page services (issue 5): the MiniLM sentiment classifier, one text's attention and attributions.

The model (all-MiniLM-L6-v2 with a zero-shot sentiment head, :func:`explainers.text.load_minilm_sentiment`)
loads lazily, warmed only after the server's first request. Fast views (attention, gradient x input and,
for texts of at most :data:`IG_SYNC_MAX_TOKENS` tokens, Integrated Gradients) are computed in the
request and memoized per text; the slow attributions (IG on longer texts, LIME, SHAP) run in a
background job (a forked process) that writes them to an on-disk cache shared by every process, so
the views can read them back by text.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import CandorError
from ._core import lazy, row_cache

MAX_CHARS = 20_000
IG_STEPS = 50
IG_SYNC_MAX_TOKENS = 64
"""IG with 50 steps takes about 2 s at 77 tokens on one core; longer texts get IG in the background job."""
LIME_SAMPLES = 1000
SHAP_MAX_EVALS = 500
N_LAYERS, N_HEADS = 6, 12
"""Shape of the bundled all-MiniLM-L6-v2 encoder (checked against the loaded model)."""
CACHE_VERSION = "text-v1"
TEXT_DIR = Path(os.environ.get("CANDOR_TEXT_DIR", Path(tempfile.gettempdir()) / "candor-text"))
"""Uploads and cached slow results; shared by every worker and background job of this machine."""

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

_loaded = None
_lock = threading.Lock()
_import_guard = threading.Lock()
"""Held while this module imports torch/transformers and loads the model. A fork (a background job
starting) waits for it, so a job never inherits a module import lock held by a parent thread
(see ``_fresh_locks_after_fork`` in ``_core``); at most 60 s, then the fork goes ahead."""
_guard_taken = threading.local()


def _before_fork() -> None:
    _guard_taken.value = _import_guard.acquire(timeout=60)


def _after_fork_in_parent() -> None:
    if getattr(_guard_taken, "value", False):
        _guard_taken.value = False
        _import_guard.release()


def _after_fork_in_child() -> None:
    global _import_guard
    _guard_taken.value = False
    _import_guard = threading.Lock()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)


def _load_model():
    global _loaded
    with _import_guard:
        import torch

        from explainers.text import load_minilm_sentiment

        torch.set_num_threads(1)
        model = load_minilm_sentiment()
    if (model.n_layers, model.n_heads) != (N_LAYERS, N_HEADS):
        raise CandorError(f"expected a {N_LAYERS} x {N_HEADS} encoder, got {model.n_layers} x {model.n_heads}")
    _loaded = model
    return model


text_model = lazy("text_model", _load_model, warm=True)


def job_model():
    """The model inside a background job (a forked process).

    Returns the parent's copy when it had finished loading before the fork, else loads one; it never
    waits on a lock that a parent thread may have held at fork time.

    Returns
    -------
    explainers.text.TextClassifier
    """
    return _loaded if _loaded is not None else _load_model()


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
    """

    attention: object
    probabilities: np.ndarray
    gxi: object
    ig: object
    seconds: dict

    @property
    def predicted_label(self) -> str:
        return self.attention.labels[self.attention.predicted]


@row_cache(maxsize=64)
def _text_view(text: str) -> TextView:
    from explainers.text import extract_attention, gradient_x_input, integrated_gradients

    model = text_model()
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
    return TextView(attn, probs, gxi, ig, seconds)


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
        If the text cannot be used (:func:`check_text`).
    """
    text = check_text(text)
    with _lock:  # concurrent callbacks on a new text compute it once
        return _text_view(text)


def aggregates(text, layer: int = -1) -> list[tuple[str, np.ndarray]]:
    """Per-word attention aggregates (METHODS §4.1, §4.5), display-normalised to sum to 1.

    Parameters
    ----------
    text : str
    layer : int, default=-1
        Layer of the CLS-row and mean-over-queries aggregates (rollout uses every layer).

    Returns
    -------
    list of (label, ndarray of shape (n_words,))
        Labels name the aggregate, layer and head aggregation.
    """
    from explainers.text import attention_scores

    attn = text_view(text).attention
    layer = int(layer) % N_LAYERS
    out = []
    for key, name in (("cls", f"attention: CLS row, layer {layer}, mean over heads"),
                      ("mean", f"attention: mean over queries, layer {layer}, mean over heads"),
                      ("rollout", "attention: rollout CLS row, all layers (Abnar & Zuidema)")):
        v = attention_scores(attn, key, layer=layer, head=None, head_agg="mean", level="word")
        out.append((name, v / v.sum() if v.sum() > 0 else v))
    return out


def _key(text: str, method: str) -> str:
    params = {"ig": f"steps={IG_STEPS}", "lime": f"samples={LIME_SAMPLES},seed=0",
              "shap": f"max_evals={SHAP_MAX_EVALS},seed=0"}[method]
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{CACHE_VERSION}|minilm-zero-shot|{method}|{params}|{digest}"


_cache_state: dict = {}


def result_cache():
    """The on-disk cache of slow results, under ``TEXT_DIR/results``.

    Returns
    -------
    diskcache.Cache
        One per process (re-opened after a fork), at most 256 MB.
    """
    import diskcache

    if _cache_state.get("pid") != os.getpid():
        folder = TEXT_DIR / "results"
        folder.mkdir(parents=True, exist_ok=True)
        _cache_state.update(pid=os.getpid(), cache=diskcache.Cache(str(folder), size_limit=2 ** 28))
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
    if method not in METHOD_NAMES:
        raise CandorError(f"unknown attribution method {method!r}; expected one of {', '.join(METHOD_NAMES)}")
    view = text_view(text)
    if method == "gxi":
        return view.gxi
    if method == "ig" and view.ig is not None:
        return view.ig
    return result_cache().get(_key(check_text(text), method))


def slow_methods(text, model=None) -> list[str]:
    """The slow attributions of this text: LIME, SHAP and, above :data:`IG_SYNC_MAX_TOKENS` tokens, IG."""
    text = check_text(text)
    model = model or text_model()
    n_tokens = len(model.tokenizer(text, truncation=True, max_length=model.max_length)["input_ids"])
    return (["ig"] if n_tokens > IG_SYNC_MAX_TOKENS else []) + ["lime", "shap"]


def run_slow_attributions(text, progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Compute the slow attributions of ``text`` (:func:`slow_methods`) and store them in :func:`result_cache`.

    Runs inside a background job (uses :func:`job_model`); cached results are not recomputed.

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
    model = job_model()
    slow = slow_methods(text, model)
    fns = {"ig": lambda: integrated_gradients(model, text, n_steps=IG_STEPS),
           "lime": lambda: lime_text(model, text, num_samples=LIME_SAMPLES, seed=0),
           "shap": lambda: shap_text(model, text, max_evals=SHAP_MAX_EVALS, seed=0)}
    cache, seconds = result_cache(), {}
    for i, method in enumerate(slow):
        if progress is not None:
            progress(i, len(slow), f"{METHOD_NAMES[method]} ({i + 1} of {len(slow)})")
        t0 = time.perf_counter()
        if _key(text, method) not in cache:
            cache.set(_key(text, method), fns[method]())
        seconds[method] = round(time.perf_counter() - t0, 2)
    if progress is not None:
        progress(len(slow), len(slow), "done")
    return {"methods": list(slow), "seconds": seconds}


def agreement(text, method: str, aggregate: str = "cls"):
    """Agreement of every head's attention with ``|attribution|`` (METHODS §4.3), at word level.

    Parameters
    ----------
    text : str
    method : {"ig", "gxi", "lime", "shap"}
    aggregate : {"cls", "mean"}, default="cls"

    Returns
    -------
    explainers.text.TextAgreementReport or None
        None when the attribution has not been computed yet.
    """
    from explainers.text import compare_attention_attribution

    expl = attribution(text, method)
    if expl is None:
        return None
    return compare_attention_attribution(text_view(text).attention, expl, aggregate=aggregate, level="word")
