"""Text page views: the dataset's pickers, and the panels of a :class:`app.services.text_page.TextPage`.

The callbacks (:mod:`app.callbacks.text`, :mod:`app.callbacks.text_views`) and the page's layout
(:mod:`app.pages.text`, which fills the pickers when it can) build them here.
"""
from __future__ import annotations

from pathlib import Path

import dash_bootstrap_components as dbc
from dash import html

from app import services
from app.views import figures_text as ft
from app.views.components import (choice_name, choice_options, choice_value, empty_figure, error_alert, gilpin_badge,
                                  labelled_options, method_note)
from explainers.persuasive import gilpin_label

SLOW_METHOD_NAMES = {"lime": "LIME", "shap": "SHAP", "ig": "Integrated Gradients"}
"""The words for each method of the LIME/SHAP job (its status line, the agreement note before it ran)."""


def dataset_spec(dataset, text_col, label_col) -> dict:
    """The dataset description with the chosen columns (columns of another file fall back to the defaults).

    ``text_col`` and ``label_col`` are the column pickers' values (:func:`app.views.components.choice_value`).
    """
    text_col, label_col = choice_name(text_col), choice_name(label_col)
    spec = dict(dataset) if isinstance(dataset, dict) else dict(services.BUILTIN) if dataset is None else {}
    spec.setdefault("id", None)  # a malformed store from the browser: the service says the upload is gone
    columns = spec.get("columns") if isinstance(spec.get("columns"), list) else []
    if spec["id"] != "builtin" and text_col in columns:
        spec.update(text_column=text_col, label_column=label_col if label_col in columns else None)
    return spec


def column_pickers(dataset) -> tuple:
    """Options, values and disabled flags of the text and label column pickers of ``dataset`` (disabled for the
    built-in examples; the page opens with them filled, so opening costs no request for them)."""
    spec = dataset_spec(dataset, None, None)
    columns = spec.get("columns") or [spec.get("text_column"), spec.get("label_column")]
    builtin = spec["id"] == "builtin"
    options = choice_options(columns)
    text_col, label_col = spec.get("text_column"), spec.get("label_column")
    return (options, None if text_col is None else choice_value(text_col), builtin, options,
            None if label_col is None else choice_value(label_col), builtin)


def text_choices(text_col, label_col, dataset) -> tuple:
    """``(options, note)``: the texts of the dataset to pick from, and which columns and labels are used.

    Raises
    ------
    CandorError
        If the dataset cannot be read (an upload gone, a column missing).
    """
    spec = dataset_spec(dataset, text_col, label_col)
    ds = services.dataset(spec)
    shown = "" if len(ds.texts) <= 500 else " (the first 500 are listed)"
    return labelled_options(services.dataset_options(spec)), f"Dataset: {ds.name}: {ds.note}{shown}"


def picker_fill(info, layer=None, heads=None) -> tuple:
    """Options, values and placeholders of the layer and head pickers for a model's layers x heads: the last
    layer and heads 0-3 chosen, unless the page's link chose others (``app.shell.url_state`` checked them against the
    same model). The page's layout fills them so when the model is already loaded (one request on opening)."""
    linked = isinstance(layer, int) and 0 <= layer < info.n_layers
    linked_heads = heads is not None and all(isinstance(h, int) and 0 <= h < info.n_heads for h in heads)
    return ([{"label": f"layer {l}", "value": l} for l in range(info.n_layers)], layer if linked else info.n_layers - 1,
            [{"label": f"head {h}", "value": h} for h in range(info.n_heads)],
            heads if linked_heads else list(range(min(4, info.n_heads))),
            "layer", "heads")


def view_panels(page, origin: str | None) -> tuple:
    """Notes (truncation, excluded tokens, merge rule, timings), prediction and model view of the text."""
    v = page.view
    if v is None:
        err = page.errors["view"]
        return error_alert(err), empty_figure(err), empty_figure(err)
    a, enc = v.attention, v.attention.encoding
    return (_notes(origin, v), ft.prediction_bar(a.labels, v.probabilities, v.info.head),
            ft.model_view(enc.tokens, a.attention.weights))


def head_view(page, heads):
    """Token-to-token attention of the page's layer and the chosen heads (more than 4: their mean)."""
    if "head" in page.errors:
        return empty_figure(page.errors["head"])
    a = page.view.attention
    w = a.attention.weights
    heads = [int(h) for h in heads or [] if 0 <= int(h) < w.shape[1]] or [0]
    return ft.head_view(a.encoding.tokens, w[page.layer], page.layer, heads)


def aggregates_view(page):
    """Per-word attention aggregates aligned with every attribution computed so far."""
    if "aggregates" in page.errors:
        return empty_figure(page.errors["aggregates"])
    return ft.aggregates_view(page.view.attention.encoding.words, page.aggregates,
                              [ft.attribution_row(e) for e in page.attributions])


def agreement_view(page, method: str, metric: str) -> tuple:
    """Layers x heads agreement of attention with the chosen attribution and metric, and its note."""
    if "agreement" in page.errors:
        err = page.errors["agreement"]
        return empty_figure(err), error_alert(err)
    if page.agreement is None:
        msg = f"{SLOW_METHOD_NAMES[method]} has not been computed for this text yet: press “Run LIME and SHAP”"
        return empty_figure(msg), method_note(msg)
    expl = page.agreement_attribution
    return ft.agreement_heatmap(page.agreement, metric), html.Div([
        gilpin_badge(gilpin_label("attention")), gilpin_badge(gilpin_label(expl)),
        method_note(f"attribution: {ft.attribution_label(expl)}; {expl.source}")])


def _notes(origin: str | None, v) -> html.Div:
    a, enc = v.attention, v.attention.encoding
    p = float(v.probabilities[a.predicted])
    trunc = (dbc.Alert(f"Truncated at the model maximum of {enc.max_length} tokens: {enc.truncation_note}",
                       color="warning", className="mb-1 py-2") if enc.truncated else None)
    ig = (f"Integrated Gradients: completeness gap {v.ig.params['relative_gap']:.2%} of |g(x) - g(baseline)| at "
          f"{v.ig.params['n_steps']} steps" if v.ig is not None else
          f"Integrated Gradients on {enc.n_tokens} tokens takes more than 2 s: run it below with LIME and SHAP")
    timing = ", ".join(f"{k} {s:.2f} s" for k, s in v.seconds.items())
    where = f" (from the folder {Path(v.info.folder).name}, loaded in {v.info.load_seconds:.1f} s)" if v.info.folder else ""
    return html.Div([
        html.P([html.Strong(f"Predicted {v.predicted_label} (P = {p:.3f})"), f" for {origin or 'the text'}: "
                f"{enc.n_tokens} tokens, {len(enc.words)} words."], className="mb-1"),
        html.P([html.Span("Model: ", className="fw-semibold"), v.info.description + where], className="small mb-1"),
        html.Div([gilpin_badge(gilpin_label("attention"))]
                 + ([gilpin_badge(gilpin_label(v.ig))] if v.ig is not None else []), className="mb-1"),
        trunc,
        method_note(f"{a.source}; max length {enc.max_length} tokens"),
        method_note(f"{enc.n_special} special tokens ({', '.join(sorted({t for t, s in zip(enc.tokens, enc.special_mask) if s}))})"
                    f" and {enc.n_padding} padding tokens excluded from every per-word score"),
        method_note(enc.merge_rule),
        method_note(ig),
        method_note(f"computed in {timing}"),
    ])
