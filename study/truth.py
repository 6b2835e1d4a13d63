"""The truth of every stimulus comes from the data; a study file may only repeat it.

A stimulus's true label is the loaded table's target for its row, and whether
the model is right on it is the model's label against that target. A study file
may declare ``truth`` and ``model_correct`` (for readability, or to state the
design), but a declaration that differs from the data is an error naming the
stimulus, the declared and the actual value (:func:`check`), so the logged truth
can never silently differ from the file. :func:`design_warnings` says when a
design cannot measure what a reliance study exists for: over-reliance needs
trials where the model is wrong, under-reliance trials where it is right
(Bansal et al. 2021), and unbalanced true classes or item sets confound the
contrast. :func:`resolve` fills both fields from the data.

The facts are computed from a :class:`workspace.workspace.Workspace` by
:func:`facts_from_workspace` with the rule the participant pages use: the
model's label is the explained class when its output is at least the
threshold (0.5 for a probability, 0 for a margin), the other class otherwise.

References
----------
.. [1] Bansal, G. et al. (2021). Does the Whole Exceed its Parts? The Effect of AI
   Explanations on Complementary Team Performance. CHI. arXiv 2006.14779.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from ._located import Error, load_located, path_str
from .randomisation import item_sets
from .schema import Study

__all__ = ["Facts", "predicted_labels", "facts_from_workspace", "data_errors", "check_against", "check",
           "design_warnings", "resolve", "summary_line", "number_text"]


@dataclass(frozen=True)
class Facts:
    """What the data say about one stimulus: its row, true label and the model's label.

    For a numeric study (a regressor) ``truth`` and ``prediction`` are numbers written as text
    (:func:`number_text`) and ``numeric`` is True: there is no right or wrong advice.
    """

    row: int | None
    truth: str
    prediction: str
    numeric: bool = False

    @property
    def model_correct(self) -> bool | None:
        """Whether the model's label equals the true label (None for a numeric answer)."""
        return None if self.numeric else self.truth == self.prediction


def number_text(x: float) -> str:
    """A number as stored and shown in a numeric study: 4 significant digits (``1234``, ``0.1235``)."""
    return f"{float(x):.4g}"


def predicted_labels(ws, rows) -> list[str]:
    """The model's label for each of ``rows`` of the workspace ``ws`` (a binary classifier view).

    Parameters
    ----------
    ws : workspace.workspace.Workspace
        A classifier workspace with ``classes = (rest, explained)``.
    rows : sequence of int
        Row positions in ``ws.X``.

    Returns
    -------
    list of str
        ``ws.positive_class`` where the explained output is >= 0.5 (probability,
        label) or >= 0 (margin), the other class elsewhere.

    Raises
    ------
    ValueError
        If ``ws`` is a regressor (study mode asks for class labels).
    """
    if len(ws.classes) != 2:
        raise ValueError(f"study mode needs a classifier explained as two classes, got classes {list(ws.classes)}")
    rows = list(rows)
    if not rows:
        return []
    out = np.asarray(ws.output(ws.X.iloc[rows]), dtype=float).reshape(-1)
    threshold = 0.0 if ws.output_kind == "margin" else 0.5
    rest, pos = ws.classes[0], ws.positive_class
    return [pos if v >= threshold else rest for v in out]


def facts_from_workspace(study: Study, ws) -> dict[str, Facts]:
    """Truth and model label of every row stimulus of ``study`` in the workspace ``ws``.

    Returns
    -------
    dict of str to Facts
        Keyed by stimulus id; text stimuli are left out (there is no text-model
        service for studies yet).

    Raises
    ------
    ValueError
        If a stimulus row is outside the loaded table (the message names it), or
        the study's outputs are not the model's classes (:func:`data_errors` gives
        each as an :class:`Error` with its line instead).
    """
    problems = data_errors(study, ws)
    if problems:
        raise ValueError(f"study {study.id!r}: " + "; ".join(e.message for e in problems[:5]))
    return _facts(study, ws)


def _facts(study: Study, ws) -> dict[str, Facts]:
    """Facts of the row stimuli that lie inside the table (see :func:`facts_from_workspace`)."""
    n = len(ws.X)
    stims = [s for s in study.stimuli if s.row is not None and 0 <= s.row < n]
    rows = [s.row for s in stims]
    if study.model.numeric:  # a regressor: the target and the model's number
        out = np.asarray(ws.output(ws.X.iloc[rows]), dtype=float).reshape(-1) if rows else []
        y = np.asarray(ws.y, dtype=float)
        return {s.id: Facts(s.row, number_text(y[s.row]), number_text(v), True) for s, v in zip(stims, out)}
    preds = predicted_labels(ws, rows)
    y = np.asarray(ws.y)
    return {s.id: Facts(s.row, str(ws.classes[int(y[s.row])]), p) for s, p in zip(stims, preds)}


def data_errors(study: Study, ws) -> list[Error]:
    """Every mismatch between the study's model section and stimuli and the workspace ``ws``, each at its line.

    Returns
    -------
    list of Error
        Outputs that are not the model's classes (at ``model.outputs``), and one error per
        stimulus row outside the loaded table (at that stimulus's ``row``); empty when none.
    """
    loc = load_located(study.source_text) if study.source_text else None
    out = []
    if study.model.numeric:
        if len(ws.classes):
            line = loc.line(("model", "answer")) if loc is not None else 0
            out.append(Error(line, "model.answer", "a numeric answer needs a regressor; the loaded model is a "
                                                   f"classifier of {[str(c) for c in ws.classes]}"))
    elif tuple(study.model.outputs) != tuple(str(c) for c in ws.classes):
        line = loc.line(("model", "outputs")) if loc is not None else 0
        out.append(Error(line, "model.outputs", f"lists {list(study.model.outputs)} but the loaded model's classes "
                                                f"are {[str(c) for c in ws.classes]}"))
    n = len(ws.X)
    paths = _stimulus_paths(study)
    for s in study.stimuli:
        if s.row is not None and not 0 <= s.row < n:
            path = paths.get(s.id, ("stimuli",))
            path = path + ("row",) if len(path) == 2 else path
            line = loc.line(path) if loc is not None else 0
            out.append(Error(line, path_str(path), f"stimulus {s.id!r}: row {s.row} is outside the loaded table of {n} rows "
                                          f"(0..{n - 1})"))
    return sorted(out)


def check_against(study: Study, ws) -> tuple[list[Error], dict[str, Facts]]:
    """:func:`data_errors` and :func:`check` together: every data error of ``study`` in one list, and the facts.

    Outputs that are not the model's classes stop the truth check (the labels cannot be compared);
    rows outside the table are reported and the other stimuli are still checked.
    """
    errors = data_errors(study, ws)
    if any(e.path in ("model.outputs", "model.answer") for e in errors):
        return errors, {}
    facts = _facts(study, ws)
    return sorted(errors + check(study, facts)), facts


def _stimulus_paths(study: Study) -> dict[str, tuple]:
    """Stimulus id to its YAML path (for line numbers)."""
    loc = load_located(study.source_text) if study.source_text else None
    data = loc.data if loc is not None and isinstance(loc.data, dict) else {}
    s = data.get("stimuli")
    if isinstance(s, list):
        return {str(x.get("id")): ("stimuli", i) for i, x in enumerate(s) if isinstance(x, dict)}
    if isinstance(s, dict) and "rows" in s:
        return {f"row-{r}": ("stimuli", "rows", i) for i, r in enumerate(s["rows"])}
    return {}


def check(study: Study, facts: Mapping[str, Facts]) -> list[Error]:
    """Errors for every declared ``truth`` or ``model_correct`` that differs from the data.

    Parameters
    ----------
    study : Study
    facts : mapping of stimulus id to Facts
        From :func:`facts_from_workspace` (or the pinned views).

    Returns
    -------
    list of Error
        One per conflicting field, at the stimulus's line, naming the stimulus,
        the declared and the actual value; empty when the file agrees with the data.
    """
    loc = load_located(study.source_text) if study.source_text else None
    paths = _stimulus_paths(study)
    out = []

    def err(stim_id, key, message):
        path = paths.get(stim_id, ("stimuli",))
        line = loc.line(path + (key,)) if loc is not None and len(path) == 2 else (loc.line(path) if loc else 0)
        where = f"stimuli[{path[1]}].{key}" if len(path) == 2 else "stimuli"
        out.append(Error(line, where, message))

    for s in study.stimuli:
        f = facts.get(s.id)
        if f is None:
            continue
        row = f" (row {f.row})" if f.row is not None else ""
        if f.numeric:
            if s.truth is not None and number_text(float(s.truth)) != f.truth:
                err(s.id, "truth", f"stimulus {s.id!r}{row} declares truth {s.truth} but the data's target is "
                                   f"{f.truth}; remove 'truth' (it comes from the data) or correct it")
            continue
        if s.truth is not None and s.truth != f.truth:
            err(s.id, "truth", f"stimulus {s.id!r}{row} declares truth {s.truth!r} but the data's target is "
                               f"{f.truth!r}; remove 'truth' (it comes from the data) or correct it")
        if s.model_correct is not None and s.model_correct != f.model_correct:
            err(s.id, "model_correct",
                f"stimulus {s.id!r}{row} declares model_correct: {str(s.model_correct).lower()} but the model "
                f"predicts {f.prediction!r} and the data's target is {f.truth!r} "
                f"(model_correct: {str(f.model_correct).lower()})")
    return sorted(out)


def resolve(study: Study, facts: Mapping[str, Facts]) -> Study:
    """``study`` with every stimulus's ``truth`` and ``model_correct`` taken from ``facts``.

    Stimuli without facts (text stimuli) keep their declared values.
    """
    stims = tuple(replace(s, truth=facts[s.id].truth, model_correct=facts[s.id].model_correct)
                  if s.id in facts else s for s in study.stimuli)
    return replace(study, stimuli=stims)


def design_warnings(study: Study, facts: Mapping[str, Facts]) -> list[str]:
    """Warnings for a design that cannot measure reliance, or confounds it.

    Returns
    -------
    list of str
        - the model is right on every stimulus: over-reliance (following wrong
          advice) cannot be measured;
        - the model is wrong on every stimulus: under-reliance cannot be measured;
        - the true classes are unbalanced (a class is missing, or the commonest
          has more than twice the stimuli of the rarest);
        - a within-subject study whose item sets hold different numbers of
          model-wrong stimuli (condition and difficulty would be confounded).
    """
    known = [facts[s.id] for s in study.stimuli if s.id in facts]
    if not known or study.model.numeric:  # reliance on right or wrong advice: label studies only
        return []
    out = []
    n_wrong = sum(not f.model_correct for f in known)
    if n_wrong == 0:
        out.append(f"the model is right on all {len(known)} stimuli, so over-reliance (following wrong advice) "
                   "cannot be measured; add stimuli the model gets wrong")
    elif n_wrong == len(known):
        out.append(f"the model is wrong on all {len(known)} stimuli, so under-reliance (rejecting right advice) "
                   "cannot be measured; add stimuli the model gets right")
    counts = Counter(f.truth for f in known)
    per_class = {o: counts.get(o, 0) for o in study.model.outputs}
    lo, hi = min(per_class.values()), max(per_class.values())
    if lo == 0 or hi > 2 * lo:
        out.append(f"unbalanced design: the stimuli's true classes are {per_class}; a participant who always "
                   f"answers {max(per_class, key=per_class.get)!r} is right on {hi / len(known):.0%} of them")
    if study.design == "within":
        try:
            sets = item_sets([s.id for s in study.stimuli], len(study.conditions))
        except ValueError:
            sets = []
        wrong_per_set = [sum(1 for item in items if item in facts and not facts[item].model_correct) for items in sets]
        if sets and len(set(wrong_per_set)) > 1:
            out.append(f"unbalanced design: the within-subject item sets hold {wrong_per_set} model-wrong stimuli; "
                       "order the stimuli so that each set holds the same number")
    return out


def summary_line(facts: Mapping[str, Facts]) -> str:
    """``model wrong on K of N stimuli (P%)``, the share the design states."""
    n = len(facts)
    if any(f.numeric for f in facts.values()):
        err = [abs(float(f.prediction) - float(f.truth)) for f in facts.values()]
        return f"numeric advice on {n} stimuli, mean absolute error {number_text(sum(err) / n)}" if n else ""
    k = sum(not f.model_correct for f in facts.values())
    return f"model wrong on {k} of {n} stimuli ({k / n:.0%})" if n else "no row stimuli"
