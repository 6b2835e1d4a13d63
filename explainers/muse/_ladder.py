"""Budget ladder: MUSE keeps the best set it finds at any budget up to the one asked.

Lakkaraju, Kamar, Caruana, Leskovec (2019), "Faithful and Customizable Explanations of Black Box
Models", AIES, doi 10.1145/3306618.3314229, maximise one objective under the budgets
``eps1`` (rules), ``eps2`` (width), ``eps3`` (neighborhoods). A set feasible at a smaller budget is
feasible at a larger one, so the optimum cannot fall when a budget rises; an approximate local
search can. Measured before this module (held-out agreement, ``max_predicates``): breast cancer
0.937 at 4 predicates, 0.902 at 6-8; training agreement 0.993 at ``max_width=4``, 0.984 at 5.

[D] Besides the search at the asked budget ``B`` the fit searches, under *the same objective*
``F_B`` (the asked budget's scales and fidelity weight), every smaller value of each budget with
the others as asked ("rungs"): each rung starts from the rung below it (feasible there) and from the
tree starts that fit, with one cold round on an axis's first rung; the width rungs use the pool's
candidates whose descriptor and rule each have at most that width. The sets the fidelity-weight
validation found (each a local optimum of another weight, on 75 % of the rows) join as
candidates. The search at ``B`` runs as it would alone (cold rounds and tree starts), and once more
from the two best sets found so far. The fit returns the
candidate with the largest ``F_B`` on all fit rows, so ``F_B(result) >= F_B(S)`` for every set
``S`` found at any rung. What is *not* guaranteed: a separate fit at a smaller budget chooses its
own fidelity weight and pool, so its set is not among the candidates; the tests measure
agreement against such fits on breast cancer and COMPAS instead.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._pool import Pool
from ._search import Scales, _objective, local_search

__all__ = ["Budget", "rungs", "selection_objective", "part_widths", "Problem"]


@dataclass(frozen=True)
class Budget:
    """The four budgets of one search (``max_predicates`` None: no knapsack)."""

    max_rules: int
    max_width: int
    max_neighborhoods: int | None
    max_predicates: int | None


def rungs(asked: Budget) -> list[list[Budget]]:
    """Per budget axis, the budgets with that axis at each smaller value (ascending), others as asked.

    Parameters
    ----------
    asked : Budget

    Returns
    -------
    list of list of Budget
        One ladder per axis that has a smaller value (``max_neighborhoods`` None has none; a
        predicate ladder starts at 1).

    Examples
    --------
    >>> [len(r) for r in rungs(Budget(3, 2, 2, None))]
    [2, 1, 1]
    """
    out = []
    for name in ("max_rules", "max_width", "max_neighborhoods", "max_predicates"):
        v = getattr(asked, name)
        if v is None or v <= 1:
            continue
        out.append([Budget(**{**asked.__dict__, name: k}) for k in range(1, int(v))])
    return out


def part_widths(pool: Pool, width_of) -> np.ndarray:
    """Largest of ``width(q)`` and ``width(s)`` per candidate (what ``max_width`` bounds)."""
    wq = np.array([width_of(d) for d in pool.desc] or [0])
    ws = np.array([width_of(s) for s in pool.dl] or [0])
    return np.maximum(wq[pool.q_id], ws[pool.s_id]) if len(pool.q_id) else np.zeros(0, int)


def selection_objective(sel, cov, wrong, npreds, q_id, s_id, A, weights, lam, sc: Scales) -> float:
    """``F(S) = sum_k lambda_k f_k(S)`` of the candidate indices ``sel``, computed from scratch.

    Parameters
    ----------
    sel : sequence of int
    cov : ndarray of bool, shape (n_candidates, n_rows)
    wrong, npreds, q_id, s_id : ndarray of shape (n_candidates,)
    A : ndarray of shape (n_descriptors, n_rules_pool)
    weights : ndarray of shape (n_rows,)
    lam : sequence of 5 floats
    sc : Scales

    Returns
    -------
    float
    """
    sel = list(sel)
    c = cov[sel].sum(axis=0).astype(np.int64) if sel else np.zeros(cov.shape[1], np.int64)
    dc = np.bincount(q_id[sel], minlength=A.shape[0]) if sel else np.zeros(A.shape[0], np.int64)
    scn = np.bincount(s_id[sel], minlength=A.shape[1]) if sel else np.zeros(A.shape[1], np.int64)
    fo = float((dc > 0).astype(np.float64) @ A @ scn)
    return float(_objective([float(v) for v in lam], sc, float(np.sum(npreds[sel])), fo,
                            float(weights @ (c * (c - 1) // 2)), float(weights @ (c > 0)),
                            float(np.sum(wrong[sel]))))


@dataclass
class Problem:
    """One search problem on merged rows: the pool's arrays, the row weights and the objective."""

    cov: np.ndarray
    wrong: np.ndarray
    npreds: np.ndarray
    q_id: np.ndarray
    s_id: np.ndarray
    A: np.ndarray
    weights: np.ndarray
    widths: np.ndarray
    lam: list
    scales: Scales
    n_moves: int = 0
    hit_move_cap: bool = False

    def objective(self, sel) -> float:
        """``F`` of a selection (see :func:`selection_objective`)."""
        return selection_objective(sel, self.cov, self.wrong, self.npreds, self.q_id, self.s_id, self.A,
                                   self.weights, self.lam, self.scales)

    def search(self, b: Budget, *, starts=(), n_rounds: int, search_kw: dict):
        """Local search of ``F`` at budget ``b`` over the candidates ``b.max_width`` admits.

        Returns
        -------
        tuple of int
            Selected indices into the full pool.
        """
        keep = np.flatnonzero(self.widths <= b.max_width)
        pos = {int(k): i for i, k in enumerate(keep)}
        sub = [[pos[int(k)] for k in st] for st in starts if all(int(k) in pos for k in st)]
        if not len(keep):
            return ()
        res = local_search(self.cov[keep], self.wrong[keep], self.npreds[keep], self.q_id[keep], self.s_id[keep],
                           self.A, lambdas=self.lam, scales=self.scales, max_rules=b.max_rules,
                           max_neighborhoods=b.max_neighborhoods, max_predicates=b.max_predicates,
                           starts=sub, weights=self.weights, n_rounds=n_rounds, **search_kw)
        self.n_moves += res.n_moves
        self.hit_move_cap |= res.hit_move_cap
        return tuple(int(keep[i]) for i in res.selected)


def climb(problem: Problem, asked: Budget, tree_starts, extra_starts, search_kw: dict, n_rounds: int):
    """Search every rung and the asked budget under one objective; the best selection found.

    Parameters
    ----------
    problem : Problem
    asked : Budget
    tree_starts : sequence of sequences of int
        Starting sets from trees (infeasible ones are skipped per rung).
    extra_starts : sequence of sequences of int
        Further sets feasible at ``asked`` (the validation searches' selections).
    search_kw : dict
        ``max_moves``, ``delta``, ``max_exchange`` of :func:`local_search`.
    n_rounds : int
        Cold rounds at the asked budget.

    Returns
    -------
    selected : tuple of int
    objective : float
    n_found : int
        Candidate selections compared.
    """
    found = [tuple(int(k) for k in st) for st in extra_starts]
    for ladder in rungs(asked):
        prev: tuple[int, ...] = ()
        for i, b in enumerate(ladder):
            prev = problem.search(b, starts=list(tree_starts) + ([list(prev)] if prev else []),
                                  n_rounds=1 if i == 0 else 0, search_kw=search_kw)
            found.append(prev)
    ranked = sorted({s for s in found if s}, key=lambda s: (-problem.objective(s), s))
    final = problem.search(asked, starts=tree_starts, n_rounds=n_rounds, search_kw=search_kw)  # as without rungs
    warm = problem.search(asked, starts=[list(s) for s in ranked[:2]], n_rounds=0, search_kw=search_kw) if ranked else ()
    cands = [final, warm] + ranked
    objs = [problem.objective(s) for s in cands]
    best = int(np.argmax(objs))  # the asked budget's own search wins ties
    return cands[best], objs[best], len(cands)
