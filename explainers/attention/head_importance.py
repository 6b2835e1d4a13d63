"""Head analysis over a dataset: roles, gradient importance, pruning curve.

One pass computes attention (for the roles of :mod:`explainers.attention.roles`), the model's
own predictions and the head importance of Michel, Levy, Neubig (2019,
arXiv 1905.10650); then the pruning curve masks the least important heads
and measures agreement with the unpruned predictions. The job reports
``progress(done, total)`` after every batch and stops with
:class:`AnalysisCancelled` as soon as ``cancel()`` returns True, so the app
can run it as a background callback.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import torch

from explainers.attention.roles import DEFAULT_RELATIONS, RoleAccumulator, rarest_position
from explainers.text._data import ConlluSentence
from explainers.text._model import TextClassifier, head_gates
from explainers.text._tokens import encode_batch, merge_attention
from explainers.text._types import HeadAnalysis, HeadImportance, PruningCurve

__all__ = ["AnalysisCancelled", "analyze_heads", "normalize_per_layer", "pruning_order",
           "DEFAULT_PRUNING_FRACTIONS"]

DEFAULT_PRUNING_FRACTIONS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
_WORD = re.compile(r"\w")


class AnalysisCancelled(RuntimeError):
    """Raised by :func:`analyze_heads` when its ``cancel`` callback returns True."""


def normalize_per_layer(raw: np.ndarray) -> np.ndarray:
    """Divide each layer's importance vector by its l2 norm (``run_bertology.py``).

    Parameters
    ----------
    raw : ndarray of shape (n_layers, n_heads)

    Returns
    -------
    ndarray of shape (n_layers, n_heads)
        A layer of zeros stays zero. Example: ``(3, 4) -> (0.6, 0.8)``.
    """
    raw = np.asarray(raw, dtype=float)
    norm = np.linalg.norm(raw, axis=-1, keepdims=True)
    return np.divide(raw, norm, out=np.zeros_like(raw), where=norm > 0)


def pruning_order(importance: np.ndarray) -> list[tuple[int, int]]:
    """Heads in the order Michel et al. (2019) prune them: least to most important; ties by (layer, head)."""
    flat = np.asarray(importance, dtype=float).ravel()
    order = np.lexsort((np.arange(flat.size), flat))
    n_heads = importance.shape[1]
    return [(int(i // n_heads), int(i % n_heads)) for i in order]


def _batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    order = np.argsort(lengths, kind="stable")
    return [order[i:i + batch_size].tolist() for i in range(0, len(order), batch_size)]


def _agreement(model, encoded, predictions, mask, check, tick) -> float:
    """Share of texts whose prediction with heads masked equals the unpruned one."""
    same = 0
    for batch, ids, attn_mask in encoded:
        check()
        with torch.no_grad(), head_gates(model, mask):
            same += int((model(ids, attn_mask)[0].argmax(-1).numpy() == predictions[batch]).sum())
        tick()
    return same / len(predictions)


def _masked_importance(model, encoded, predictions, mask, check, tick) -> np.ndarray:
    """Michel importance (mean |dL/dxi|) with some heads already masked."""
    raw = np.zeros(tuple(mask.shape))
    for batch, ids, attn_mask in encoded:
        check()
        gates = torch.ones((len(batch),) + tuple(mask.shape), requires_grad=True)
        with torch.enable_grad(), head_gates(model, gates * mask):
            logits = model(ids, attn_mask)[0]
            target = torch.as_tensor(predictions[batch])
            torch.nn.functional.cross_entropy(logits, target, reduction="sum").backward()
        raw += gates.grad.abs().sum(0).numpy()
        tick()
    return raw / len(predictions)


def analyze_heads(
    model: TextClassifier,
    texts: Sequence | None = None,
    trees: Sequence[ConlluSentence] | None = None,
    *,
    relations: Sequence[str] = DEFAULT_RELATIONS,
    word_level: bool = True,
    batch_size: int = 32,
    importance: bool = True,
    pruning_fractions: Sequence[float] = DEFAULT_PRUNING_FRACTIONS,
    pruning_orders: Sequence[str] = ("importance",),
    random_seeds: Sequence[int] = (),
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    **role_kwargs,
) -> HeadAnalysis:
    """Voita-style head roles, Michel head importance and a pruning curve.

    Parameters
    ----------
    model : TextClassifier
    texts : sequence of str or of word lists, optional
        The evaluation texts (word lists are fed as pre-split words).
    trees : sequence of ConlluSentence, optional
        Gold dependency trees (word forms are the input; gold heads give
        the syntactic roles). Exactly one of ``texts`` and ``trees``.
    relations : sequence of str, default=("nsubj", "obj", "amod", "advmod")
    word_level : bool, default=True
        Also compute the roles at word level (pieces merged), returned beside as
        ``word_roles``; same eligible-query denominators.
    batch_size : int, default=32
        Texts are batched by length to limit padding (padding never enters
        a statistic: each text's own tokens are sliced out).
    importance : bool, default=True
        Compute head importance: ``E_x |dL/dxi_h|`` with L the cross-entropy
        against the model's own prediction, per-text gates, then l2 per layer.
    pruning_fractions : sequence of float, default=0.0, 0.1, ..., 0.9
        Shares of all heads masked, least important first; empty to skip.
        Requires ``importance``. Agreement at 0 heads masked is 1 by
        definition and not recomputed.
    pruning_orders : sequence of {"importance", "iterative"}, default=("importance",)
        ``importance``: one-shot order from the importance of the unpruned
        model; ``iterative``: before each step importance is recomputed with
        the current mask and the least important *remaining* heads are masked
        (``run_bertology.py`` style; one extra gradient pass per step).
    random_seeds : sequence of int, default=()
        Also a random-order curve per seed (baseline).
    progress : callable(done, total), optional
        Called after every batch of every pass.
    cancel : callable() -> bool, optional
        Polled before every batch.
    **role_kwargs
        Thresholds for :class:`RoleAccumulator`.

    Returns
    -------
    HeadAnalysis
        ``roles`` at token level (the level the model works on), special tokens excluded as
        queries and as targets, not renormalised; positional shares over eligible queries
        (those with a token at the offset). ``word_roles`` the same with pieces merged
        (docs/methods.md, "Attention"), or None.

    Raises
    ------
    ValueError
        If neither or both of ``texts`` and ``trees`` are given, or no text.
    AnalysisCancelled
        When ``cancel()`` returns True.

    References
    ----------
    Voita et al. 2019, arXiv 1905.09418 (roles, [P] thresholds);
    Michel, Levy, Neubig 2019, arXiv 1905.10650 (importance, pruning).
    """
    t0 = time.perf_counter()
    if (texts is None) == (trees is None):
        raise ValueError("give exactly one of texts and trees")
    split = trees is not None or (len(texts) and not isinstance(texts[0], str))
    inputs = [list(t.words) for t in trees] if trees is not None else list(texts)
    if not inputs:
        raise ValueError("no text given")
    tok = model.tokenizer
    counts = Counter(w.lower() for words in inputs for w in (words if split else _split_words(tok, words)))
    lengths = [len(tok(x, is_split_into_words=split, truncation=True,
                       max_length=model.max_length)["input_ids"]) for x in inputs]
    batches = _batches(lengths, batch_size)
    fractions = list(pruning_fractions) if importance else []
    total, done = _n_passes(model, fractions, pruning_orders, random_seeds) * len(batches), 0
    L, H = model.n_layers, model.n_heads
    acc = RoleAccumulator(L, H, relations=relations, level="token", **role_kwargs)
    acc_word = RoleAccumulator(L, H, relations=relations, level="word", **role_kwargs) if word_level else None
    raw_importance = np.zeros((L, H))
    predictions = np.zeros(len(inputs), dtype=int)
    encoded = []

    def tick():
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    def check():
        if cancel is not None and cancel():
            raise AnalysisCancelled(f"cancelled after {done} of {total} batches")

    for batch in batches:
        check()
        encs, ids, mask = encode_batch(tok, [inputs[i] for i in batch], model.max_length, split)
        encoded.append((batch, ids, mask))
        gates = torch.ones((len(batch), L, H), requires_grad=importance)
        with torch.set_grad_enabled(importance), head_gates(model, gates):
            logits, atts = model(ids, mask, output_attentions=True)
            pred = logits.argmax(-1).detach()
            if importance:
                loss = torch.nn.functional.cross_entropy(logits, pred, reduction="sum")
                loss.backward()
                raw_importance += gates.grad.abs().sum(0).numpy()
        predictions[batch] = pred.numpy()
        att = torch.stack([a.detach() for a in atts], 1).double().numpy()  # (B, L, H, T, T)
        for b, i in enumerate(batch):
            _add_roles(acc, acc_word, att[b], encs[b], trees[i] if trees is not None else None, counts)
        tick()
    roles = acc.finalize()
    word_roles = acc_word.finalize() if acc_word is not None else None
    imp, curves = None, []
    if importance:
        raw = raw_importance / len(inputs)
        imp = HeadImportance(raw=raw, normalized=normalize_per_layer(raw), n_texts=len(inputs),
                             loss="cross-entropy against the model's own predicted label")
        curves = _pruning_curves(model, imp, fractions, pruning_orders, random_seeds, encoded, predictions,
                                 check, tick)
    src = (f"{model.name}; {len(inputs)} texts; roles at token level ([CLS]/[SEP] excluded)"
           + (" and at word level (pieces merged)" if word_level else "")
           + f", positional shares over eligible queries; relations {', '.join(relations)}")
    return HeadAnalysis(roles=roles, importance=imp, pruning=tuple(curves), n_texts=len(inputs),
                        seconds=time.perf_counter() - t0, source=src, word_roles=word_roles)


def _n_passes(model, fractions, pruning_orders, random_seeds) -> int:
    """Passes over the texts :func:`analyze_heads` makes (for its progress): the first, one per order and pruned
    fraction, and one more per fraction when importance is recomputed (``iterative``).

    Raises
    ------
    ValueError
        If an order is neither ``importance`` nor ``iterative``.
    """
    bad = set(pruning_orders) - {"importance", "iterative"}
    if bad:
        raise ValueError(f"pruning_orders must be 'importance' or 'iterative', got {sorted(bad)}")
    n_eval = sum(1 for f in fractions if round(f * model.n_layers * model.n_heads) > 0)
    n_passes = 1 + n_eval * (len(pruning_orders) + len(random_seeds))
    return n_passes + n_eval * ("iterative" in pruning_orders)


def _add_roles(acc, acc_word, att: np.ndarray, e, tree: ConlluSentence | None, counts: Counter) -> None:
    """Add one text's attention ``att`` (layers, heads, padded tokens, padded tokens) to the token-level role
    accumulator ``acc`` and, when given, to the word-level ``acc_word``; ``e`` is the text's encoding, ``tree``
    its gold dependency tree (None: plain text, candidates are the words with a letter or digit)."""
    n = e.n_tokens
    tokens = att[:, :, :n, :n]
    if tree is not None:
        cand = [u != "PUNCT" for u in tree.upos[:len(e.words)]]
        arcs = dict(heads=tree.heads[:len(e.words)], deprels=tree.deprels[:len(e.words)])
    else:
        cand = [bool(_WORD.search(x)) for x in e.words]
        arcs = {}
    rare = rarest_position(e.words, counts, cand)
    acc.add(tokens, e.content_mask, rare, word_index=e.word_index, **arcs)
    if acc_word is not None:
        acc_word.add(merge_attention(tokens, e.word_index, len(e.words)), rare_index=rare, **arcs)


def _pruning_curves(model, imp, fractions, pruning_orders, random_seeds, encoded, predictions, check,
                    tick) -> list:
    """:class:`PruningCurve` per order of :func:`analyze_heads` (``pruning_orders``, then a random order per
    seed): agreement with the unpruned predictions as ``fractions`` of the heads are masked."""
    L, H = model.n_layers, model.n_heads
    curves = []
    orders = [(name, pruning_order(imp.normalized) if name == "importance" else None)
              for name in pruning_orders]
    for seed in random_seeds:
        perm = np.random.default_rng(seed).permutation(L * H)
        orders.append((f"random(seed={seed})", [(int(k // H), int(k % H)) for k in perm]))
    for name, order in orders:
        pruned: list = [] if order is None else list(order)
        agreement, n_pruned = [], []
        mask = torch.ones((L, H))
        for f in sorted(fractions):
            k = int(round(f * L * H))
            if order is None and k > len(pruned):  # iterative: re-rank the remaining heads
                raw_k = _masked_importance(model, encoded, predictions, mask, check, tick)
                ranked = [h for h in pruning_order(normalize_per_layer(raw_k)) if h not in pruned]
                pruned += ranked[:k - len(pruned)]
            mask = torch.ones((L, H))
            for layer, head in pruned[:k]:
                mask[layer, head] = 0.0
            agreement.append(
                1.0 if k == 0 else _agreement(model, encoded, predictions, mask, check, tick))
            n_pruned.append(k)
        curves.append(PruningCurve(
            fraction_pruned=np.array(sorted(fractions), float), n_pruned=np.array(n_pruned),
            agreement=np.array(agreement), order="importance (one-shot)" if name == "importance"
            else "importance (iterative)" if name == "iterative" else name,
            pruned_heads=tuple(f"{a}.{b}" for a, b in pruned[:max(n_pruned, default=0)]),
            n_texts=imp.n_texts))
    return curves


def _split_words(tokenizer, text: str) -> list[str]:
    pre = tokenizer.backend_tokenizer.pre_tokenizer
    return [w for w, _ in pre.pre_tokenize_str(text)] if pre is not None else text.split()
