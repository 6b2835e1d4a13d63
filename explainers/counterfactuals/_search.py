"""The counterfactual search: a beam over changes of whole features, then each find minimised, all under a budget.

1. Every single change (a feature to one of its candidate values) is scored, in batches.
2. A beam of the states nearest the flip (half by output, half by output gained per unit of distance) grows by one
   more change each (the three best values per feature from step 1), up to ``max_changes`` features; a state that
   costs more than the ``pool``-th cheapest find already is not grown (a change never costs less than nothing).
3. Each find is minimised: a change the flip does not need is undone, a number's change is drawn back towards the
   row's value (a quarter, half or three quarters of the way), round after round while one still flips.

Nothing is random: ties go to the feature and value first in the table. The budget counts rows the model scores.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ._space import Feature

State = tuple  # ((feature index, value tuple), ...) sorted by feature index
STEPS = (0.25, 0.5, 0.75)
"""Where a number's change is drawn back to, as a share of the way from the row's value to the change's."""
MINIMISE_ROUNDS = 4


class Budget:
    """The model behind a budget of scored rows: :meth:`score` scores what the budget still allows.

    Parameters
    ----------
    predict : callable
        Encoded rows of shape (n, n_columns) to outputs of shape (n,).
    budget : int
        The most rows scored in all.
    batch : int
        The most rows of one call.
    progress : callable or None
        ``progress(rows scored, budget)`` after each call.
    """

    def __init__(self, predict: Callable, budget: int, batch: int, progress: Callable | None = None) -> None:
        self.predict, self.budget, self.batch, self.progress = predict, int(budget), int(batch), progress
        self.n_rows = self.n_calls = 0
        self.exhausted = False

    def score(self, Z: np.ndarray) -> np.ndarray:
        """Outputs of the first rows of ``Z`` the budget allows (fewer than ``len(Z)`` once it is spent)."""
        left = self.budget - self.n_rows
        if len(Z) > left:
            self.exhausted = True
            Z = Z[:max(left, 0)]
        out = []
        for start in range(0, len(Z), self.batch):
            chunk = Z[start:start + self.batch]
            out.append(np.asarray(self.predict(chunk), dtype=float).reshape(-1))
            self.n_calls += 1
            self.n_rows += len(chunk)
            if self.progress is not None:
                self.progress(self.n_rows, self.budget)
        return np.concatenate(out) if out else np.empty(0)


@dataclass
class Problem:
    """One row's search: the row, its features, which may move, and the decision to flip.

    ``flips(s)`` is True for outputs on the other side of ``threshold``; ``margin(s)`` is how far past it they are
    (negative before the flip).
    """

    x: np.ndarray
    features: Sequence[Feature]
    movable: tuple[int, ...]
    threshold: float
    positive: bool
    _costs: dict = field(default_factory=dict, repr=False)

    def margin(self, s: np.ndarray) -> np.ndarray:
        return (self.threshold - s) if self.positive else (s - self.threshold)

    def flips(self, s: np.ndarray) -> np.ndarray:
        return s < self.threshold if self.positive else s >= self.threshold

    def row(self, state: State) -> np.ndarray:
        z = self.x.copy()
        for f, v in state:
            z[list(self.features[f].columns)] = v
        return z

    def cost(self, state: State) -> float:
        return float(sum(self._change_cost(f, v) for f, v in state))

    def _change_cost(self, f: int, v: tuple) -> float:
        """One change's cost, remembered (a search asks for the same few thousand again and again)."""
        key = (f, v)
        if key not in self._costs:
            self._costs[key] = float(self.features[f].cost(self.x[list(self.features[f].columns)], np.array(v))[0])
        return self._costs[key]


def _with(state: State, f: int, v: tuple) -> State:
    return tuple(sorted([*(c for c in state if c[0] != f), (f, v)], key=lambda c: c[0]))


def _score(p: Problem, budget: Budget, states: list) -> list[tuple[State, float]]:
    """``(state, output)`` of each state the budget allows, in order."""
    if not states:
        return []
    out = budget.score(np.stack([p.row(s) for s in states]))
    return list(zip(states, out.tolist()))


def _singles(p: Problem) -> list[State]:
    out = []
    for f in p.movable:
        feat = p.features[f]
        here = p.x[list(feat.columns)]
        for v in feat.values:
            if feat.cost(here, v)[0] > 0:
                out.append(((f, tuple(float(a) for a in v)),))
    return out


def _best_values(p: Problem, scored: list, per_feature: int) -> dict[int, list[tuple]]:
    """The ``per_feature`` single changes of each feature nearest the flip (from step 1)."""
    by_feature: dict[int, list] = {}
    for (change,), s in scored:
        by_feature.setdefault(change[0], []).append((-float(p.margin(np.array(s))), len(by_feature.get(change[0], [])),
                                                     change[1]))
    return {f: [v for *_, v in sorted(vals)[:per_feature]] for f, vals in by_feature.items()}


def _beam(p: Problem, open_: list, width: int, bound: float) -> list[State]:
    """The ``width`` open states to grow: half nearest the flip, half with the most gained per unit of distance."""
    live = [(st, s, c) for st, s, c in open_ if c < bound]
    near = sorted(live, key=lambda t: (-p.margin(np.array(t[1])), t[2]))
    thrifty = sorted(live, key=lambda t: (-(p.margin(np.array(t[1])) / max(t[2], 1e-9)), t[2]))
    chosen, seen = [], set()
    for st, *_ in [*near[:width - width // 2], *thrifty]:
        if st not in seen and len(chosen) < width:
            seen.add(st)
            chosen.append(st)
    return chosen


def search(p: Problem, budget: Budget, *, pool: int, beam: int, per_feature: int, max_changes: int) -> list[tuple[State, float]]:
    """Steps 1 and 2: every find ``(state, output)`` within the budget (not yet minimised)."""
    singles = _singles(p)
    scored = _score(p, budget, singles)
    finds = [(st, s) for st, s in scored if p.flips(np.array(s))]
    best = _best_values(p, scored, per_feature)
    open_ = [(st, s, p.cost(st)) for st, s in scored if not p.flips(np.array(s))]
    seen = set(singles)
    for _ in range(max_changes - 1):
        costs = sorted(p.cost(st) for st, _ in finds)
        bound = costs[pool - 1] if len(costs) >= pool else np.inf
        grown = []
        for st in _beam(p, open_, beam, bound):
            have = {f for f, _ in st}
            for f in p.movable:
                for v in best.get(f, []) if f not in have else []:
                    new = _with(st, f, v)
                    if new not in seen and p.cost(new) < bound:
                        seen.add(new)
                        grown.append(new)
        if not grown or budget.exhausted:
            break
        scored = _score(p, budget, grown)
        finds += [(st, s) for st, s in scored if p.flips(np.array(s))]
        open_ = [(st, s, p.cost(st)) for st, s in scored if not p.flips(np.array(s))]
    return finds


def _drawn_back(p: Problem, f: int, v: tuple) -> list[tuple]:
    feat = p.features[f]
    if feat.kind != "numeric" or np.isnan(p.x[feat.columns[0]]) or np.isnan(v[0]):
        return []
    a, b = float(p.x[feat.columns[0]]), float(v[0])
    out = []
    for t in STEPS:
        w = a + t * (b - a)
        w = float(np.round(w)) if feat.integer else w
        if w != a and w != b and (w,) not in out:
            out.append((w,))
    return out


def _shrinks(p: Problem, state: State) -> list[State]:
    """States one step cheaper than ``state``: one change undone, or one number drawn back."""
    out = [tuple(c for c in state if c[0] != f) for f, _ in state] if len(state) > 1 else []
    for f, v in state:
        out += [_with(state, f, w) for w in _drawn_back(p, f, v)]
    return out


def minimise(p: Problem, budget: Budget, finds: list[tuple[State, float]]) -> list[tuple[State, float]]:
    """Step 3: each find made as cheap as its neighbours allow, round after round (within the budget)."""
    current = {st: s for st, s in finds}
    for _ in range(MINIMISE_ROUNDS):
        asks = {st: _shrinks(p, st) for st in current}
        flat = list(dict.fromkeys(sh for shs in asks.values() for sh in shs))
        if not flat or budget.exhausted:
            break
        outputs = dict(_score(p, budget, flat))
        changed, nxt = False, {}
        for st, s in current.items():
            ok = [(p.cost(sh), sh) for sh in asks[st] if sh in outputs and p.flips(np.array(outputs[sh]))]
            if ok:
                c, sh = min(ok, key=lambda t: (t[0], len(t[1])))
                if c < p.cost(st):
                    nxt.setdefault(sh, outputs[sh])
                    changed = True
                    continue
            nxt.setdefault(st, s)
        current = nxt
        if not changed:
            break
    return list(current.items())
