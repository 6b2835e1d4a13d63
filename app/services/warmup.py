"""What the start-up warm-up has computed and what it is computing now, for pages that wait for it (issue 14).

The warm-up (:func:`app.services.install`) computes the values registered with ``lazy(..., warm=True)``
one after another in a background thread; a panel that needs one of them says which step runs, how
many are done, and (where a step reports its own progress) how far it is.
"""
from __future__ import annotations

from dataclasses import dataclass

from explainers.methods import TABULAR

from . import _core

STEP_NAMES = {"shap_all": "global SHAP", "labels": "the model's labels on every row",
              "muse_default": "the default MUSE surrogate", "frontier_default": "the surrogate frontier",
              "persuasive_global": "the Persuasive page's held-out curves",
              "cohort_story": "the Cohorts page's story measures",
              **{m.name: m.title for m in TABULAR if m.scope == "global"}}  # a global method's warm value
"""How the page names each warm value (a value not listed is named by its registry name)."""


@dataclass(frozen=True)
class WarmStatus:
    """The warm-up as a page reports it.

    ``running``: the warm-up has not finished (``/_candor/ready`` answers 503). ``done`` of ``total`` steps
    are computed; ``current`` is the first step (in warm-up order, numbered ``step`` from 1) not yet
    computed: the one running (None, and ``step`` 0, when all are).
    """

    running: bool
    done: int
    total: int
    current: str | None
    step: int = 0

    def describe(self) -> str:
        """"warm-up step 2 of 5 (global SHAP)", or "" when the warm-up is not running."""
        if not self.running:
            return ""
        if self.current is None:
            return f"warm-up finishing ({self.done} of {self.total} steps done)"
        return f"warm-up step {self.step} of {self.total} ({STEP_NAMES.get(self.current, self.current)})"


def warm_status() -> WarmStatus:
    """How far the warm-up is (never waits for it)."""
    names = list(_core._warm_order)
    ready = [_core.is_ready(n) for n in names]
    step = next((i + 1 for i, r in enumerate(ready) if not r), 0)
    return WarmStatus(running=not _core.warm_done.is_set(), done=sum(ready), total=len(names),
                      current=names[step - 1] if step else None, step=step)


def waiting_for(name: str) -> str | None:
    """What a panel that needs the warm value ``name`` says while the warm-up has not computed it, else None.

    E.g. "Waiting for the warm-up: warm-up step 1 of 5 (global SHAP); 0 of 5 steps done.", or for a multiclass
    model (a class switch computes its values again, live when the store holds another class's) "Computing global
    SHAP for class class_0 live (the store holds another class's results): step 1 of 7 (global SHAP); 0 of 7
    steps done." The panel asks again later instead of holding a request until the value exists.
    """
    st = warm_status()
    if not st.running or _core.is_ready(name):
        return None
    if name == "shap_all" and _core.built_store() is not None and _core.built_store().manifest.get("global"):
        return None  # a store holds it: reading it now costs milliseconds, a poll would cost a second
    what = STEP_NAMES.get(name, name)
    chosen = _chosen_class()
    if chosen is None:
        return f"Waiting for the warm-up to compute {what}: {st.describe()}; {st.done} of {st.total} steps done."
    live = (" live (the store holds another class's results)"
            if _core.state().opened_store is not None and _core.built_store() is None else "")
    step = f"step {st.step} of {st.total} ({STEP_NAMES.get(st.current, st.current)})" if st.current else \
        f"finishing ({st.done} of {st.total} steps done)"
    return f"Computing {what} for class {chosen}{live}: {step}; {st.done} of {st.total} steps done."


def _chosen_class() -> str | None:
    """The class a multiclass model is explained for (its pages, and the values computed after a class switch),
    or None for other models."""
    ws = _core.workspace()
    if ws.task != "multiclass":
        return None
    return ws.classes[1]


def eta_text(done: int, total: int, elapsed_s: float, unit: str = "") -> str:
    """"5 of 12 surrogates fitted, about 20 s left" (``unit`` "surrogates fitted"), the time left as
    :func:`time_left` says it."""
    text = f"{done} of {total}" + (f" {unit}" if unit else "")
    left = time_left(done, total, elapsed_s)
    return f"{text}, {left}" if left else text


def time_left(done: int, total: int, elapsed_s: float) -> str:
    """"about 20 s left", from the mean time per item so far; "" before the first item or after the last."""
    if 0 < done < total and elapsed_s > 0:
        return f"about {max(1, round(elapsed_s / done * (total - done)))} s left"
    return ""
