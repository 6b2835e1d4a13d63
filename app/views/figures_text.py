"""Figures of the Text page: :mod:`explainers.text` results to ``go.Figure``. Imports plotly, never dash.

Layer, head and token are 0-based and in that axis order (STYLE B4). Attention uses a sequential
scale, signed attributions the red (toward the explained class) / blue scale of :mod:`app.views.figures`.
Words, tokens, class labels and dependency relations are user text: escaped with :func:`app.views.figures.esc`.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explainers.numbers import number_text
from app.views.figures import (CATEGORICAL, DIVERGING, GREY, ROUGH, ROUGH_NOTE, TEMPLATE, esc, esc_all, plain,
                         rank_unresolved, standard_errors, wrap_note)

_BASE = dict(template=TEMPLATE, font=dict(size=12))


def _layout(fig: go.Figure, title: str, margin: dict | None = None, **kw) -> go.Figure:
    fig.update_layout(title=dict(text=title, x=0.01, font=dict(size=14)),
                      margin=margin or dict(l=10, r=10, t=max(40, 34 + 15 * title.count("<br>")), b=40), **_BASE, **kw)
    return fig

MODEL_VIEW_MAX_TOKENS = 40
_METHOD_NAMES = {"integrated_gradients": "Integrated Gradients", "gradient_x_input": "gradient x input",
                 "lime": "LIME", "shap": "SHAP"}
METRICS = {"spearman": "Spearman ρ", "kendall": "Kendall τ-b", "top_k": "top-k overlap"}


def _ticks(tokens) -> list[str]:
    """Unique tick labels (plotly merges equal category names), escaped: ``"3 good"``."""
    return [f"{i} {esc(t)}" for i, t in enumerate(tokens)]


def prediction_bar(labels, probabilities, source: str) -> go.Figure:
    """Class probabilities (softmax of the logits), predicted class highlighted."""
    probs = np.asarray(probabilities, float)
    colours = [CATEGORICAL[0] if i == int(np.argmax(probs)) else GREY for i in range(probs.size)]
    fig = go.Figure(go.Bar(x=probs, y=esc_all(labels), orientation="h", marker_color=colours,
                           text=[f"{p:.3f}" for p in probs], textposition="auto", textangle=0,
                           hovertemplate="P(%{y}) = %{x:.4f}<extra></extra>"))
    fig.update_xaxes(range=[0, 1])
    return _layout(fig, f"Prediction: P(class) = softmax of the logits ({esc(source)})", height=200,
                   xaxis_title="probability")


def head_view(tokens, layer_weights: np.ndarray, layer: int, heads) -> go.Figure:
    """Token-to-token attention of one layer: one heatmap per chosen head (more than 4: their mean).

    Parameters
    ----------
    tokens : sequence of str, length n_tokens
    layer_weights : ndarray of shape (n_heads, n_tokens, n_tokens)
        Rows are queries, columns keys; special tokens included.
    layer : int
    heads : sequence of int
    """
    heads = sorted(int(h) for h in heads) or [0]
    ticks = _ticks(tokens)
    if len(heads) > 4:
        panels = [(f"mean over heads {', '.join(map(str, heads))}", layer_weights[heads].mean(0))]
    else:
        panels = [(f"head {h}", layer_weights[h]) for h in heads]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[p[0] for p in panels], shared_yaxes=True,
                        horizontal_spacing=0.03)
    for i, (name, w) in enumerate(panels):
        fig.add_trace(go.Heatmap(z=w, x=ticks, y=ticks, coloraxis="coloraxis",
                                 hovertemplate=f"{name}<br>query %{{y}} → key %{{x}}: %{{z:.3f}}<extra></extra>"),
                      row=1, col=i + 1)
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=9))
    fig.update_xaxes(tickangle=60, tickfont=dict(size=9))
    fig.update_layout(coloraxis=dict(colorscale="Viridis", cmin=0, cmax=1, colorbar=dict(title="attention")))
    side = min(700, 220 + 14 * len(ticks))
    return _layout(fig, f"Head view: layer {layer}, token-to-token attention (rows: queries, columns: keys; "
                        "softmax weights, rows sum to 1)", height=side)


def model_view(tokens, weights: np.ndarray, max_tokens: int = MODEL_VIEW_MAX_TOKENS) -> go.Figure:
    """All layers x heads as small token-to-token heatmaps, drawn as one tiled trace.

    Parameters
    ----------
    tokens : sequence of str
    weights : ndarray of shape (n_layers, n_heads, n_tokens, n_tokens)
    max_tokens : int, default=40
        Longer texts show their first ``max_tokens`` tokens (stated in the title).
    """
    L, H, T, _ = weights.shape
    t = min(T, max_tokens)
    gap = 1
    # float32: Plotly sends arrays as typed binary, and attention shown to 3 decimals needs no float64 (it
    # halves the largest part of a new text's response, issue 14)
    big = np.full((L * (t + gap), H * (t + gap)), np.nan, dtype=np.float32)
    for layer in range(L):
        for head in range(H):
            r, c = layer * (t + gap), head * (t + gap)
            big[r:r + t, c:c + t] = weights[layer, head, :t, :t]
    fig = go.Figure(go.Heatmap(z=big, colorscale="Viridis", zmin=0, zmax=1, colorbar=dict(title="attention"),
                               hovertemplate="%{z:.3f}<extra></extra>", hoverongaps=False))
    centre = (t - 1) / 2
    fig.update_xaxes(tickvals=[h * (t + gap) + centre for h in range(H)], ticktext=[f"head {h}" for h in range(H)],
                     showgrid=False, zeroline=False)
    fig.update_yaxes(tickvals=[l * (t + gap) + centre for l in range(L)], ticktext=[f"layer {l}" for l in range(L)],
                     autorange="reversed", showgrid=False, zeroline=False)
    shown = f"all {T} tokens" if t == T else f"first {t} of {T} tokens"
    return _layout(fig, f"Model view: {L} layers x {H} heads, token-to-token attention ({shown}, "
                        "special tokens included)", height=110 * L + 80)


def word_strips(words, rows, *, text_format: str, hover_format: str) -> go.Figure:
    """One heatmap strip per score vector, aligned by word, each with its own colour range.

    Parameters
    ----------
    words : sequence of str
    rows : list of (label, ndarray of shape (n_words,), signed) or (label, values, signed, standard_error)
        ``signed`` strips use a symmetric red-blue scale, the others 0 to max on Viridis. A
        ``standard_error`` (ndarray of shape (n_words,), or None) is shown in the hover as ``± se``,
        and a word whose error exceeds the gap to its ranked neighbour (:func:`app.views.figures.rank_unresolved`)
        gets :data:`app.views.figures.ROUGH` before its number.
    text_format, hover_format : str
        Python format specs of the numbers printed in cells and in the hover.
    """
    fig = make_subplots(rows=len(rows), cols=1, shared_xaxes=True, vertical_spacing=0.02)
    ticks = _ticks(words)
    for i, (name, v, signed, *rest) in enumerate(rows):
        v = np.asarray(v, float)
        se = np.asarray(rest[0], float) if rest and rest[0] is not None else None
        bound = float(np.max(np.abs(v))) or 1.0
        kw = dict(zmin=-bound, zmax=bound, colorscale=DIVERGING) if signed else dict(zmin=0, zmax=bound,
                                                                                   colorscale="Viridis")
        flags = rank_unresolved(v, se)
        text = [(ROUGH if f else "") + number_text(x, text_format) for x, f in zip(v, flags)]
        err = [f" ± {number_text(s, hover_format)}" if s == s else "" for s in se] if se is not None else [""] * v.size
        err = [number_text(x, hover_format) + e for x, e in zip(v, err)]  # the hover's number, never 1.2e+03
        fig.add_trace(go.Heatmap(z=[v], x=ticks, y=[esc(name)], text=[text], customdata=[err],
                                 texttemplate="%{text}", showscale=False,
                                 hovertemplate="%{y}<br>%{x}: %{customdata}<extra></extra>",
                                 **kw),
                      row=i + 1, col=1)
    fig.update_xaxes(tickangle=45)
    return fig


def attribution_row(expl) -> tuple:
    """``(label, values, standard_error or None)`` of one text attribution, for :func:`aggregates_view`."""
    return attribution_label(expl), expl.values, standard_errors(expl)


def aggregates_view(words, attention_rows, attribution_rows) -> go.Figure:
    """Per-word attention aggregates stacked above per-word attributions, aligned by word.

    Parameters
    ----------
    words : sequence of str
    attention_rows : list of (label, ndarray of shape (n_words,))
        Display-normalised attention (sums to 1).
    attribution_rows : list of (label, ndarray of shape (n_words,)) or (label, values, standard_error)
        Signed attributions; each strip has its own symmetric colour range; standard errors (or None)
        go to the hover and the ≈ flag (:func:`attribution_row` builds a row from an Explanation).
    """
    rows = [(n, v, False) for n, v in attention_rows] + [(r[0], r[1], True, *r[2:]) for r in attribution_rows]
    fig = word_strips(words, rows, text_format=".2f", hover_format=".4f")
    fig.update_yaxes(tickfont=dict(size=10))
    rough = any(rank_unresolved(r[1], r[2]).any() for r in attribution_rows if len(r) > 2 and r[2] is not None)
    note = f"<br><sup>{ROUGH_NOTE}; hover for ± 1 standard error</sup>" if rough else ""
    return _layout(fig, "Per-word attention aggregates (sum to 1) and attributions (signed), word pieces merged"
                   + note, height=60 * len(rows) + 190 + (20 if note else 0), margin=dict(l=330, r=10, t=60, b=100))


def agreement_heatmap(report, metric: str) -> go.Figure:
    """Layers x heads agreement between each head's attention and ``|attribution|``.

    Parameters
    ----------
    report : explainers.text.TextAgreementReport
    metric : {"spearman", "kendall", "top_k"}
    """
    z = {"spearman": report.per_head, "kendall": report.kendall, "top_k": report.top_k_overlap}[metric]
    name = METRICS[metric] + (f" (k = {report.k})" if metric == "top_k" else "")
    lo = 0 if metric == "top_k" else -1
    L, H = z.shape
    fig = go.Figure(go.Heatmap(z=z, x=[f"head {h}" for h in range(H)], y=[f"layer {l}" for l in range(L)],
                               zmin=lo, zmax=1, colorscale=DIVERGING if lo < 0 else "Viridis",
                               text=np.where(np.isnan(z), "n/a", np.round(z, 2).astype(str)), texttemplate="%{text}",
                               colorbar=dict(title=METRICS[metric].split()[0]),
                               hovertemplate=f"%{{y}}, %{{x}}: {name} = %{{z:.3f}}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    method = _METHOD_NAMES.get(report.attribution_method, report.attribution_method)
    return _layout(fig, f"{name}: {esc(report.query)} attention of each head vs |{esc(method)}| "
                        f"over {report.n_items} words", height=330)


def _short(roles) -> str:
    """A compact cell label: ``-1``/``+1`` (positional), ``self``, ``syn×k`` (k relations), ``rare``.

    One item per line; the full list (relation names are the file's text, escaped) is in the hover.
    """
    out, n_syn = [], 0
    for r in roles:
        if r.startswith("positional(") and r.endswith(")"):
            out.append(esc(r[len("positional("):-1]).replace("-", "−"))
        elif r.startswith("syntactic("):
            n_syn += 1
        elif r == "rare_word":
            out.append("rare")
        else:
            out.append(esc(r))
    if n_syn:
        out.insert(len(out) - ("rare" in out), f"syn×{n_syn}")
    return "<br>".join(out)


def _pct(p, se, n) -> str:
    """``"99.1 % ± 0.1 (n = 16,453)"``; the standard error is clustered by sentence."""
    if p is None or p != p:
        return f"n/a (n = {int(n):,})"
    err = "" if se is None or se != se else f" ± {100 * se:.1f}"
    return f"{100 * p:.1f} %{err} (n = {int(n):,})"


def _roles_hover(roles, l: int, h: int) -> str:
    """Everything behind one cell: shares with their denominators, every relation, every role."""
    se = lambda name: None if getattr(roles, name, None) is None else getattr(roles, name)[l, h]  # noqa: E731
    eligible = getattr(roles, "modal_eligible", None)
    lines = [f"layer {l}, head {h} ({esc(getattr(roles, 'level', 'word'))} level)",
             f"confidence {roles.confidence[l, h]:.3f}",
             f"modal offset {int(roles.modal_offset[l, h]):+d}: "
             + _pct(roles.modal_share[l, h], se("modal_se"), eligible[l, h] if eligible is not None else roles.n_queries),
             "offset −1: " + _pct(roles.share_prev[l, h], se("share_prev_se"), getattr(roles, "eligible_prev", 0)),
             "offset +1: " + _pct(roles.share_next[l, h], se("share_next_se"), getattr(roles, "eligible_next", 0)),
             f"rare word: {roles.rare_share[l, h]:.0%}"]
    relations = getattr(roles, "syntactic", None) or {}
    margin = getattr(roles, "params", {}).get("syntactic_margin", 0.10)
    rows = sorted(((s["accuracy"][l, h] - s["baseline"], name, s) for name, s in relations.items()),
                  key=lambda t: -t[0])
    cleared = [f"  {esc(name)}: accuracy {s['accuracy'][l, h]:.2f} vs baseline {s['baseline']:.2f} "
               f"({s['n_arcs']} arcs)" for gain, name, s in rows if gain >= margin - 1e-12]
    if cleared:
        lines += [f"relations clearing baseline + {margin:.2f}:"] + cleared
    elif roles.syntactic_best[l][h]:
        lines.append(f"best relation {esc(roles.syntactic_best[l][h])}: accuracy "
                     f"{roles.syntactic_accuracy[l, h]:.2f} vs baseline {roles.syntactic_baseline[l, h]:.2f} "
                     "(below the margin)")
    lines.append(f"roles: {esc(', '.join(roles.labels[l][h])) or 'none'}")
    return "<br>".join(lines)


def _level_title(roles) -> str:
    level = getattr(roles, "level", "word")
    what = "tokens, [CLS]/[SEP] excluded" if level == "token" else "words, pieces merged"
    # two panels side by side: each title wrapped to its half, so they never run into each other
    return wrap_note(f"{esc(level)} level ({what}): ±1 shares over queries that have the neighbour, "
                     f"n = {getattr(roles, 'eligible_prev', 0):,} of {roles.n_queries:,}", 55)


def roles_view(roles, word_roles=None) -> go.Figure:
    """Head confidence (colour) with a compact label of each head's roles in its cell (Voita et al. 2019).

    The hover lists every relation that clears the margin and the shares with their eligible-query
    denominators and sentence-clustered standard errors; the title says the level.

    Parameters
    ----------
    roles : explainers.text.HeadRoles
        Token level, as :func:`explainers.attention.analyze_heads` returns it.
    word_roles : explainers.text.HeadRoles, optional
        The word-level roles, drawn beside.
    """
    panels = [roles] + ([word_roles] if word_roles is not None else [])
    fig = make_subplots(rows=1, cols=len(panels), horizontal_spacing=0.04,
                        subplot_titles=[_level_title(r) for r in panels])
    for i, r in enumerate(panels):
        conf = np.asarray(r.confidence)
        L, H = conf.shape
        text = [[_short(r.labels[l][h]) for h in range(H)] for l in range(L)]
        hover = [[_roles_hover(r, l, h) for h in range(H)] for l in range(L)]
        fig.add_trace(go.Heatmap(z=conf, x=[f"head {h}" for h in range(H)], y=[f"layer {l}" for l in range(L)],
                                 zmin=0, zmax=1, colorscale="Blues", text=text, texttemplate="%{text}",
                                 textfont=dict(size=9), customdata=hover, hovertemplate="%{customdata}<extra></extra>",
                                 showscale=i == 0, colorbar=dict(title="confidence")), row=1, col=i + 1)
        fig.update_yaxes(autorange="reversed", showticklabels=i == 0, row=1, col=i + 1)
    fig.update_annotations(font=dict(size=11))
    return _layout(fig, "Head roles (−1/+1 positional, syn×k: k dependency relations, rare word) and "
                        "confidence (colour); hover for every relation", height=400,
                   margin=dict(l=10, r=10, t=95, b=40))


def importance_view(importance) -> go.Figure:
    """Michel et al. (2019) head importance, normalised per layer (l2)."""
    z = np.asarray(importance.normalized)
    L, H = z.shape
    fig = go.Figure(go.Heatmap(z=z, x=[f"head {h}" for h in range(H)], y=[f"layer {l}" for l in range(L)],
                               colorscale="Oranges", text=np.round(z, 2), texttemplate="%{text}",
                               colorbar=dict(title="importance"),
                               hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"Head importance E|∂L/∂ξ| (Michel et al.), l2-normalised per layer, {importance.n_texts} texts",
                   height=330)


def pruning_view(curves) -> go.Figure:
    """Agreement with the unpruned model as heads are masked, one line per order."""
    fig = go.Figure()
    for c in curves:
        random = c.order.startswith("random")
        fig.add_trace(go.Scatter(x=np.asarray(c.fraction_pruned) * 100, y=c.agreement, mode="lines+markers",
                                 name=c.order, line=dict(color=GREY if random else CATEGORICAL[0],
                                                         dash="dot" if random else None),
                                 customdata=c.n_pruned,
                                 hovertemplate="%{x:.0f}% pruned (%{customdata} heads): agreement %{y:.3f}<extra></extra>"))
    fig.update_yaxes(range=[0, 1.02])
    n = curves[0].n_texts if curves else 0
    return _layout(fig, f"Pruning curve: share of {n} texts whose label is unchanged", height=330,
                   xaxis_title="% of heads masked (least important first)", yaxis_title="agreement with unpruned",
                   legend=dict(orientation="h", y=-0.3))


def attribution_label(expl) -> str:
    """Which method made an attribution, what it explains and its quality figure, in one line."""
    p, target = expl.params, expl.target
    if expl.method == "integrated_gradients":
        return (f"Integrated Gradients (log-odds of {target}; {p['n_steps']} steps, completeness gap "
                f"{p['relative_gap']:.2%})")
    if expl.method == "gradient_x_input":
        return f"gradient x input (log-odds of {target})"
    se = standard_errors(expl)
    err = "" if se is None or not np.isfinite(se).any() else \
        f", largest standard error {plain(float(np.nanmax(se)))}" + ("" if p.get("converged", True) else " (not converged)")
    if expl.method == "lime":
        heldout = p.get("heldout_r2", float("nan"))
        fits = f"mean of {p['repeats']} fits of " if "repeats" in p else ""
        return (f"LIME (probability of {target}; {fits}{p['num_samples']} samples, local R² {p['score']:.2f} in-sample, "
                f"{heldout:.2f} held-out{err})")
    if expl.method == "shap":
        how = f"permutation, {p['orderings']} orderings" if "orderings" in p else f"Partition, {p['max_evals']} evals"
        return f"SHAP {how} (log-odds of {target}; additivity gap {expl.additivity_gap:.3f}{err})"
    return f"{expl.method} ({expl.output_space} of {target})"
