"""Call the Text page's view callbacks (:mod:`app.callbacks.text_views`) as the browser does: the input that
changed is set in Dash's callback context, so the callback's own dispatch (``ctx.triggered_id``) is exercised."""
from __future__ import annotations

import contextlib

from dash._callback_context import context_value
from dash._utils import AttributeDict

from app.shell import ids
from app.callbacks import text_views as tv

OUTPUTS = ("current", "box", "notes", "prediction", "model_view", "layer_options", "layer", "head_options", "heads",
           "layer_placeholder", "heads_placeholder", "head_view", "aggregates", "agreement", "agreement_note",
           "slow_status", "lopardo_summary", "lopardo_scores", "lopardo_agreement")
"""The outputs of :func:`app.callbacks.text_views.show_text`, in order."""


@contextlib.contextmanager
def triggered(prop_id: str | None):
    """Run a callback as if ``prop_id`` (``"text-row.value"``) had changed; None: the page opening."""
    token = context_value.set(AttributeDict(triggered_inputs=[{"prop_id": prop_id, "value": None}] if prop_id else []))
    try:
        yield
    finally:
        context_value.reset(token)


def show(current=None, trigger: str | None = None, *, typed=None, index=None, dataset=None, text_col=None,
         label_col=None, layer=None, heads=None, n_layers: int = 0, n_heads: int = 0, method="ig",
         metric="spearman", query="cls", lopardo=None) -> dict:
    """:func:`show_text`'s outputs by name; ``trigger`` is the changed input's prop id (None: the page opening).

    ``n_layers``/``n_heads``: how many options the pickers already have (0: not filled yet).
    """
    layer_options = [{"label": f"layer {i}", "value": i} for i in range(n_layers)]
    head_options = [{"label": f"head {i}", "value": i} for i in range(n_heads)]
    with triggered(trigger):
        out = tv.show_text(None, None, index, typed, current, dataset, text_col, label_col, layer, heads,
                           layer_options, head_options, method, metric, query, lopardo)
    return dict(zip(OUTPUTS, out, strict=True))


def show_layer(layer, heads, current, trigger: str = f"{ids.TEXT_LAYER}.value"):
    """:func:`show_layer`'s head view and aggregates after ``trigger`` changed."""
    with triggered(trigger):
        return tv.show_layer(layer, heads, current)
