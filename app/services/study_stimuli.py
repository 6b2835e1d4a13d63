"""Study stimuli from the services: the same explanations and numbers the analyst sees.

The participant's use cases (:mod:`study.participation`) live in ``study/``, below ``app/``; what a
trial shows comes from here, passed to them as :data:`STIMULI` (their :class:`study.participation.Stimuli`).

A tabular stimulus is a row of the loaded workspace. The advice is the model's
label (P(positive) >= 0.5, as in the navbar); the descriptive explanation is
``services.shap_row``; the persuasive one is ``services.persuasive_view(row, k)``
(top-k simplification with its sentence), ``k`` from the condition's
``top_k:K`` operator (default 3). The logged fidelity is the share of
|attribution| the shown explanation keeps (``mass_retained``: 1.0 for the full
SHAP explanation) with the simplification's complexity counts.

A study is *pinned* when it is first served (the first consent, or the first
trial rendered): every stimulus's view under every condition is computed once
from the live workspace and stored in the database with the workspace's
fingerprint (:mod:`study.pins`). Participants are served the stored views,
so an upload or a model/class switch during the study changes nothing they see
or what is logged; the researcher page says when the live model differs.
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass

import numpy as np
import plotly.graph_objects as go

from app.views import figures
from app import services
from app.serve.study_check import check_truth
from workspace.errors import CandorError, first_line
from study import pins, runtime
from study import truth as study_truth
from study.schema import Study
from study.store import TrialContext

DEFAULT_TOP_K = 3


@dataclass(frozen=True)
class StimulusView:
    """What one trial shows: the input, the advice and (per condition) the explanation."""

    features: tuple[tuple[str, str], ...]
    text: str | None
    context: TrialContext
    kind: str
    figure: object | None
    statement: str | None
    dropped: tuple[tuple[str, float], ...] = ()


def _top_k(operators: tuple[str, ...]) -> int:
    for op in operators:
        name, _, arg = op.partition(":")
        if name == "top_k" and arg.strip().isdigit():
            return int(arg)
    return DEFAULT_TOP_K


def workspace_fingerprint(study: Study, ws=None) -> str:
    """SHA-256 (hex) of what the study's advice depends on in the workspace ``ws`` (default: live).

    Covers the class names, the feature names, the stimulus rows' values and true
    labels, and the model's output on those rows (rounded to 12 digits), so a new
    upload, a refitted model or a class switch changes it.

    Raises
    ------
    CandorError
        If a stimulus row is outside the loaded table or the model fails on it.
    """
    ws = ws or services.workspace()
    rows = [s.row for s in study.stimuli if s.row is not None]
    n = len(ws.X)
    bad = [r for r in rows if not 0 <= r < n]
    if bad:
        raise CandorError(f"study {study.id!r} names rows {bad[:5]} but the loaded table has {n} rows (0..{n - 1})")
    h = hashlib.sha256(json.dumps({"classes": [str(c) for c in ws.classes], "positive": str(ws.positive_class),
                                   "features": [str(c) for c in ws.X.columns]}).encode())
    if rows:
        x = ws.X.iloc[rows]
        try:
            out = np.asarray(ws.output(x), dtype=float)
        except Exception as exc:  # the user's model: one line, not a traceback
            raise CandorError(f"the model failed on the study's rows: {first_line(exc)}") from exc
        for part in (np.asarray(x, dtype=float), np.asarray(ws.y)[rows].astype(float), np.round(out, 12)):
            h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()


def _compute_view(study: Study, item_id: str, condition_id: str, ws) -> dict:
    """The JSON view of ``item_id`` under ``condition_id`` from workspace ``ws``; raises CandorError."""
    stim = study.stimulus(item_id)
    if stim.row is None:
        raise CandorError("text stimuli need a text-model service; this server explains tabular rows only")
    row = services.check_row(stim.row)
    expl = services.shap_row(row)
    if study.model.numeric:  # a regressor: the model's number and the target, as stored and shown
        f = study_truth.facts_from_workspace(study, ws)[item_id]
        pred, truth = f.prediction, f.truth
    else:
        (pred,) = study_truth.predicted_labels(ws, [row])
        truth = ws.classes[int(ws.y[row])]
    # the values as the analyst pages write them: category levels, dates, the features file's units and formats
    features = [[str(name), text] for name, text in zip(ws.X.columns, services.row_values(row))]
    cond = study.condition(condition_id)
    view = dict(features=features, kind=cond.explanation, figure=None, statement=None,
                context=asdict(TrialContext(model_prediction=pred, truth=truth)))
    if cond.explanation == "none":  # no advice: nothing of the model is shown or logged as shown
        view["context"] = asdict(TrialContext(model_prediction=None, truth=truth))
        return view
    if cond.explanation == "prediction":
        return view
    if study.model.numeric and cond.explanation == "persuasive":
        raise CandorError("a persuasive condition needs a classifier (the persuasive page's simplification explains "
                          "a class); a numeric study can compare none, prediction and descriptive")
    d = len(expl.feature_names)
    if study.model.numeric:  # the full SHAP explanation of a regressor: it keeps all of its |attribution|
        view["context"] = asdict(TrialContext(
            model_prediction=pred, truth=truth, explanation_id=f"row{row}:shap", fidelity_metric="mass_retained",
            fidelity=1.0, complexity={"n_features": float(d)}, fidelity_measures=_measures({})))
        view["figure"] = json.loads(figures.attribution_bar(expl, max_display=10,
                                                            title="Why the model estimates this").to_json())
        return view
    k = d if cond.explanation == "descriptive" else min(_top_k(cond.operators), d)
    pv = services.persuasive_view(row, k)
    sim = pv.simplification
    ops = ([f"{name}(" + ", ".join(f"{key}={val}" for key, val in params.items()) + ")" for name, params in sim.operators]
           if cond.explanation == "persuasive" else None)
    shown_dropped = bool(ops) and cond.show_dropped
    if shown_dropped:
        ops.append("show_dropped")
        view["dropped"] = [[d.feature, float(d.share)] for d in pv.dropped]
    view["context"] = asdict(TrialContext(
        model_prediction=pred, truth=truth,
        explanation_id=f"row{row}:shap" + (f":top_k={k}" if ops else "") + (":dropped_shown" if shown_dropped else ""),
        explanation_parent_id=f"row{row}:shap" if ops else None, operators=ops,
        fidelity_metric="mass_retained", fidelity=float(sim.fidelity_after["mass_retained"]),
        complexity={key: float(v) for key, v in sim.complexity_after.items()},
        fidelity_measures=_measures(sim.fidelity_after)))
    if cond.explanation == "descriptive":
        fig = figures.attribution_bar(expl, max_display=10, title="Why the model predicts this")
    else:
        fig = figures.attribution_bar(expl, max_display=k, values=np.asarray(sim.values),
                                      title="Why the model predicts this")
        view["statement"] = sim.statement
    view["figure"] = json.loads(fig.to_json())
    return view


def _measures(fidelity_after: dict) -> dict:
    """Every fidelity figure of the explanation shown, and ``surrogate_agreement`` always (None: missing).

    ``surrogate_agreement`` is the agreement with the model of the explanation's rule surrogate (a rule
    simplification's ``agreement``, on the rows it is measured on); an attribution explanation has no rule
    surrogate, so it is logged as missing (None) rather than left out, and the analysis says why.
    """
    out = {key: (float(v) if np.isfinite(v) else None) for key, v in fidelity_after.items() if key != "agreement"}
    agreement = fidelity_after.get("agreement")
    out["surrogate_agreement"] = float(agreement) if agreement is not None and np.isfinite(agreement) else None
    return out


_pin_lock = threading.Lock()


def resolved(study: Study) -> Study:
    """``study`` with each stimulus's truth and model_correct from its pinned views (the data when pinned)."""
    facts = {}
    eng = runtime.engine()
    # the first arm that shows advice (a no-advice arm logs no model prediction)
    cond = next((c.id for c in study.conditions if c.explanation != "none"), study.conditions[0].id)
    for s in study.stimuli:
        view = pins.pinned_view(eng, study.id, s.id, cond)
        if view is not None and view["context"].get("truth") is not None:
            c = view["context"]
            facts[s.id] = study_truth.Facts(s.row, c["truth"], c["model_prediction"], study.model.numeric)
    return study_truth.resolve(study, facts)


def pin_study(study: Study) -> pins.Pin:
    """Pin ``study`` to the live workspace if it is not pinned yet; return its pin.

    Raises
    ------
    CandorError
        If the study's outputs are not the loaded model's classes, a stimulus
        cannot be shown, or the workspace was switched while pinning.
    """
    eng = runtime.engine()
    pin = pins.get_pin(eng, study.id)
    if pin is not None:
        return pin
    with _pin_lock:  # one pinning per process; other workers race on the insert (first writer wins)
        pin = pins.get_pin(eng, study.id)
        if pin is not None:
            return pin
        ws = services.workspace()
        check_truth(study, ws)
        fp = workspace_fingerprint(study, ws)
        views = {(s.id, c.id): _compute_view(study, s.id, c.id, ws) for s in study.stimuli for c in study.conditions}
        if services.workspace() is not ws or workspace_fingerprint(study, ws) != fp:
            raise CandorError("the model was switched while the study's stimuli were prepared; please reload")
        return pins.store_pin(eng, study.id, fp, str(ws.name), views)


def pin_status(study: Study) -> str | None:
    """A warning for the researcher when the live workspace differs from the study's pin, else None."""
    pin = pins.get_pin(runtime.engine(), study.id)
    if pin is None:
        return None
    try:
        live = workspace_fingerprint(study)
    except (CandorError, RuntimeError) as err:  # RuntimeError: no workspace loaded
        live = f"unavailable ({err})"
    if live == pin.fingerprint:
        return None
    return (f"The live model differs from the one this study was pinned to on {pin.created_at:%Y-%m-%d %H:%M} UTC "
            f"({pin.model_name}, fingerprint {pin.fingerprint[:12]}; live: {live[:40]}). Participants keep seeing "
            "the pinned advice and explanations; the analyst pages show the live model.")


def stimulus_view(study: Study, item_id: str, condition_id: str) -> StimulusView:
    """The pinned view of ``item_id`` under ``condition_id`` (pinning the study first if needed).

    Raises
    ------
    CandorError
        If the study cannot be pinned (see :func:`pin_study`) or has no such view.
    """
    eng = runtime.engine()
    view = pins.pinned_view(eng, study.id, item_id, condition_id)
    if view is None:
        pin_study(study)
        view = pins.pinned_view(eng, study.id, item_id, condition_id)
    if view is None:
        raise CandorError(f"stimulus {item_id!r} under condition {condition_id!r} was not pinned for this study")
    figure = go.Figure(view["figure"]) if view.get("figure") else None
    return StimulusView(tuple(tuple(f) for f in view["features"]), None, TrialContext(**view["context"]),
                        view["kind"], figure, view.get("statement"),
                        tuple((str(f), float(s)) for f, s in view.get("dropped") or ()))


class _Stimuli:
    """:class:`study.participation.Stimuli` over the live workspace's pinned views."""

    def prepare(self, study: Study) -> Study:
        pin_study(study)
        return resolved(study)

    def context(self, study: Study, item_id: str, condition_id: str) -> TrialContext:
        return stimulus_view(study, item_id, condition_id).context


#: What the participant's use cases read of the explanations (:mod:`study.participation`).
STIMULI = _Stimuli()
