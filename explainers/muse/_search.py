"""Approximate local search for the BETA/MUSE objective (docs/methods.md, "Rule surrogates: MUSE and CART").

The faithful algorithm is Lee, Mirrokni, Nagarajan, Sviridenko (2009, "Non-monotone
submodular maximization under matroid and knapsack constraints", STOC) as used by
BETA (Lakkaraju et al. 2017, arXiv 1707.01154) [P]. Product choices [D], all
parameters of :func:`local_search`:

* moves are add (``|E| = 0``), delete, and exchange of one candidate ``d`` for a set ``E``
  of up to ``max_exchange`` selected ones (the paper's ``|E| <= k``, ``k = 3``); exchanges with
  ``|E| >= 2`` are tried only when no add, delete or one-for-one exchange improves, since they
  cost ``C(|S|, |E|)`` passes over the candidates;
* an optional knapsack budget on ``numpreds`` (``max_predicates``; Lee et al. treat matroid and
  knapsack constraints together) is checked on every move;
* each step evaluates *every* move of a kind at once and takes the best
  improving one (best-improvement; the earlier default was first-improvement);
* a move is accepted when ``F_new > (1 + max(delta / n_r**4, 1e-9)) * F_old``;
* coverage is kept incrementally: a per-row count of selected triples, and the
  gains of all candidates come from one ``(n_candidates, n_rows) @ (n_rows, m)``
  product, so a move costs O(rows) per candidate.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

__all__ = ["Scales", "SearchResult", "make_scales", "local_search"]


@dataclass(frozen=True)
class Scales:
    """Offsets ``R`` and scales ``S`` so that ``f_k = R_k - term_k / S_k >= 0``."""

    P: float
    O: float
    R3: float
    S3: float
    S4: float
    R5: float
    S5: float


def make_scales(kind: str, n_rows: int, n_cand: int, n_desc: int, max_rules: int,
                max_width: int, max_neighborhoods: int) -> Scales:
    """Normalising constants of the five objective terms.

    ``"feasible"`` [D] divides fidelity, coverage and overlap by ``n_rows`` and
    the predicate terms by their largest value on a feasible set, so one wrongly
    covered row costs as much as one newly covered row gains. ``"spec"`` is the
    literal reading of the BETA/MUSE bounds (``f_k / f_k^max`` with the safe bounds
    ``2 W n``, ``W |ND| n``, ``N n^2``, ``N``, ``N n``); with a few thousand
    candidates it makes the fidelity term about ``1/n`` as heavy as coverage.
    """
    N, n = float(max(n_rows, 1)), float(max(n_cand, 1))
    if kind == "feasible":
        return Scales(P=2.0 * max_width * max_rules, O=max(1.0, max_width * max_rules * max_neighborhoods),
                      R3=max_rules * (max_rules - 1) / 2.0, S3=N, S4=N, R5=float(max_rules), S5=N)
    if kind == "spec":
        return Scales(P=2.0 * max_width * n, O=max(1.0, max_width * max(n_desc, 1) * n),
                      R3=1.0, S3=N * n * n, S4=N, R5=1.0, S5=N * n)
    raise ValueError(f"normalisation must be 'feasible' or 'spec', got {kind!r}")


@dataclass(frozen=True)
class SearchResult:
    """Selected candidate indices (in selection order) and search statistics."""

    selected: tuple[int, ...]
    objective: float
    n_moves: int
    hit_move_cap: bool
    round_objectives: tuple[float, ...]


def _objective(lam, sc: Scales, npreds, fo, ro, cover, dis):
    return (lam[0] * (1.0 - npreds / sc.P) + lam[1] * (1.0 - fo / sc.O) + lam[2] * (sc.R3 - ro / sc.S3)
            + lam[3] * cover / sc.S4 + lam[4] * (sc.R5 - dis / sc.S5))


class _State:
    def __init__(self, n_rows: int, n_desc: int, n_dl: int):
        self.sel: list[int] = []
        self.c = np.zeros(n_rows, dtype=np.int32)
        self.dcount = np.zeros(n_desc, dtype=np.int64)
        self.scount = np.zeros(n_dl, dtype=np.int64)
        self.npreds = self.dis = self.ro = self.cover = 0.0

    def move(self, r: int, sign: int, cov, q_id, s_id, npreds, wrong) -> None:
        """Add (``sign`` +1) or remove (-1) candidate ``r`` and its counts; :meth:`refresh` then."""
        if sign > 0:
            self.sel.append(r)
        else:
            self.sel.remove(r)
        self.c += sign * cov[r]
        self.dcount[q_id[r]] += sign
        self.scount[s_id[r]] += sign
        self.npreds += sign * npreds[r]
        self.dis += sign * wrong[r]

    def refresh(self, w) -> None:
        """Weighted cover and pairwise overlap of the selected rules, from the coverage counts."""
        self.cover = float(w @ (self.c > 0))
        self.ro = float(w @ (self.c.astype(np.int64) * (self.c - 1) // 2))


def local_search(cov: np.ndarray, wrong: np.ndarray, npreds: np.ndarray, q_id: np.ndarray,
                 s_id: np.ndarray, A: np.ndarray, *, lambdas, scales: Scales, max_rules: int,
                 max_neighborhoods: int | None, n_rounds: int = 4, max_moves: int = 500,
                 delta: float = 0.01, max_exchange: int = 3, max_predicates: int | None = None,
                 starts=None, max_starts: int = 2, weights=None) -> SearchResult:
    """Maximise ``sum_k lambda_k f_k(S)`` under the size and neighborhood budgets.

    Parameters
    ----------
    cov : ndarray of bool, shape (n_candidates, n_rows)
        Coverage of each candidate triple ``q AND s`` (rows may be distinct patterns, see ``weights``).
    wrong : ndarray of shape (n_candidates,)
        Covered rows whose black-box label differs from the triple's label (weighted count).
    npreds : ndarray of shape (n_candidates,)
        ``width(q) + width(s)`` in predicates (width budget already applied).
    q_id, s_id : ndarray of int, shape (n_candidates,)
        Descriptor and decision-rule index of each candidate.
    A : ndarray of shape (n_descriptors, n_rules_pool)
        ``|feat(q) & feat(s)|`` for every pair (the featureoverlap kernel).
    lambdas : sequence of 5 floats
    scales : Scales
    max_rules : int
        Matroid budget on ``size``.
    max_neighborhoods : int or None
        Matroid budget on ``numdsets``; None disables it (flat sets).
    n_rounds : int, default=4
        ``k + 1`` rounds of Lee et al.; round ``r`` excludes earlier solutions. 0 runs only the
        rounds from ``starts`` (one cold round if none of them is feasible).
    max_moves : int, default=500
        Cap on accepted moves per round.
    delta : float, default=0.01
    max_exchange : int, default=3
        Largest ``|E|`` of an exchange (``k`` of Lee et al.; 1 = one-for-one swaps only).
    max_predicates : int or None, default=None
        Knapsack budget on ``numpreds`` (None: none).
    starts : sequence of sequences of int, optional
        Feasible selections to start extra rounds from (e.g. a tree's leaves read as triples);
        infeasible ones are skipped. A local optimum reached from any start carries the same
        guarantee as one reached from the best single element.
    weights : ndarray of shape (n_rows,), optional
        Rows each column of ``cov`` stands for (identical coverage and label patterns merged, an
        exact reduction: every term is a sum over rows); default 1.
    max_starts : int, default=2
        Of the feasible ``starts``, the ones with the highest objective that get a round.

    Returns
    -------
    SearchResult
        Empty selection (objective of the empty set) when there are no candidates.
    """
    n, N = cov.shape
    w = np.ones(N, np.float64) if weights is None else np.asarray(weights, dtype=np.float64)
    pb = _Problem(cov, w, wrong, npreds, q_id, s_id, A, lambdas, scales, max_rules,
                  max_neighborhoods if max_neighborhoods is not None else n + 1,
                  float("inf") if max_predicates is None else float(max_predicates), max_exchange)
    starts = pb.best_starts(starts, max_starts)
    used = np.zeros(n, dtype=bool)
    results, total_moves, capped = [], 0, False
    n_cold = n_rounds if (n_rounds == 0 and starts) else max(1, n_rounds)
    for r in range(n_cold + len(starts)):
        start = starts[r - n_cold] if r >= n_cold else []
        avail0 = ~used if not start else np.ones(n, bool)
        if not avail0.any():
            continue
        F, sel, moves = pb.climb(start, avail0, delta, max_moves)
        total_moves += moves
        capped |= moves >= max_moves
        results.append((F, sel))
        if not start:
            used[list(sel)] = True
    if not results:  # no candidate at all (e.g. every triple predicts the default label)
        F0 = _objective(pb.lam, scales, 0.0, 0.0, 0.0, 0.0, 0.0)
        return SearchResult((), float(F0), 0, False, ())
    objs = tuple(float(r[0]) for r in results)
    best = int(np.argmax(objs))
    return SearchResult(results[best][1], objs[best], total_moves, capped, objs)


class _Problem:
    """The candidates, budgets and objective of one :func:`local_search` (arrays as it converts them), and one
    round of hill climbing over them."""

    def __init__(self, cov, w, wrong, npreds, q_id, s_id, A, lambdas, scales, max_rules, max_nd, max_np,
                 max_exchange):
        self.cov, self.w, self.q_id, self.s_id, self.scales = cov, w, q_id, s_id, scales
        self.covf = cov.astype(np.float32)
        self.wf = w.astype(np.float32)[:, None]
        self.size = self.covf.astype(np.float64) @ w
        self.wrong = np.asarray(wrong, dtype=np.float64)
        self.npreds = np.asarray(npreds, dtype=np.float64)
        self.A = np.asarray(A, dtype=np.float64)
        self.a_qs = self.A[q_id, s_id]
        self.lam = [float(v) for v in lambdas]
        self.max_rules, self.max_nd, self.max_np, self.max_exchange = max_rules, max_nd, max_np, max_exchange

    def fo_of(self, dcount, scount):
        return float((dcount > 0).astype(np.float64) @ self.A @ scount)

    def add_fields(self, st, dcount, scount, avail):
        present = dcount > 0
        u, v = present.astype(np.float64) @ self.A, self.A @ scount
        dfo = u[self.s_id] + (~present[self.q_id]) * (v[self.q_id] + self.a_qs)
        ok = avail & (present[self.q_id] | (int(present.sum()) < self.max_nd))
        return dfo, ok

    def best_starts(self, starts, max_starts: int) -> list:
        """The feasible ``starts`` (duplicates in each dropped), the ``max_starts`` best by objective if more."""
        starts = [list(dict.fromkeys(int(i) for i in st0)) for st0 in (starts or ())]
        starts = [st0 for st0 in starts
                  if _feasible(st0, self.npreds, self.q_id, self.max_rules, self.max_nd, self.max_np)]
        if len(starts) > max_starts:  # the best few by objective
            A, q_id, s_id, w = self.A, self.q_id, self.s_id, self.w

            def f_of(sel):
                c = self.cov[sel].sum(axis=0).astype(np.int64)
                dc, sc_ = np.bincount(q_id[sel], minlength=A.shape[0]), np.bincount(s_id[sel], minlength=A.shape[1])
                return _objective(self.lam, self.scales, float(self.npreds[sel].sum()), self.fo_of(dc, sc_),
                                  float(w @ (c * (c - 1) // 2)), float(w @ (c > 0)), float(self.wrong[sel].sum()))
            starts = sorted(starts, key=f_of, reverse=True)[:max_starts]
        return starts

    def climb(self, start, avail0, delta: float, max_moves: int) -> tuple[float, tuple, int]:
        """One round from ``start``: best improving moves among ``avail0`` until none improves by the factor
        ``1 + max(delta / n**4, 1e-9)`` or ``max_moves``; ``(objective, selection, moves)``."""
        tau = max(delta / float(avail0.sum()) ** 4, 1e-9)
        st = _State(self.cov.shape[1], self.A.shape[0], self.A.shape[1])
        F = self._apply(st, (), start)
        moves = 0
        while moves < max_moves:
            in_sel = np.zeros(self.cov.shape[0], bool)
            in_sel[st.sel] = True
            best_move = self.best_move(st, F, tau, avail0 & ~in_sel)
            if best_move is None:
                break
            es, d = best_move
            F = self._apply(st, () if es is None else (es,) if np.isscalar(es) else es, () if d is None else (d,))
            moves += 1
        return F, tuple(st.sel), moves

    def _apply(self, st, removed, added) -> float:
        """Move ``removed`` out of and ``added`` into the selection ``st``; the objective after."""
        for e in removed:
            st.move(e, -1, self.cov, self.q_id, self.s_id, self.npreds, self.wrong)
        for d in added:
            st.move(d, 1, self.cov, self.q_id, self.s_id, self.npreds, self.wrong)
        st.refresh(self.w)
        self.fo = self.fo_of(st.dcount, st.scount)
        return _objective(self.lam, self.scales, st.npreds, self.fo, st.ro, st.cover, st.dis)

    def best_move(self, st, F: float, tau: float, avail):
        """The best improving move ``(removed, added)`` (None: nothing to remove or add), or None if none improves:
        an add or a delete, else a one-for-one exchange, else an exchange of up to ``max_exchange``."""
        lam, scales, npreds, wrong, fo = self.lam, self.scales, self.npreds, self.wrong, self.fo
        V = np.stack([(st.c == 0), st.c, (st.c == 1)], axis=1).astype(np.float32) * self.wf
        G = (self.covf @ V).astype(np.float64)
        best_val, best_move = F * (1.0 + tau) + 1e-12, None
        if len(st.sel) < self.max_rules:
            dfo, ok = self.add_fields(st, st.dcount, st.scount, avail)
            ok &= st.npreds + npreds <= self.max_np
            Fa = _objective(lam, scales, st.npreds + npreds, fo + dfo, st.ro + G[:, 1],
                            st.cover + G[:, 0], st.dis + wrong)
            Fa = np.where(ok, Fa, -np.inf)
            j = int(np.argmax(Fa))
            if Fa[j] > best_val:
                best_val, best_move = Fa[j], (None, j)
        removed = []
        for e in st.sel:
            dc, sc_ = st.dcount.copy(), st.scount.copy()
            dc[self.q_id[e]] -= 1
            sc_[self.s_id[e]] -= 1
            fo_e = self.fo_of(dc, sc_)
            agg = (st.npreds - npreds[e], fo_e, st.ro - (G[e, 1] - self.size[e]),
                   st.cover - G[e, 2], st.dis - wrong[e])
            removed.append((e, dc, sc_, agg))
            Fd = _objective(lam, scales, *agg)
            if Fd > best_val:
                best_val, best_move = Fd, (e, None)
        if best_move is None and st.sel:
            best_val, best_move = self._best_swap(st, removed, best_val, avail)
        if best_move is None and len(st.sel) >= 2 and self.max_exchange >= 2:
            best_val, best_move = _big_exchange(st, best_val, avail, self.max_exchange, self.max_np, lam, scales,
                                                self.covf, self.cov, wrong, npreds, self.q_id, self.s_id,
                                                self.fo_of, self.add_fields, self.w, self.wf)
        return best_move

    def _best_swap(self, st, removed, best_val, avail):
        """The best one-for-one exchange beating ``best_val``: ``(value, (e, j))``, or ``(best_val, None)``."""
        best_move = None
        cols = []
        for e in st.sel:
            ce = st.c - self.cov[e]
            cols += [(ce == 0), ce]
        G2 = (self.covf @ (np.stack(cols, axis=1).astype(np.float32) * self.wf)).astype(np.float64)
        for k, (e, dc, sc_, agg) in enumerate(removed):
            dfo, ok = self.add_fields(st, dc, sc_, avail)
            ok &= agg[0] + self.npreds <= self.max_np
            Fx = _objective(self.lam, self.scales, agg[0] + self.npreds, agg[1] + dfo, agg[2] + G2[:, 2 * k + 1],
                            agg[3] + G2[:, 2 * k], agg[4] + self.wrong)
            Fx = np.where(ok, Fx, -np.inf)
            j = int(np.argmax(Fx))
            if Fx[j] > best_val:
                best_val, best_move = Fx[j], (e, j)
        return best_val, best_move

def _feasible(sel, npreds, q_id, max_rules, max_nd, max_np) -> bool:
    return (0 < len(sel) <= max_rules and len({int(q_id[i]) for i in sel}) <= max_nd
            and float(np.sum(npreds[sel])) <= max_np)


def _big_exchange(st, best_val, avail, max_exchange, max_np, lam, scales, covf, cov, wrong, npreds, q_id, s_id,
                  fo_of, add_fields, w, wf):
    """Best exchange of one candidate for ``2 <= |E| <= max_exchange`` selected ones (Lee et al. 2009)."""
    best_move = None
    for size in range(2, min(max_exchange, len(st.sel)) + 1):
        subsets = list(combinations(st.sel, size))
        for start in range(0, len(subsets), 32):
            chunk = subsets[start:start + 32]
            cols, aggs = [], []
            for E in chunk:
                E = list(E)
                ce = st.c - cov[E].sum(axis=0)
                cols += [(ce == 0), ce]
                dc, sc_ = st.dcount.copy(), st.scount.copy()
                np.subtract.at(dc, q_id[E], 1)
                np.subtract.at(sc_, s_id[E], 1)
                ce64 = ce.astype(np.int64)
                aggs.append((E, dc, sc_, (st.npreds - npreds[E].sum(), fo_of(dc, sc_),
                                          float(w @ (ce64 * (ce64 - 1) // 2)), float(w @ (ce > 0)),
                                          st.dis - wrong[E].sum())))
            G2 = (covf @ (np.stack(cols, axis=1).astype(np.float32) * wf)).astype(np.float64)
            for k, (E, dc, sc_, agg) in enumerate(aggs):
                dfo, ok = add_fields(st, dc, sc_, avail)
                ok &= agg[0] + npreds <= max_np
                Fx = _objective(lam, scales, agg[0] + npreds, agg[1] + dfo, agg[2] + G2[:, 2 * k + 1],
                                agg[3] + G2[:, 2 * k], agg[4] + wrong)
                Fx = np.where(ok, Fx, -np.inf)
                j = int(np.argmax(Fx))
                if Fx[j] > best_val:
                    best_val, best_move = Fx[j], (tuple(E), j)
    return best_val, best_move
