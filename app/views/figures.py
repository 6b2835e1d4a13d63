"""Turn :mod:`explainers` dataclasses into Plotly figures. Imports plotly, never dash.

Colour convention (one palette, colour-blind safe): attributions pushing toward the explained class are
dark red, against it dark blue, zero white (:data:`POS`, :data:`NEG`, :data:`DIVERGING`: ColorBrewer RdBu,
marked colour-blind safe by Brewer & Harrower); lines and methods use the Okabe-Ito colours
(:data:`CATEGORICAL`), which stay distinct under deuteranopia, protanopia and tritanopia; attention is the
sequential Viridis scale. Every figure also gets a text alternative (``layout.meta.alt``, read by
``assets/a11y.js`` into the figure's ``aria-label``).

Plotly draws a subset of HTML in every text it shows (``<br>``, ``<b>``, ``<sub>``, ``<span style>``,
``<a href>``). Every string that comes from the user (feature names, levels, class labels, rule text,
words, file names) goes through :func:`esc` where a figure is built, before our own markup is added
around it; user strings never go into a ``hovertemplate`` (``%{...}`` would be read as a variable).
"""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from explainers import Explanation, GlobalImportance
from explainers.metrics import top_k
from explainers.numbers import gap_text, plain  # the one formatter of numbers people read (re-exported)

from app.views.figure_labels import (FONT_FAMILY, _label_lines, _lines_of, alt_text, esc, esc_all,  # re-exported
                               label_margin, text_px, tick_label, tick_labels, unidentified_marks,  # noqa: F401
                               wrap_note)

POS, NEG, GREY = "#b2182b", "#2166ac", "#767676"
DIVERGING = [[0.0, "#2166ac"], [0.25, "#67a9cf"], [0.5, "#f7f7f7"], [0.75, "#ef8a62"], [1.0, "#b2182b"]]
"""Diverging scale of every signed attribution or correlation (blue negative, white 0, red positive)."""
CATEGORICAL = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"]
"""Okabe & Ito (2008) colours for lines and methods (yellow last: weak on white)."""
# A small template with the look of "plotly_white": assigning the full built-in template deep-copies
# definitions for every trace type on each figure (~25 ms a figure, measured on the Persuasive page).
pio.templates["candor"] = go.layout.Template(layout=dict(
    paper_bgcolor="white", plot_bgcolor="white", font=dict(color="#2a3f5f", family=FONT_FAMILY), hoverlabel=dict(align="left"),
    xaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8", automargin=True,
               ticks="", zerolinewidth=2),
    yaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8", automargin=True,
               ticks="", zerolinewidth=2),
    colorway=CATEGORICAL))
TEMPLATE = "candor"
_TEMPLATE_JSON = pio.templates[TEMPLATE].to_plotly_json()
_BASE = dict(template=TEMPLATE, margin=dict(l=10, r=20, t=40, b=48), font=dict(size=12))
"""Margins with room for the x axis's labels and title (b) and a last tick label (r): Plotly's automargin redraws a
figure whose labels do not fit the margins it started with."""


SVG_MAX_POINTS = 4_000
"""The most markers a figure draws as SVG (``go.Scatter``); past it WebGL (``go.Scattergl``). Measured in headless
Chromium (software WebGL), 12 traces drawn on a fresh page: WebGL costs about 0.5-0.8 s and 1.2-1.8 CPU s (every
Chromium process) whatever the count, its set-up, against SVG's 0.1 s and 0.5 CPU s for 12 points, 0.2 s and 0.6
CPU s for 1,200, 0.3-0.5 s and 0.8-1.0 CPU s for 2,400; both about 0.7-0.9 s at 5,000 and WebGL ahead from 10,000
(1.0 vs 1.1 s). So the sample's dependence scatter (569 dots) draws as SVG; its beeswarm (569 rows x 12 features,
6,828 dots) and Adult's (24,000) as WebGL."""


def points_trace(n_points: int):
    """The scatter trace class for a figure of ``n_points`` markers in all: ``go.Scatter`` (SVG) up to
    :data:`SVG_MAX_POINTS`, else ``go.Scattergl`` (WebGL)."""
    return go.Scatter if n_points <= SVG_MAX_POINTS else go.Scattergl


def unvalidated_figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure of ``data`` (trace dicts) and ``layout`` (a :func:`layout_dict`) built without Plotly's
    per-property validation, for the figures a row change redraws (:func:`waterfall`, :func:`attribution_bar`).

    Validating and copying the template cost 6 ms a figure on a server that was idle between clicks (5.6 vs
    2.7 ms, median of 12, 0.7 s apart), two figures a click. The JSON is the same as a validated figure's (the
    named template is given resolved, as Plotly would write it); ``tests/app/test_figures.py`` builds every such
    figure again with validation on, so a misspelt property still fails a test rather than being dropped.
    """
    if layout.get("template") == TEMPLATE:
        layout = {**layout, "template": _TEMPLATE_JSON}
    return go.Figure(data=data, layout=layout, _validate=False)


def layout_dict(title: str, alt: str | None = None, margin: dict | None = None, **kw) -> dict:
    """Title, template and margins as a layout dict; ``alt`` (plain text) is the figure's text alternative.

    ``margin`` overrides sides of the base margins; without ``t`` there, the top margin holds every line of
    the title. ``kw`` are further layout properties, nested (``xaxis=dict(title=dict(text=...))``). A figure
    built in one go from such a dict (``go.Figure(data=..., layout=...)``) costs a fifth of one built by
    successive ``update_layout`` calls (about 2 ms instead of 9 for a waterfall).
    """
    m = dict(_BASE["margin"])
    if title.count("<br>"):  # room for every line of the title above the plot
        m["t"] = max(40, 34 + 15 * title.count("<br>"))
    m.update(margin or {})
    out = dict(template=TEMPLATE, font=dict(_BASE["font"]), title=dict(text=title, x=0.01, font=dict(size=14)),
               margin=m, **kw)
    if alt:
        out["meta"] = dict(alt=alt_text(alt))
    return out


def _layout(fig: go.Figure, title: str, alt: str | None = None, **kw) -> go.Figure:
    """:func:`layout_dict` applied to ``fig``; ``kw`` may use Plotly's ``xaxis_title`` shorthand."""
    fig.update_layout(layout_dict(title, alt))
    return fig.update_layout(**kw) if kw else fig


def bars_alt(names, values, what: str, n: int = 3) -> str:
    """Text alternative of a bar chart: the ``n`` largest bars by ``|value|`` in words, e.g.
    ``"SHAP attributions, largest: worst radius +0.12, mean area -0.08"``."""
    v = np.asarray(values, dtype=float)
    order = [int(j) for j in np.argsort(-np.abs(np.nan_to_num(v)), kind="stable")[:n]]
    return f"{what}, largest: " + ", ".join(f"{names[j]} {plain(v[j], signed=True, trim=True)}" for j in order)


ROUGH = "≈ "
"""Prefix of a feature whose standard error is larger than the gap to a neighbour in the ranking."""
ROUGH_NOTE = "≈: its standard error is larger than the gap to a neighbour in the ranking (their order is not resolved)"


def standard_errors(e: Explanation) -> np.ndarray | None:
    """``e.params["standard_error"]`` as an array of shape (n_features,), or None if absent or malformed."""
    se = e.params.get("standard_error") if isinstance(e.params, dict) else None
    if se is None:
        return None
    se = np.asarray(se, dtype=float).ravel()
    return se if se.shape == e.values.shape else None


def rank_unresolved(scores: np.ndarray, se: np.ndarray | None) -> np.ndarray:
    """True where a feature's standard error exceeds the gap in ``|score|`` to its neighbour above or below.

    Features are ranked by ``|score|`` (ties by index, as :meth:`Explanation.ranking`); NaN or missing
    standard errors flag nothing. Returns a bool array of shape (n_features,).
    """
    scores = np.abs(np.asarray(scores, dtype=float))
    flags = np.zeros(scores.size, bool)
    if se is None or scores.size < 2:
        return flags
    order = np.lexsort((np.arange(scores.size), -scores))
    ranked, err = scores[order], np.asarray(se, dtype=float)[order]
    gaps = np.abs(np.diff(ranked))
    nearest = np.minimum(np.r_[np.inf, gaps], np.r_[gaps, np.inf])
    flags[order] = np.isfinite(err) & (err > nearest)
    return flags


def _error_note(se: np.ndarray | None, flags: np.ndarray, shown, say_exact: bool = False) -> str:
    """A title line saying what the error bars are and what ≈ means (for exact values only if ``say_exact``)."""
    if se is None or not np.isfinite(se).any():
        return "" if se is None else "<br><sup>no standard error reported</sup>"
    if not np.nanmax(se) > 0:
        return "<br><sup>exact values (standard error 0)</sup>" if say_exact else ""
    n = int(flags[list(shown)].sum())
    note = (f"bars: ± 1 standard error (largest {plain(np.nanmax(se))})"
            + (f"; {n} shown {'feature' if n == 1 else 'features'} marked {ROUGH_NOTE}" if n else ""))
    return "<br><sup>" + wrap_note(note).replace("<br>", "</sup><br><sup>") + "</sup>"


def importance_bar(g: GlobalImportance, max_display: int = 15) -> go.Figure:
    """Mean |SHAP| per feature, largest on top, with ± its standard error from the rows' sampling errors."""
    imp = g.importance
    se = g.importance_standard_error if g.standard_error is not None else None
    flags = rank_unresolved(imp, se)
    order = top_k(imp, max_display)[::-1]
    err = se[order] if se is not None else np.zeros(len(order))
    fig = go.Figure(go.Bar(x=imp[order], y=[(ROUGH if flags[j] else "") + t for j, t in
                                            zip(order, tick_labels([g.feature_names[j] for j in order]))],
                           orientation="h", marker_color=GREY, customdata=err,
                           error_x=dict(type="data", array=err, visible=bool(np.nanmax(err, initial=0) > 0),
                                        color="#444", thickness=1.2, width=3),
                           hovertemplate="%{y}: %{x:.4f} ± %{customdata:.4f}<extra></extra>"))
    return _layout(fig, f"Global importance: mean |SHAP| ({g.output_space} of {esc(g.target)})"
                        + _error_note(se, flags, order), xaxis_title=f"mean |attribution| ({esc(g.output_space)})",
                   alt=bars_alt(g.feature_names, imp, "mean |SHAP| per feature"),
                   height=max(300, (12 + 14 * _label_lines(fig.data[0].y)) * len(order) + 110)
                   ).update_layout(margin=dict(l=label_margin(fig.data[0].y)))


def waterfall(e: Explanation, max_display: int = 10, value_labels=None, widest_labels=None) -> go.Figure:
    """base_value → largest attributions → prediction, the rest summed in one bar.

    ``value_labels`` (one display text per feature, from the services: the user's levels and dates)
    replaces the numbers ``feature_values`` printed with 4 significant digits. ``widest_labels`` (per
    feature, the longest value text any row shows) sizes the figure for every feature and value, so
    that its height is the same for every row (a figure that changes height is redrawn once more by
    Dash's resize handler, after a 100 ms debounce).
    """
    order = top_k(e.values, max_display)
    rest = np.setdiff1d(np.arange(e.values.size), order)
    se = standard_errors(e)
    flags = rank_unresolved(e.values, se)
    shown = value_labels if value_labels is not None else [plain(v, 4) for v in e.feature_values]
    labels = [(ROUGH if flags[j] else "") + t for j, t in
              zip(order, tick_labels([f"{e.feature_names[j]} = {shown[j]}" for j in order], 30))]
    vals = list(e.values[order])
    err = list(se[order]) if se is not None else [0.0] * len(order)
    if rest.size:
        labels.append(f"{rest.size} other features")
        vals.append(float(e.values[rest].sum()))
        err.append(float("nan"))  # the errors of a sum of sampled values are correlated: not shown
    texts = ([plain(e.base_value)] + [plain(v) + (f" ± {plain(s)}" if s == s and s > 0 else "") for v, s in zip(vals, err)]
             + [plain(e.prediction)])
    y = ["base_value (E[f])"] + labels + ["prediction f(x)"]
    data = [dict(type="waterfall",
                 orientation="h", measure=["absolute"] + ["relative"] * len(vals) + ["total"],
                 y=y, x=[e.base_value] + vals + [e.prediction], text=texts, textposition="none",
                 increasing=dict(marker=dict(color=POS)), decreasing=dict(marker=dict(color=NEG)),
                 totals=dict(marker=dict(color=GREY)), connector=dict(line=dict(color="#ccc")),
                 hovertemplate="%{y}: %{text}<extra></extra>")]
    ends, left = _waterfall_ends(e.base_value, vals, e.prediction)
    bars = np.nan_to_num(np.asarray(err, dtype=float))
    if bars.max(initial=0) > 0:  # error bars at the end of each step
        data.append(dict(type="scatter", x=ends[1:-1], y=labels, mode="markers", marker=dict(size=1, color="rgba(0,0,0,0)"),
                         error_x=dict(type="data", array=bars, color="#444", thickness=1.2, width=4),
                         hoverinfo="skip", showlegend=False))
    # each bar's number beside its end, as a text trace: Plotly fits a bar's own "outside" text by measuring
    # every one of them, 7 ms of each row change in Chromium (of 30 for the figure)
    data.append(dict(type="scatter", mode="text", x=ends, y=y, cliponaxis=False,  # the last stays readable
                     text=[f"{t}\u2002" if lf else f"\u2002{t}" for t, lf in zip(texts, left)],  # an en space off the bar
                     textposition=["middle left" if lf else "middle right" for lf in left],
                     hoverinfo="skip", showlegend=False))
    lines = _label_lines(y)
    if widest_labels is not None and len(widest_labels) == len(e.feature_names):
        lines = max(lines, _lines_of(tuple(f"{n} = {w}" for n, w in zip(e.feature_names, widest_labels)), 30))
    prob = e.params.get("probability")
    beside = f" log-odds, probability {plain(prob)}" if prob is not None and e.output_space == "log_odds" else ""
    title = (f"SHAP: from base_value {plain(e.base_value)} to prediction {plain(e.prediction)}{beside} "
             f"(additivity gap {gap_text(e.additivity_gap)})" + _error_note(se, flags, order, True))
    return unvalidated_figure(data, layout_dict(
        title, alt=bars_alt(e.feature_names, e.values, "SHAP attributions"), showlegend=False,
        margin=dict(l=label_margin(y), r=60, t=max(40, 34 + 15 * title.count("<br>"))),
        xaxis=dict(title=dict(text=f"{esc(e.output_space)} of {esc(e.target)}"), automargin=False,
                   range=_waterfall_range(ends, left, texts)),
        yaxis=dict(autorange="reversed", automargin=False), height=max(300, (12 + 14 * lines) * len(y) + 110)))


WATERFALL_PLOT_PX = 380
"""Width (px) a waterfall's plot area is assumed to have when its x range leaves room for the value texts (the
Descriptive page's half-width panel at 1,400 px; wider figures get more room than they need)."""


def _waterfall_ends(base: float, steps, prediction: float) -> tuple[list[float], list[bool]]:
    """Where each bar of a waterfall ends (base, steps, prediction, in order) and whether its number goes to its
    left: a decreasing step's, and a base or prediction bar's that reaches left of 0; the others to its right."""
    steps = [float(v) for v in steps]
    cum = list(base + np.cumsum(steps)) if steps else []
    ends = [float(base)] + [float(v) for v in cum] + [float(prediction)]
    left = [base < 0] + [v < 0 for v in steps] + [prediction < 0]
    return ends, left


def _waterfall_range(ends: list[float], left: list[bool], texts) -> list[float]:
    """An x range in which every bar's number, drawn beside its bar's end, stays inside the plot, never over the
    axis labels or past the figure's edge. ``ends``, ``left``: :func:`_waterfall_ends`; ``texts``: the numbers of
    base, steps and prediction, in order. Returns ``[low, high]``.
    """
    lo, hi = min(0.0, *ends), max(0.0, *ends)
    span = (hi - lo) or 1.0
    widths = [text_px(t) for t in texts]
    frac_l, frac_r = (min(0.3, (px + 14) / WATERFALL_PLOT_PX)  # the text, its en space and 8 px
                      for px in (max((w for w, lf in zip(widths, left) if lf), default=0),
                                 max((w for w, lf in zip(widths, left) if not lf), default=0)))
    width = span / max(1 - frac_l - frac_r, 0.3)
    return [lo - frac_l * width, hi + frac_r * width]


def attribution_bar(e: Explanation, max_display: int = 10, title: str | None = None,
                    values: np.ndarray | None = None, widest_labels=None) -> go.Figure:
    """Signed attributions of the largest features, largest on top.

    Every bar keeps its label (30 bars and more: a smaller font, never every other label hidden). A LIME
    explanation names the bin or level the row falls in (``"worst area > 1,084"``, from
    ``params["conditions"]``): LIME weighs that condition, not the feature as a whole. ``widest_labels`` (per
    feature, the longest value text any row shows) sizes the figure for the widest bin of every feature
    (``"lo < name <= hi"``), so that its height is the same for every row.
    """
    v = e.values if values is None else np.asarray(values)
    order = [j for j in top_k(v, max_display) if v[j] != 0][::-1]
    se = standard_errors(e)
    flags = rank_unresolved(v, se)
    err = np.nan_to_num(se[order]) if se is not None else np.zeros(len(order))
    cond = e.params.get("conditions") if isinstance(e.params, dict) else None
    names = list(cond) if cond is not None and len(cond) == len(e.feature_names) else list(e.feature_names)
    y = [(ROUGH if flags[j] else "") + t for j, t in zip(order, tick_labels([names[j] for j in order]))]
    y, note = unidentified_marks(e, order, y, _error_note(se, flags, order))  # LIME's † bars
    n = len(order)
    font = 12 if n <= 18 else 10 if n <= 30 else 9
    # the height is the row's page's, not the row's (a figure changing height is redrawn once more by Dash's
    # resize handler, 100 ms later): room for max_display bars, the longest label of any feature, two note lines
    slots = max(n, min(max_display, v.size))
    lines = max(_label_lines(y), _lines_of(tuple(names)))
    if cond is not None and widest_labels is not None and len(widest_labels) == len(e.feature_names):
        lines = max(lines, _lines_of(tuple(f"{w} < {f} <= {w}" for f, w in zip(e.feature_names, widest_labels))))
    note_lines = max(note.count("<sup>"), 2 if se is not None else 0)
    bar = dict(type="bar", x=v[order], y=y, orientation="h", marker=dict(color=[POS if v[j] > 0 else NEG for j in order]),
               customdata=err, hovertemplate="%{y}: %{x:.4f} ± %{customdata:.4f}<extra></extra>",
               error_x=dict(type="data", array=err, visible=bool(err.max(initial=0) > 0), color="#444", thickness=1.2,
                            width=3))
    return unvalidated_figure([bar], layout_dict(
        (title or f"{e.method.upper()} attributions") + note, margin=dict(l=label_margin(y, font)),
        alt=bars_alt(names, v, f"{e.method.upper()} attributions, {n} bars, red towards and blue against {e.target}"),
        xaxis=dict(title=dict(text=f"attribution ({esc(e.output_space)})"), automargin=False),
        yaxis=dict(tickmode="array", tickvals=y, ticktext=y, tickfont=dict(size=font), automargin=False),  # every label, none skipped
        height=max(260, (12 + 14 * lines) * slots + 90) + 20 * note_lines))


_METHOD_COLOURS = {"muse": "#D55E00", "cart": "#0072B2", "cart_dl": "#009E73", "flat": GREY}
_METHOD_SYMBOLS = {"muse": "circle", "cart": "square", "cart_dl": "triangle-up", "flat": "x"}
_DRAW_ORDER = ("flat", "cart", "cart_dl", "muse")  # MUSE last: on top, never hidden under the flat set's markers


def frontier(f, selected: str | None = None) -> go.Figure:
    """Held-out agreement against rules, predicates and neighborhoods for MUSE, CART and the flat set.

    CART appears twice: leaf by leaf ("CART") and drawn as a decision set with a default rule
    ("CART AS DECISION SET", the fair comparison with MUSE). Every point has its Wilson 95 %
    interval as an error bar; the trivial surrogate (always the training majority label) is a
    dotted line, and the title names the points that do not beat it.
    Each point carries ``customdata = (method, budget)`` so that a click can show it.
    """
    colours = _METHOD_COLOURS
    names = {"muse": "MUSE", "cart": "CART", "cart_dl": "CART AS DECISION SET", "flat": "FLAT"}
    # only MUSE has neighborhoods: CART and the flat set are not drawn at "0 neighborhoods"
    with_nbhd = [m for m in _DRAW_ORDER if any(getattr(p, "n_neighborhoods", 0) for p in f.curve(m))]
    third = "vs neighborhoods" + (f" ({', '.join(names[m] for m in with_nbhd)})" if with_nbhd else "")
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("vs rules", "vs predicates", third))
    for method in [m for m in _DRAW_ORDER if f.curve(m)] + [m for m in {p.method for p in f.points}
                                                           if m not in _DRAW_ORDER]:
        pts = f.curve(method)
        if not pts:
            continue
        lo = [p.agreement - getattr(p, "agreement_low", float("nan")) for p in pts]
        hi = [getattr(p, "agreement_high", float("nan")) - p.agreement for p in pts]
        for col, attr in enumerate(("n_rules", "n_predicates", "n_neighborhoods"), start=1):
            if attr == "n_neighborhoods" and method not in with_nbhd:
                continue
            fig.add_trace(go.Scatter(
                x=[getattr(p, attr) for p in pts], y=[p.agreement for p in pts], mode="lines+markers",
                name=names.get(method, method.upper()), legendgroup=method, showlegend=col == 1,
                marker=dict(color=colours.get(method, GREY), size=11 if method == "muse" else 9,
                            symbol=_METHOD_SYMBOLS.get(method, "circle")),
                line=dict(color=colours.get(method, GREY), dash="dash" if method == "cart_dl" else "solid"),
                error_y=dict(type="data", array=hi, arrayminus=lo, thickness=1, width=3),
                customdata=[(p.method, p.budget, p.fit_seconds, getattr(p, "agreement_low", float("nan")),
                             getattr(p, "agreement_high", float("nan"))) for p in pts],
                hovertemplate=(f"{names.get(method, method.upper())} budget %{{customdata[1]}}<br>"
                               "agreement %{y:.3f} (95% CI %{customdata[3]:.3f} to %{customdata[4]:.3f})<br>"
                               "fit %{customdata[2]:.1f} s<extra>click to show</extra>")), row=1, col=col)
    triv = getattr(f, "trivial_agreement", float("nan"))
    title = f"Fidelity vs complexity ({f.n_eval} held-out rows); click a point to show its rules"
    if triv == triv:
        for col in (1, 2, 3):
            fig.add_hline(y=triv, line=dict(color="black", dash="dot", width=1), row=1, col=col)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color="black", dash="dot", width=1),
                                 name=esc(f"trivial: always {f.trivial_label} ({triv:.3f})"), hoverinfo="skip"))
        weak = [f"{names.get(p.method, p.method)} {p.budget}" for p in f.points if not p.agreement > triv]
        if weak:
            title += f"<br>⚠ not better than always {esc(f.trivial_label)}: {esc(', '.join(weak))}"
    if selected and "|" in selected:
        _, method, budget = selected.split("|")
        p = next((p for p in f.points if p.method == method and p.budget == int(budget)), None)
        if p is not None:
            for col, attr in enumerate(("n_rules", "n_predicates", "n_neighborhoods"), start=1):
                fig.add_trace(go.Scatter(x=[getattr(p, attr)], y=[p.agreement], mode="markers", showlegend=False,
                                         marker=dict(size=16, symbol="diamond-open", color="black"),
                                         hoverinfo="skip"), row=1, col=col)
    fig.update_yaxes(title_text="agreement (held-out, 95% CI)", row=1, col=1)
    fig.update_xaxes(dtick=1, row=1, col=3)  # neighborhoods are whole numbers
    best = {m: max(f.curve(m), key=lambda p: p.agreement) for m in _DRAW_ORDER if f.curve(m)}
    alt = "; ".join(f"{names[m]} best agreement {plain(p.agreement)} with {p.n_rules} rules" for m, p in best.items())
    fig = _layout(fig, title, legend=dict(orientation="h", y=-0.2), alt=alt)
    fig.update_layout(margin=dict(t=80))
    return fig


def confusion(detail) -> go.Figure:
    """Surrogate-vs-model confusion matrix on held-out rows (rows: model's label)."""
    labels = esc_all(detail.classes)
    fig = go.Figure(go.Heatmap(z=detail.confusion, x=[f"surrogate: {c}" for c in labels],
                               y=[f"model: {c}" for c in labels], colorscale="Greys", showscale=False,
                               text=detail.confusion, texttemplate="%{text}",
                               hovertemplate="%{y}, %{x}: %{z} rows<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"Surrogate vs model on {detail.n_rows} held-out rows (agreement {detail.agreement:.3f})",
                   alt="rows: the model's label, columns: the surrogate's; the diagonal counts the rows they agree on")
