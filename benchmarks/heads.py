"""Head analysis of all-MiniLM-L6-v2 on UD English-EWT dev (issue 5).

Run ``python -m benchmarks.heads [--n-sentences 1000] [--random-seeds 0 1] [--quick]`` (``--quick``: 8
sentences, for CI; its figures are not the measured ones).

Prints, per layer and head (0-based), at token level ([CLS]/[SEP] excluded as queries and
targets): confidence, argmax share at offsets -1/+1 over the *eligible* queries (those with a
token there), rare-word share, best dependency relation with its accuracy against the
positional baseline, gradient importance (Michel et al. 2019, l2-normalised per layer) and
roles (Voita et al. 2019 rules of docs/methods.md, "Head roles and head importance"), then the
word-level roles beside; then the pruning curve and the time taken. The last line is one JSON
object with ``sentence_attention_ig_s``, ``head_analysis_s``, ``n_sentences``, ``roles``
(token level: role -> heads), ``roles_word`` and ``positional_heads``.

Timing uses ``torch.set_num_threads(1)``: on the shared 2-core machine two
threads made single runs erratic (ENVIRONMENT-NOTES). The classifier is the
zero-shot sentiment head, so importance and pruning explain *its own*
predictions on EWT sentences (cross-entropy against its predicted label).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from explainers.attention import analyze_heads
from explainers.attention.extract import extract_attention
from explainers.text import integrated_gradients, load_minilm_sentiment, read_conllu

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud_english_ewt" / "en_ewt-ud-dev.conllu"


def _sentence_of_32_tokens(model, trees) -> list[str]:
    """First dev sentence whose encoding is exactly 32 tokens ([CLS] and [SEP] included)."""
    for t in trees:
        if len(model.tokenizer(list(t.words), is_split_into_words=True)["input_ids"]) == 32:
            return list(t.words)
    raise RuntimeError("no 32-token sentence found")


def time_sentence(model, words, repeats: int = 3) -> float:
    """Median seconds for attention + IG (50 steps) on one sentence, after a warm-up."""
    def run():
        extract_attention(model, words, is_split_into_words=True)
        integrated_gradients(model, words, n_steps=50, max_steps=50, is_split_into_words=True)

    run()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _fmt(x: float) -> str:
    return "  nan" if x != x else f"{x:5.2f}"


def print_table(res) -> None:
    r, imp, w = res.roles, res.importance, res.word_roles
    print(f"token level: p(-1) over {r.eligible_prev} eligible queries, p(+1) over {r.eligible_next} "
          f"(of {r.n_queries} tokens in {r.n_sentences} sentences)")
    print(f"{'head':>5} {'conf':>5} {'p(-1)':>5} {'p(+1)':>5} {'mode':>9} {'rare':>5} "
          f"{'best relation':>15} {'acc':>5} {'base':>5} {'imp':>5}  roles (token) | roles (word)")
    L, H = r.confidence.shape
    for layer in range(L):
        for head in range(H):
            mode = f"{int(r.modal_offset[layer, head]):+d}@{r.modal_share[layer, head]:.2f}"
            print(f"{layer}.{head:<3} {_fmt(r.confidence[layer, head])} {_fmt(r.share_prev[layer, head])} "
                  f"{_fmt(r.share_next[layer, head])} {mode:>9} {_fmt(r.rare_share[layer, head])} "
                  f"{r.syntactic_best[layer][head]:>15} {_fmt(r.syntactic_accuracy[layer, head])} "
                  f"{_fmt(r.syntactic_baseline[layer, head])} "
                  f"{_fmt(imp.normalized[layer, head]) if imp else '    -'}  "
                  f"{', '.join(r.labels[layer][head]) or '-'} | "
                  f"{(', '.join(w.labels[layer][head]) or '-') if w is not None else 'n/a'}")
    for c in res.pruning:
        pts = ", ".join(f"{f:.0%}:{a:.3f}" for f, a in zip(c.fraction_pruned, c.agreement))
        print(f"pruning curve ({c.order}; agreement with unpruned predictions): {pts}")


def roles_map(roles) -> dict:
    """Role label -> "layer.head" names having it (every syntactic relation a head clears)."""
    out: dict = {}
    for layer, row in enumerate(roles.labels):
        for head, labels in enumerate(row):
            for label in labels:
                out.setdefault(label, []).append(f"{layer}.{head}")
    return dict(sorted(out.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conllu", type=Path, default=DATA)
    ap.add_argument("--n-sentences", type=int, default=1000)
    ap.add_argument("--random-seeds", type=int, nargs="*", default=[])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="8 sentences, for CI (figures not asserted)")
    args = ap.parse_args(argv)
    if args.quick:
        args.n_sentences = 8
    torch.set_num_threads(args.threads)

    model = load_minilm_sentiment()
    trees = read_conllu(args.conllu, max_sentences=args.n_sentences)
    words = _sentence_of_32_tokens(model, read_conllu(args.conllu))
    sentence_s = time_sentence(model, words)
    print(f"attention + IG (50 steps), 32-token sentence: {sentence_s:.3f} s "
          f"(median of 3, {args.threads} thread(s))")

    last = [0.0]

    def progress(done, total):
        if time.perf_counter() - last[0] > 15 or done == total:
            last[0] = time.perf_counter()
            print(f"  head analysis: {done}/{total} batches", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    res = analyze_heads(model, trees=trees, random_seeds=tuple(args.random_seeds), progress=progress)
    head_s = time.perf_counter() - t0
    print(f"{res.source}; {res.roles.n_queries} query tokens")
    print_table(res)
    print(f"head analysis of {model.n_layers}x{model.n_heads} heads over {len(trees)} sentences: "
          f"{head_s:.1f} s (attention, roles, importance, pruning curve)")
    roles = roles_map(res.roles)
    print(json.dumps(dict(sentence_attention_ig_s=round(sentence_s, 3), head_analysis_s=round(head_s, 1),
                          n_sentences=len(trees), roles=roles, roles_word=roles_map(res.word_roles),
                          positional_heads=sorted({h for k, v in roles.items() if k.startswith("positional")
                                                   for h in v}))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
