"""Approximate local search for the BETA/MUSE objective (docs/methods.md, "Rule surrogates: MUSE and CART").

The faithful algorithm is Lee, Mirrokni, Nagarajan, Sviridenko (2009, "Non-monotone
submodular maximization under matroid and knapsack constraints", STOC) as used by
BETA (Lakkaraju et al. 2017, arXiv 1707.01154) [P]. Product choices [D], all
parameters of :func:`local_search`:

* moves are add (``|E| = 0``), delete, and exchange with ``|E| = 1``; larger
  exchanges are not tried (the paper allows ``|E| <= k = 3``);
* each step evaluates *every* move of a kind at once and takes the best
  improving one (best-improvement; the earlier default was first-improvement);
* a move is accepted when ``F_new > (1 + max(delta / n_r**4, 1e-9)) * F_old``;
* coverage is kept incrementally: a per-row count of selected triples, and the
  gains of all candidates come from one ``(n_candidates, n_rows) @ (n_rows, m)``
  product, so a move costs O(rows) per candidate.
"""
from __future__ import annotations

from dataclasses import dataclass

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


def local_search(cov: np.ndarray, wrong: np.ndarray, npreds: np.ndarray, q_id: np.ndarray,
                 s_id: np.ndarray, A: np.ndarray, *, lambdas, scales: Scales, max_rules: int,
                 max_neighborhoods: int | None, n_rounds: int = 4, max_moves: int = 500,
                 delta: float = 0.01) -> SearchResult:
    """Maximise ``sum_k lambda_k f_k(S)`` under the size and neighborhood budgets.

    Parameters
    ----------
    cov : ndarray of bool, shape (n_candidates, n_rows)
        Coverage of each candidate triple ``q AND s``.
    wrong : ndarray of shape (n_candidates,)
        Covered rows whose black-box label differs from the triple's label.
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
        ``k + 1`` rounds of Lee et al.; round ``r`` excludes earlier solutions.
    max_moves : int, default=500
        Cap on accepted moves per round.
    delta : float, default=0.01

    Returns
    -------
    SearchResult
    """
    n, N = cov.shape
    covf = cov.astype(np.float32)
    size = cov.sum(axis=1).astype(np.float64)
    wrong = np.asarray(wrong, dtype=np.float64)
    npreds = np.asarray(npreds, dtype=np.float64)
    A = np.asarray(A, dtype=np.float64)
    a_qs = A[q_id, s_id]
    lam = [float(v) for v in lambdas]
    max_nd = max_neighborhoods if max_neighborhoods is not None else n + 1
    used = np.zeros(n, dtype=bool)
    results, total_moves, capped = [], 0, False

    def fo_of(dcount, scount):
        return float((dcount > 0).astype(np.float64) @ A @ scount)

    def add_fields(st, dcount, scount, avail):
        present = dcount > 0
        u, v = present.astype(np.float64) @ A, A @ scount
        dfo = u[s_id] + (~present[q_id]) * (v[q_id] + a_qs)
        ok = avail & (present[q_id] | (int(present.sum()) < max_nd))
        return dfo, ok

    for _ in range(max(1, n_rounds)):
        avail0 = ~used
        if not avail0.any():
            break
        tau = max(delta / float(avail0.sum()) ** 4, 1e-9)
        st = _State(N, A.shape[0], A.shape[1])
        fo = 0.0
        F = _objective(lam, scales, 0.0, 0.0, 0.0, 0.0, 0.0)
        moves = 0
        while moves < max_moves:
            in_sel = np.zeros(n, bool)
            in_sel[st.sel] = True
            avail = avail0 & ~in_sel
            V = np.stack([(st.c == 0), st.c, (st.c == 1)], axis=1).astype(np.float32)
            G = (covf @ V).astype(np.float64)
            best_val, best_move = F * (1.0 + tau) + 1e-12, None
            if len(st.sel) < max_rules:
                dfo, ok = add_fields(st, st.dcount, st.scount, avail)
                Fa = _objective(lam, scales, st.npreds + npreds, fo + dfo, st.ro + G[:, 1],
                                st.cover + G[:, 0], st.dis + wrong)
                Fa = np.where(ok, Fa, -np.inf)
                j = int(np.argmax(Fa))
                if Fa[j] > best_val:
                    best_val, best_move = Fa[j], (None, j)
            removed = []
            for e in st.sel:
                dc, sc_ = st.dcount.copy(), st.scount.copy()
                dc[q_id[e]] -= 1
                sc_[s_id[e]] -= 1
                fo_e = fo_of(dc, sc_)
                agg = (st.npreds - npreds[e], fo_e, st.ro - (G[e, 1] - size[e]),
                       st.cover - G[e, 2], st.dis - wrong[e])
                removed.append((e, dc, sc_, agg))
                Fd = _objective(lam, scales, *agg)
                if Fd > best_val:
                    best_val, best_move = Fd, (e, None)
            if best_move is None and st.sel:
                cols = []
                for e in st.sel:
                    ce = st.c - cov[e]
                    cols += [(ce == 0), ce]
                G2 = (covf @ np.stack(cols, axis=1).astype(np.float32)).astype(np.float64)
                for k, (e, dc, sc_, agg) in enumerate(removed):
                    dfo, ok = add_fields(st, dc, sc_, avail)
                    Fx = _objective(lam, scales, agg[0] + npreds, agg[1] + dfo, agg[2] + G2[:, 2 * k + 1],
                                    agg[3] + G2[:, 2 * k], agg[4] + wrong)
                    Fx = np.where(ok, Fx, -np.inf)
                    j = int(np.argmax(Fx))
                    if Fx[j] > best_val:
                        best_val, best_move = Fx[j], (e, j)
            if best_move is None:
                break
            e, d = best_move
            if e is not None:
                st.sel.remove(e)
                st.c -= cov[e]
                st.dcount[q_id[e]] -= 1
                st.scount[s_id[e]] -= 1
                st.npreds -= npreds[e]
                st.dis -= wrong[e]
            if d is not None:
                st.sel.append(d)
                st.c += cov[d]
                st.dcount[q_id[d]] += 1
                st.scount[s_id[d]] += 1
                st.npreds += npreds[d]
                st.dis += wrong[d]
            st.cover = float(np.sum(st.c > 0))
            st.ro = float(np.sum(st.c.astype(np.int64) * (st.c - 1) // 2))
            fo = fo_of(st.dcount, st.scount)
            F = _objective(lam, scales, st.npreds, fo, st.ro, st.cover, st.dis)
            moves += 1
        total_moves += moves
        capped |= moves >= max_moves
        results.append((F, tuple(st.sel)))
        used[list(st.sel)] = True
    objs = tuple(float(r[0]) for r in results)
    best = int(np.argmax(objs))
    return SearchResult(results[best][1], objs[best], total_moves, capped, objs)
