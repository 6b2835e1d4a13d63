"""What one user action on the Text page shows, in one call (issue 14: one request per action).

A new text (typed, or picked from a dataset) changes every panel of the page; a layer changes the head
view and the per-word aggregates; a head the head view; the agreement controls the agreement heatmap. Each
of those actions is one Dash callback, which calls :func:`text_page` once with the parts it shows. Each
part is computed by the Text page's own services (:mod:`app.services.text`, :mod:`app.services.text_lopardo_view`)
or carries the one-line :class:`~workspace.errors.CandorError` message that stopped it, so one failing
panel (a layer of another model, a method not computed yet) never blanks the others.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from workspace.errors import CandorError
from . import text as _text
from .text_data import dataset_text
from .text_loader import ModelInfo, import_guard, model_info

PARTS = ("view", "model", "head", "aggregates", "agreement", "lopardo")
"""``view``: prediction, notes, model view; ``model``: the model's layers x heads (the pickers); ``head``: the
head view's layer; ``aggregates``: per-word attention beside every attribution computed so far;
``agreement``: per-head agreement with one attribution; ``lopardo``: the Lopardo et al. (2024) card."""
ATTRIBUTIONS = ("ig", "gxi", "lime", "shap")
"""The attributions the aggregates view shows, in order, when computed."""


@dataclass(frozen=True)
class TextPage:
    """The parts of the Text page one action asked for (None: not asked, or failed: see :attr:`errors`).

    Parameters
    ----------
    text : str
        The text as given (checked by :func:`app.services.text.check_text` when a part needs it).
    view : TextView or None
        Attention, prediction and the fast attributions (:func:`app.services.text.text_view`).
    info : ModelInfo or None
        The loaded model (layers x heads, labels): it fills the layer and head pickers.
    layer : int or None
        The layer of the head view and aggregates, 0-based (a negative or None layer counted from the end).
    aggregates : list of (str, ndarray of shape (n_words,)) or None
        :func:`app.services.text.aggregates` at ``layer``.
    attributions : tuple of Explanation
        Those of :data:`ATTRIBUTIONS` computed so far (LIME, SHAP and IG on long texts come from the job).
    agreement : TextAgreementReport or None
        Every head against ``method``'s attribution (:func:`app.services.text.agreement`); None when that
        attribution has not been computed yet (then ``agreement_attribution`` is None too).
    agreement_attribution : Explanation or None
        The attribution the agreement is measured against.
    lopardo : LopardoView or None
        The Lopardo et al. (2024) card of the text (:func:`app.services.text_lopardo_view.lopardo_view`); None
        when no model has been trained under the key.
    errors : dict
        Part -> the one-line message that stopped it.
    """

    text: str
    view: object = None
    info: ModelInfo | None = None
    layer: int | None = None
    aggregates: list | None = None
    attributions: tuple = ()
    agreement: object = None
    agreement_attribution: object = None
    lopardo: object = None
    errors: dict = field(default_factory=dict)


def text_page(text, parts=PARTS, *, pick: tuple[dict, int] | None = None, layer=None, method: str = "ig",
              query: str = "cls", lopardo_key: str | None = None) -> TextPage:
    """Compute the ``parts`` of the Text page for ``text``, each from its one service.

    Parameters
    ----------
    text : str or None
        The text (ignored when ``pick`` is given).
    pick : (dict, int), optional
        A text chosen from a dataset: its description (:data:`app.services.text_data.BUILTIN` or an upload's)
        and the text's index; the text is read with :func:`app.services.text_data.dataset_text`.
    parts : iterable of str
        Among :data:`PARTS`.
    layer : int or None
        Layer of the head view and aggregates (None: the last).
    method : {"ig", "gxi", "lime", "shap"}
        The attribution the agreement heatmap compares attention with.
    query : {"cls", "mean"}
        The attention reading of the agreement (CLS row or mean over queries).
    lopardo_key : str or None
        The trained Lopardo et al. model's key (:func:`app.services.text_lopardo.model_key`).

    Returns
    -------
    TextPage
        Parts that failed carry their message in ``errors`` (the text cannot be used, the model cannot be
        loaded, a layer the model does not have); they never raise.

    Raises
    ------
    CandorError
        Only for ``pick``: the dataset or the text cannot be read (the dataset's note says why).
    """
    if pick is not None:
        text = dataset_text(*pick)
    parts = set(parts)
    unknown = parts - set(PARTS)
    if unknown:
        raise ValueError(f"unknown Text page parts {sorted(unknown)}; expected some of {', '.join(PARTS)}")
    out, errors = {}, {}
    if "model" in parts:
        try:
            out["info"] = model_info()
        except CandorError as err:
            errors["model"] = str(err)
    text_parts = parts & {"view", "head", "aggregates", "agreement"}
    if text_parts:
        try:
            out["view"] = _text.text_view(text)
        except CandorError as err:
            errors.update(dict.fromkeys(text_parts, str(err)))
    if "view" in out:
        _layered(out, errors, text, parts, layer)
        if "agreement" in parts:
            try:
                out["agreement"] = _text.agreement(text, method, query)
                if out["agreement"] is not None:
                    out["agreement_attribution"] = _text.attribution(text, method)
            except CandorError as err:
                errors["agreement"] = str(err)
    if "lopardo" in parts:
        with import_guard():  # torch: imported when the page is first used, never at start (issue 14)
            from . import text_lopardo_view
        try:
            out["lopardo"] = text_lopardo_view.lopardo_view(lopardo_key, text)
        except CandorError as err:
            errors["lopardo"] = str(err)
    return TextPage(text=text, errors=errors, **out)


def _layered(out: dict, errors: dict, text: str, parts: set, layer) -> None:
    """The head view's checked layer and the aggregates at that layer (with every attribution computed so far)."""
    if not parts & {"head", "aggregates"}:
        return
    try:
        out["layer"] = _text.check_layer(out["view"].attention.attention.weights.shape[0],
                                         -1 if layer is None else layer)
    except CandorError as err:
        errors.update(dict.fromkeys(parts & {"head", "aggregates"}, str(err)))
        return
    if "aggregates" in parts:
        try:
            out["aggregates"] = _text.aggregates(text, out["layer"])
            found = (_text.attribution(text, m) for m in ATTRIBUTIONS)
            out["attributions"] = tuple(e for e in found if e is not None)
        except CandorError as err:
            errors["aggregates"] = str(err)
