"""Tokenisation record, truncation note and sub-word to word merging.

Merging follows Clark et al. (2019, arXiv 1906.04341) as specified in
docs/methods.md, "Attention": attention *to* a split word is the sum over its pieces,
attention *from* a split word the mean over its pieces, and an attribution of
a word is the sum over its pieces. Special tokens and padding never enter a
word score.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from explainers.text._types import TextEncoding

__all__ = ["MERGE_RULE", "encode_text", "encode_batch", "merge_token_scores", "merge_attention"]

MERGE_RULE = (
    "word pieces merged to words (Clark et al. 2019): attention to a word = sum over its pieces, "
    "attention from a word = mean over its pieces, attribution of a word = sum over its pieces; "
    "special tokens and padding excluded"
)


def _words_from_offsets(text: str, word_ids: list, offsets: list, tokens: list) -> list[str]:
    spans: dict[int, list[int]] = {}
    for wid, (a, b) in zip(word_ids, offsets):
        if wid is None:
            continue
        span = spans.setdefault(wid, [a, b])
        span[0], span[1] = min(span[0], a), max(span[1], b)
    return [text[spans[w][0]:spans[w][1]] for w in sorted(spans)]


def _truncation_note(tokenizer, text, is_split_into_words, full, kept, word_ids, tokens,
                     special, n_full, max_length) -> str:
    """Say where a text was cut: token index, kept words, first dropped word."""
    full_wids = [w for w in full.word_ids() if w is not None]
    if is_split_into_words:
        full_words = [str(w) for w in text]
    else:
        offsets = tokenizer(text, return_offsets_mapping=True, verbose=False)["offset_mapping"]
        full_words = _words_from_offsets(text, full.word_ids(), offsets, [])
    last_content = int(np.flatnonzero(~special)[-1]) if (~special).any() else 0
    note = (f"truncated to {len(word_ids)} of {n_full} tokens (model maximum {max_length}): "
            f"cut after token {last_content} '{tokens[last_content]}'; kept words 0-{len(kept) - 1} "
            f"of {len(set(full_wids))}")
    cut_inside = bool(kept) and full_wids.count(kept[-1]) > list(word_ids).count(kept[-1])
    if cut_inside:
        note += f"; word #{kept[-1]} '{full_words[kept[-1]]}' was cut inside (only its first pieces kept)"
    first_dropped = kept[-1] + 1 if kept else 0
    if first_dropped < len(full_words):
        note += f"; first dropped word #{first_dropped} '{full_words[first_dropped]}'"
    return note


def _encode_one(tokenizer, text, max_length: int, is_split_into_words: bool):
    kw = dict(is_split_into_words=is_split_into_words, add_special_tokens=True)
    full = tokenizer(text, truncation=False, verbose=False, **kw)
    n_full = len(full["input_ids"])
    enc = tokenizer(text, truncation=True, max_length=max_length,
                    return_offsets_mapping=not is_split_into_words, **kw)
    return enc, full, n_full


def encode_text(
    tokenizer,
    text: str | Sequence[str],
    max_length: int,
    is_split_into_words: bool = False,
) -> TextEncoding:
    """Tokenise one text for a model and record what was excluded or cut.

    Parameters
    ----------
    tokenizer : transformers fast tokenizer
        Must support ``word_ids()``.
    text : str, or sequence of str when ``is_split_into_words``
        The text, or its words (e.g. CoNLL-U word forms).
    max_length : int
        Maximum length in tokens, special tokens included.
    is_split_into_words : bool, default=False

    Returns
    -------
    TextEncoding
        ``truncation_note`` names the token index of the cut and the first
        dropped word when the text is longer than ``max_length``.

    Raises
    ------
    ValueError
        If the text is empty or the tokenizer is not a fast tokenizer.
    """
    if (isinstance(text, str) and not text.strip()) or (not isinstance(text, str) and not len(text)):
        raise ValueError("text is empty")
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{type(tokenizer).__name__} is not a fast tokenizer (word_ids() needed)")
    enc, full, n_full = _encode_one(tokenizer, text, max_length, is_split_into_words)
    ids = list(enc["input_ids"])
    word_ids = enc.word_ids()
    tokens = tokenizer.convert_ids_to_tokens(ids)
    special = np.array([w is None for w in word_ids])
    if is_split_into_words:
        all_words = [str(w) for w in text]
        kept = sorted({w for w in word_ids if w is not None})
        words = [all_words[w] for w in kept]
        source_text = " ".join(all_words)
    else:
        words = _words_from_offsets(text, word_ids, enc["offset_mapping"], tokens)
        kept = sorted({w for w in word_ids if w is not None})
        source_text = text
    remap = {w: i for i, w in enumerate(kept)}
    word_index = np.array([-1 if w is None else remap[w] for w in word_ids])
    truncated = n_full > len(ids)
    note = ""
    if truncated:
        note = _truncation_note(tokenizer, text, is_split_into_words, full, kept, word_ids,
                                tokens, special, n_full, max_length)
    return TextEncoding(
        text=source_text, tokens=tuple(tokens), input_ids=np.array(ids), word_index=word_index,
        words=tuple(words), special_mask=special, n_special=int(special.sum()), n_padding=0,
        truncated=truncated, n_tokens_before_truncation=n_full, max_length=max_length,
        truncation_note=note, merge_rule=MERGE_RULE)


def encode_batch(tokenizer, texts: Sequence, max_length: int, is_split_into_words: bool = False):
    """Encode several texts; pad them to one tensor.

    Returns
    -------
    encodings : list of TextEncoding
        ``n_padding`` is the number of pad tokens added to each text.
    input_ids, attention_mask : LongTensor of shape (n_texts, max_tokens)
    """
    encs = [encode_text(tokenizer, t, max_length, is_split_into_words) for t in texts]
    width = max(e.n_tokens for e in encs)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    ids = torch.full((len(encs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(encs), width), dtype=torch.long)
    out = []
    for i, e in enumerate(encs):
        ids[i, :e.n_tokens] = torch.tensor(np.array(e.input_ids))
        mask[i, :e.n_tokens] = 1
        out.append(_with_padding(e, width - e.n_tokens))
    return out, ids, mask


def _with_padding(enc: TextEncoding, n_padding: int) -> TextEncoding:
    from dataclasses import replace
    return replace(enc, n_padding=int(n_padding))


def merge_token_scores(values: np.ndarray, word_index: np.ndarray, n_words: int) -> np.ndarray:
    """Sum per-token values over each word's pieces; special tokens (-1) dropped.

    Parameters
    ----------
    values : ndarray of shape (..., n_tokens)
    word_index : ndarray of int, shape (n_tokens,)
        Word of each token, -1 for special tokens.
    n_words : int

    Returns
    -------
    ndarray of shape (..., n_words)
    """
    values = np.asarray(values, dtype=float)
    word_index = np.asarray(word_index)
    onehot = np.zeros((word_index.size, n_words))
    keep = word_index >= 0
    onehot[np.flatnonzero(keep), word_index[keep]] = 1.0
    return values @ onehot


def merge_attention(weights: np.ndarray, word_index: np.ndarray, n_words: int) -> np.ndarray:
    """Token-to-token attention to word-to-word attention (docs/methods.md, "Attention").

    Columns (keys) are summed over a word's pieces, rows (queries) averaged;
    special-token rows and columns are dropped and rows are *not*
    renormalised, so a row sums to the share of attention on content words.

    Parameters
    ----------
    weights : ndarray of shape (..., n_tokens, n_tokens)
    word_index : ndarray of int, shape (n_tokens,)
    n_words : int

    Returns
    -------
    ndarray of shape (..., n_words, n_words)
    """
    word_index = np.asarray(word_index)
    onehot = np.zeros((word_index.size, n_words))
    keep = word_index >= 0
    onehot[np.flatnonzero(keep), word_index[keep]] = 1.0
    counts = onehot.sum(0)
    to_words = np.asarray(weights, dtype=float) @ onehot
    return np.swapaxes(np.swapaxes(to_words, -1, -2) @ (onehot / np.maximum(counts, 1)), -1, -2)
