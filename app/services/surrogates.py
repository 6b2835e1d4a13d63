"""Surrogate page services: MUSE two-level decision sets, their frontier against CART and a flat set.

Fits take from one to tens of seconds, so the page runs them as background callbacks (separate processes); results
are kept in an on-disk cache shared by every process, keyed by the fit's settings, and the browser only holds that key
(STYLE B3 rule 5). The cache holds JSON (:func:`workspace.json_cache.json_cache`), never pickles; a store built by
``python -m app build`` provides the default fits.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

# imported here, not inside the functions: fit_muse/fit_frontier run in forked background processes
from explainers._codec import conjunction_text
from explainers.numbers import plain
from explainers.muse import (FrontierPoint, agreement_detail, evaluate_rule_set, majority_label, rule_agreement,
                             surrogate_frontier)

from store.codec import detail_from_dict, frontier_from_dict, quantities_from_dict, rule_set_from_dict
from workspace import settings
from workspace.errors import CandorError
from workspace.json_cache import json_cache
from .applicable import require
from ._core import built_store, is_ready, lazy, workspace
from .warmup import eta_text, warm_status
from .tabular import display_codec, model_labels

DEFAULT_BUDGETS = {"max_rules": 10, "max_width": 3, "max_neighborhoods": 4}
DEFAULT_LAMBDAS = "0.1, 0.1, 0.1, 1, auto"
LAMBDA_NAMES = ("fewer predicates", "feature overlap", "rule overlap", "cover", "fidelity")
FRONTIER_BUDGETS = (2, 5, 10, 20)
RESULTS_VERSION = 3
"""Part of every cache key: results computed by older code (no intervals, no trivial surrogate) are not reused."""


def _results():
    """The surrogate results every process shares: JSON values (no pickle), keyed by :func:`_key`."""
    folder = Path(settings.current().cache_dir) / "results-json"
    return json_cache(folder)


def _split(train_rows: bool = True):
    """Training rows (None unless ``train_rows``: a copy, 21 MB on Adult, issue 23), their model labels, held-out
    rows, theirs."""
    ws, labels = workspace(), np.asarray([workspace().classes[i] for i in _label_index(model_labels())], dtype=object)
    return ws.X.iloc[ws.train_idx] if train_rows else None, labels[ws.train_idx], ws.X.iloc[ws.test_idx], labels[ws.test_idx]


def _label_index(labels: np.ndarray) -> np.ndarray:
    classes = list(workspace().model.classes_)
    return np.array([classes.index(v) for v in labels])


def _content() -> str:
    """What a surrogate is fitted from, as one hash: the table (names, values, target), the split, the model's
    outputs on the probe rows (:func:`~app.services.tabular.fingerprint`) and the classes.

    The cache outlives the server; keyed by the file name alone, a model re-trained into the same file (or a
    store build resumed with another model) was answered with the old model's surrogate."""
    from store.hashes import table_sha256

    from .tabular import fingerprint

    ws = workspace()
    h = hashlib.sha256(table_sha256(ws.X, ws.y).encode())
    h.update(np.ascontiguousarray(ws.train_idx, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(ws.test_idx, dtype=np.int64).tobytes())
    h.update(json.dumps([fingerprint(ws), list(map(str, ws.classes)), ws.source]).encode())
    return h.hexdigest()


_content_key = lazy("surrogate_content_key", _content)


def _key(kind: str, params: dict) -> str:
    blob = json.dumps({"kind": kind, "workspace": _content_key(), "v": RESULTS_VERSION, **params},
                      sort_keys=True, default=str)
    return f"{kind}:{hashlib.sha256(blob.encode()).hexdigest()[:16]}"


def result_keys(params: dict) -> tuple[str, str]:
    """The cache keys of MUSE with ``params`` (:func:`muse_params`) and of the frontier of its settings."""
    return _key("muse", params), _key("frontier", {k: v for k, v in params.items() if k != "max_rules"})


def is_cached(key: str) -> bool:
    """Whether the result ``key`` (a frontier point's: its frontier) is in the shared cache now."""
    return key.partition("|")[0] in _results()


def parse_lambdas(text: str | None) -> list:
    """``"0.1, 0.1, 0.1, 1, auto"`` → ``[0.1, 0.1, 0.1, 1.0, None]`` (MUSE's five λ weights).

    The weights are of (fewer predicates, feature overlap, rule overlap, cover, fidelity); "auto"
    for the fidelity weight lets the fit choose it on a validation split.

    Raises
    ------
    CandorError
        Naming the entry that is not a non-negative number (or "auto" in fifth place).
    """
    parts = [p.strip() for p in (text or DEFAULT_LAMBDAS).split(",")]
    if len(parts) != 5:
        raise CandorError(f"λ weights: give 5 comma-separated numbers ({', '.join(LAMBDA_NAMES)}), got {len(parts)}")
    out = []
    for i, (name, part) in enumerate(zip(LAMBDA_NAMES, parts)):
        if i == 4 and part.lower() == "auto":
            out.append(None)
            continue
        try:
            value = float(part)
        except ValueError:
            value = -1.0
        if not value >= 0:
            raise CandorError(f"λ weight for {name} must be a non-negative number"
                              f"{' or auto' if i == 4 else ''}, got {part!r}")
        out.append(value)
    return out


def muse_params(features_of_interest=None, max_rules=None, max_width=None, max_neighborhoods=None,
                lambdas: str | None = None) -> dict:
    """Validated MUSE settings from the page's controls; raises :class:`CandorError` naming a bad value."""
    names = list(map(str, workspace().X.columns))
    foi = sorted(set(features_of_interest or [])) or None
    unknown = [f for f in foi or [] if f not in names]
    if unknown:
        raise CandorError(f"features of interest not in the data: {', '.join(unknown)}")
    out = {"features_of_interest": foi, "lambdas": parse_lambdas(lambdas)}
    for name, value, hi in (("max_rules", max_rules, 30), ("max_width", max_width, 3),
                            ("max_neighborhoods", max_neighborhoods, 10)):
        v = DEFAULT_BUDGETS[name] if value in (None, "") else value
        if not (isinstance(v, (int, float)) and float(v).is_integer() and 1 <= v <= hi):
            raise CandorError(f"{name.replace('_', ' ')} must be a whole number from 1 to {hi}, got {value!r}")
        out[name] = int(v)
    return out


@dataclass(frozen=True)
class MuseView:
    """A fitted rule set as the page shows it: held-out quantities (agreement with its Wilson 95 %
    interval), per-rule agreement, confusion, and the trivial surrogate on the same rows
    (``detail.trivial_label``, ``detail.trivial_agreement``: always the training majority label)."""

    rule_set: object
    heldout: object
    detail: object
    rule_agreement: np.ndarray
    rule_heldout_support: np.ndarray
    n_train: int
    n_eval: int
    source: str
    rule_texts: tuple[str, ...] = ()
    """Per rule, its decision rule as shown: the user's levels and dates, never codes ("" = always)."""
    neighborhood_texts: tuple[str, ...] = ()
    """Per ``rule_set.neighborhoods`` entry, its descriptor as shown ("" = everywhere)."""


def _with_texts(view: MuseView) -> MuseView:
    """``view`` with display texts of its predicates (computed on reading: the cache holds no texts)."""
    codec, rs = display_codec(), view.rule_set
    return replace(view, rule_texts=tuple(conjunction_text(r.rule, codec) for r in rs.rules),
                   neighborhood_texts=tuple(conjunction_text(d, codec) for d in rs.neighborhoods))


def view_to_json(view: MuseView) -> dict:
    """A fitted :class:`MuseView` (without its display texts) as a JSON object."""
    return {"rule_set": view.rule_set.to_dict(), "heldout": view.heldout.to_dict(), "detail": view.detail.to_dict(),
            "rule_agreement": np.asarray(view.rule_agreement).tolist(),
            "rule_heldout_support": np.asarray(view.rule_heldout_support).tolist(),
            "n_train": int(view.n_train), "n_eval": int(view.n_eval), "source": view.source}


def view_from_json(d: dict) -> MuseView:
    """The :class:`MuseView` of :func:`view_to_json`."""
    return MuseView(rule_set_from_dict(d["rule_set"]), quantities_from_dict(d["heldout"]), detail_from_dict(d["detail"]),
                    np.asarray(d["rule_agreement"], dtype=float), np.asarray(d["rule_heldout_support"], dtype=int),
                    int(d["n_train"]), int(d["n_eval"]), d["source"])


def _view(rule_set, source: str) -> MuseView:
    _, y_train, X_eval, y_eval = _split(train_rows=False)
    agree, support = rule_agreement(rule_set, X_eval, y_eval)
    detail = agreement_detail(rule_set, X_eval, y_eval, trivial_label=majority_label(y_train))
    return MuseView(rule_set, evaluate_rule_set(rule_set, X_eval, y_eval), detail,
                    agree, support, len(workspace().train_idx), len(X_eval), source)


def fit_muse(params: dict) -> str:
    """Fit MUSE with ``params`` (from :func:`muse_params`) unless cached; return the result's key."""
    key = _key("muse", params)
    cache = _results()
    if key not in cache:
        X_train, y_train, _, _ = _split()
        from explainers.muse import TwoLevelDecisionSet  # imports scikit-learn: at a fit, not a server's start

        started = time.perf_counter()
        est = TwoLevelDecisionSet(features_of_interest=params["features_of_interest"], max_rules=params["max_rules"],
                                  max_width=params["max_width"], max_neighborhoods=params["max_neighborhoods"],
                                  lambdas=tuple(params["lambdas"]), seed=0).fit(X_train, y_train)
        fit_seconds = time.perf_counter() - started
        foi = ", ".join(params["features_of_interest"] or []) or "all features"
        source = (f"MUSE two-level decision set (Lakkaraju et al. 2019), fitted to the model's predictions on "
                  f"{len(X_train)} training rows; budgets: {params['max_rules']} rules, width {params['max_width']}, "
                  f"{params['max_neighborhoods']} neighborhoods; descriptors over {foi}; λ weights "
                  f"{', '.join(plain(v, 3, trim=True) for v in est.rule_set_.params['lambdas'])} (fidelity weight "
                  f"{'chosen on a validation split' if params['lambdas'][4] is None else 'set by you'}); seed 0")
        cache.set(key, {**view_to_json(_view(est.rule_set_, source)), "fit_seconds": fit_seconds})
    return key


def _fitted_muse_points(params: dict, evaluate: bool = True) -> dict[int, FrontierPoint | None]:
    """Frontier points of the MUSE fits with ``params`` at a frontier budget that :func:`fit_muse` has cached.

    The frontier fits ``TwoLevelDecisionSet(max_rules=b, seed=0, **params)``: the same estimator as
    :func:`fit_muse` with ``max_rules=b``, so that fit's rule set is the frontier's point (the default MUSE,
    10 rules, is one; a refit cost about 20 CPU seconds on Adult, issue 14). A cached fit without its fit time
    (one copied from a store) is fitted again. ``evaluate=False``: which budgets only (values None).
    """
    cache, points = _results(), {}
    for b in FRONTIER_BUDGETS:
        stored = cache.get(_key("muse", {**params, "max_rules": int(b)}))
        if not stored or "fit_seconds" not in stored:
            continue
        if not evaluate:
            points[int(b)] = None
            continue
        _, _, X_eval, y_eval = _split(train_rows=False)
        rs = rule_set_from_dict(stored["rule_set"])
        held = evaluate_rule_set(rs, X_eval, y_eval)
        points[int(b)] = FrontierPoint("muse", int(b), rs.train.size, rs.train.numpreds, rs.train.numdsets,
                                       held.agreement, float(stored["fit_seconds"]), rs, held.agreement_low,
                                       held.agreement_high)
    return points


def fit_frontier(params: dict, progress=None) -> str:
    """MUSE, CART and flat surrogates over :data:`FRONTIER_BUDGETS`, unless cached; return the key.

    A MUSE fit with these settings at a frontier budget that :func:`fit_muse` has cached is read, not fitted
    again (:func:`_fitted_muse_points`); the points are those :func:`explainers.muse.surrogate_frontier` fits.

    ``progress(done, total)`` is called after each fit; every process can read how far a fit is with
    :func:`frontier_progress` (the warm-up's fit reports to the page this way).
    """
    key = _key("frontier", params)
    cache = _results()
    if key not in cache:
        X_train, y_train, X_eval, y_eval = _split()
        muse = {k: (tuple(v) if k == "lambdas" else v) for k, v in params.items() if k != "max_rules"}
        started = time.time()

        def report(done, total):
            cache.set(f"progress|{key}", {"done": done, "total": total, "elapsed": time.time() - started}, expire=3600)
            if progress is not None:
                progress(done, total)
        reused = _fitted_muse_points(params)
        muse_budgets = [b for b in FRONTIER_BUDGETS if b not in reused]
        others = ("cart", "cart_dl", "flat")
        n_muse, n_others = len(muse_budgets), 2 * len(FRONTIER_BUDGETS)  # cart and cart_dl share one fit
        parts = []
        if muse_budgets:
            parts.append(surrogate_frontier(X_train, y_train, X_eval, y_eval, budgets=muse_budgets, methods=("muse",),
                                            muse_params=muse, seed=0,
                                            progress=lambda done, _t: report(done, n_muse + n_others)))
        rest = surrogate_frontier(X_train, y_train, X_eval, y_eval, budgets=FRONTIER_BUDGETS, methods=others,
                                  muse_params=muse, seed=0,
                                  progress=lambda done, _t: report(n_muse + done, n_muse + n_others))
        muse_points = sorted([p for f in parts for p in f.points] + list(reused.values()), key=lambda p: p.budget)
        cache.set(key, replace(rest, points=(*muse_points, *rest.points)).to_dict())
    return key


def frontier_progress(key: str) -> dict | None:
    """How far the fit of the frontier ``key`` is: ``{"done", "total", "elapsed"}`` (seconds), or None before its
    first surrogate is fitted."""
    return _results().get(f"progress|{key}")


def fit_surrogates(params: dict, progress=None) -> tuple[str, str]:
    """MUSE with ``params`` (:func:`fit_muse`), then the frontier of its settings (:func:`fit_frontier`), as one job.

    ``progress(done, total)`` counts surrogates fitted: 1 for MUSE, then one per frontier fit.
    Returns the keys of the MUSE result and of the frontier.
    """
    frontier_params = {k: v for k, v in params.items() if k != "max_rules"}
    reused = set(_fitted_muse_points(frontier_params, evaluate=False)) | \
        ({int(params["max_rules"])} & set(FRONTIER_BUDGETS))  # fitted just below: the frontier reads it

    total = 1 + 3 * len(FRONTIER_BUDGETS) - len(reused)

    def tell(done, total=total):
        if progress is not None:
            progress(done, total)
    tell(0)
    muse_key = fit_muse(params)
    tell(1)
    frontier_key = fit_frontier(frontier_params, progress=lambda done, total: tell(1 + done, 1 + total))
    tell(total)  # all done, also when the frontier was cached and reported nothing
    return muse_key, frontier_key


def default_frontier_params() -> dict:
    """The frontier's settings at default budgets (MUSE's settings without ``max_rules``: the frontier sweeps it)."""
    return {k: v for k, v in muse_params().items() if k != "max_rules"}


def _default(kind: str, params: dict, fit) -> str:
    """The default fit's key: copied from the store (``<kind>_default.json``) when it has it, else fitted."""
    require("surrogate")
    stored = built_store() and built_store().json(f"{kind}_default.json")
    if not stored:
        return fit(params)
    key, cache = _key(kind, params), _results()
    if key not in cache:
        cache.set(key, stored)
    return key


_default_muse = lazy("muse_default", lambda: _default("muse", muse_params(), fit_muse), warm=True)
_default_frontier = lazy("frontier_default", lambda: _default("frontier", default_frontier_params(), fit_frontier),
                         warm="last")
"""Last in the warm-up: twelve surrogate fits (minutes live on a large table, issue 14) that the Surrogate page
also starts on opening with its own progress bar; the other pages' warm values come first."""


def default_muse_key() -> str:
    """Key of MUSE with default budgets over all features (fitted once, in the warm-up; fitted again, under the same
    key, if its cached result has gone since: evicted, or the cache folder cleared or changed)."""
    key = _default_muse()
    if key not in _results():
        key = _default("muse", muse_params(), fit_muse)
    return key


def page_defaults() -> tuple[str | None, str | None]:
    """The default MUSE key for the Surrogate page, without waiting for the warm-up, and what the page waits for.

    Returns ``(key, note)``: while the warm-up runs, the key once the default MUSE is fitted (else None)
    and a note naming the warm-up step, with the frontier's surrogates fitted so far and a time left
    when the warm-up is fitting it (else None); once the warm-up is over, the key (fitted now if it
    was not) and None.

    Raises
    ------
    CandorError
        If the default MUSE cannot be fitted (once the warm-up is over).
    """
    st = warm_status()
    if not st.running:
        return default_muse_key(), None
    key = default_muse_key() if is_ready("muse_default") else None
    if is_ready("frontier_default"):
        return key, None
    note = f"Waiting for the warm-up to finish the default surrogates: {st.describe()}"
    if st.current == "frontier_default":
        p = frontier_progress(_key("frontier", default_frontier_params()))
        done, total, elapsed = (p["done"], p["total"], p["elapsed"]) if p else (0, 3 * len(FRONTIER_BUDGETS), 0.0)
        note += f": {eta_text(done, total, elapsed, 'surrogates fitted')}"
    return key, note + "."


_ORIGIN = {"cart": "tree leaves", "cart_dl": "the tree's leaves not of the default label, plus the default rule"}


def muse_view(key: str) -> MuseView:
    """The rule set stored under ``key``: a MUSE fit, or ``"<frontier key>|<method>|<budget>"``."""
    cache = _results()
    if "|" in key:
        fkey, method, budget = key.split("|")
        stored = cache.get(fkey)
        if stored is None:
            raise CandorError("that frontier is no longer cached; compute it again")
        frontier = frontier_from_dict(stored)
        point = next((p for p in frontier.points if p.method == method and p.budget == int(budget)), None)
        if point is None:
            raise CandorError(f"no {method} surrogate with budget {budget} in this frontier")
        return _with_texts(_view(point.rule_set, f"{method.upper()} surrogate from the frontier, budget {budget} "
                                 f"(rules read from {_ORIGIN.get(method, 'the candidate pool')})"))
    view = cache.get(key)
    if view is None:
        raise CandorError("that surrogate is no longer cached; fit it again")
    return _with_texts(view_from_json(view))


def frontier(key: str):
    """The :class:`explainers.muse.Frontier` stored under ``key``."""
    value = _results().get(key)
    if value is None:
        raise CandorError("that frontier is no longer cached; compute it again")
    return frontier_from_dict(value)


def feature_names() -> list[str]:
    return list(map(str, workspace().X.columns))
