"""Tabular LIME's neighbourhood, vectorised: the draws of ``lime.lime_tabular.LimeTabularExplainer`` (lime 0.2.0.1)
with ``discretize_continuous=True, discretizer="quartile"``, without its per-column Python loops.

Ribeiro, Singh, Guestrin 2016, "Why Should I Trust You?": Explaining the Predictions of Any Classifier (KDD,
arXiv 1602.04938); docs/methods.md, "LIME". :class:`LimeSpace` computes lime's training statistics (quartile
edges, each bin's mean, standard deviation, bounds and training frequency; each categorical column's levels and
frequencies) and :meth:`LimeSpace.sample` draws a neighbourhood from ``numpy.random.RandomState(seed)``
consuming that state exactly as lime's private ``__data_inverse`` does: one ``random_sample(n)`` per column
(``RandomState.choice`` with ``p`` is the inverse CDF of those uniforms), then one uniform per perturbed
continuous value (``scipy.stats.truncnorm.rvs`` is ``loc + scale * ppf(U)``). So a neighbourhood equals lime's
for the same seed, up to floating-point rounding in the truncated normal's inverse CDF, computed here with
``ndtr``/``ndtri`` for every column at once rather than scipy's log-space ``ppf`` (10-30x slower).

Two deliberate differences, both where a bin holds one training value:

- where a bin's bounds coincide (a quartile equal to the column's minimum or maximum, so every training value in the
  bin is that number), lime 0.2.0.1 returns the bin's z-score ``(min - mean) / std`` (0, or rounding noise such as
  -1e-6) instead of a value; here the bin's value itself. The two agree for a bin whose value is 0 (counts, capital
  gains), the usual case.
- where a bin's bounds differ but its training values are one number (a one-hot column's bin of ones, between the
  quartile 0 and the maximum 1), lime draws from a normal of standard deviation 1e-11 around that number, a value
  within about 1e-10 of it; here the number itself, with the draw's uniform still taken from the stream so every
  later draw is lime's. On a one-hot table most bins are such, and their inverse normal CDF was most of the sampler's
  time (Adult's 108 columns: 101 of 118 drawn bins).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = ["ColumnBins", "LimeSpace", "kernel_weights"]

BLOCK_LEVELS = 8
"""A wide table's columns of at most this many sampled values are drawn a block at once (:meth:`LimeSpace.sample`)."""
BLOCK_CELLS = 8_192
"""Cells (columns x samples, at least one column) a neighbourhood is drawn in at once; the random stream is consumed in
lime's order either way. Its uniforms, gathers and temporaries (64 KB each) stay in the cache, and come from the
heap's free memory: at 200,000 cells (4,000 x 30 in one block) each temporary of a megabyte, freed, was given back to
the system by glibc (whose trim threshold is 128 KB once the server fixes its mmap threshold,
:func:`workspace.limits.map_large_blocks`) and faulted in again by the next: half of a neighbourhood's 13 ms."""


@dataclass(frozen=True)
class ColumnBins:
    """lime's quartile discretisation of one continuous column (``lime.discretize.QuartileDiscretizer``).

    ``edges`` are the unique 25/50/75 % percentiles; bin ``b`` holds ``mins[b] < x <= maxs[b]`` (the first
    from the training minimum, the last to the maximum), with training ``means[b]`` and ``stds[b]``
    (population SD + 1e-11, as lime). ``points[b]`` is the bin's training value where all its training values are
    one number, NaN where they are several or none (not one of lime's statistics: the sampler's, module docstring).
    """

    edges: np.ndarray
    mins: np.ndarray
    maxs: np.ndarray
    means: np.ndarray
    stds: np.ndarray
    points: np.ndarray


def _column_bins(col: np.ndarray, quartiles=None, low=None, high=None) -> ColumnBins:
    """lime's bins of ``col``; ``quartiles``, ``low``, ``high``: its 25/50/75 % percentiles, minimum and maximum when
    the caller computed them for every column at once (the same numbers, :class:`LimeSpace`)."""
    edges = np.unique(np.percentile(col, [25, 50, 75]) if quartiles is None else quartiles)
    disc = np.searchsorted(edges, col)
    means, stds, points = [], [], []
    for b in range(len(edges) + 1):
        sel = col[disc == b]
        means.append(np.mean(sel) if sel.size else 0.0)
        stds.append((np.std(sel) if sel.size else 0.0) + 0.00000000001)
        points.append(sel[0] if sel.size and sel.min() == sel.max() else np.nan)
    return ColumnBins(edges, np.array([np.min(col) if low is None else low, *edges]),
                      np.array([*edges, np.max(col) if high is None else high]), np.array(means), np.array(stds),
                      np.array(points))


def kernel_weights(distances: np.ndarray, width: float) -> np.ndarray:
    """LIME's tabular kernel ``sqrt(exp(-d² / width²))`` (lime_tabular's default ``kernel``)."""
    return np.sqrt(np.exp(-(distances ** 2) / width ** 2))


class _TruncatedNormals:
    """Standard normals truncated to ``[a, b]`` (one per bin), and what their inverse CDF (:func:`_ppf_of`) needs from
    the bounds alone, computed once per bin: the bounds ``a``, ``b``, whether the
    upper tail is taken by symmetry (``flip``), the normal CDF at the lower end taken (``plo``) and the CDF's span
    (``span``). Gathered per sample (:meth:`take`) they are the same numbers as computed per sample: the CDF was two
    of the three special functions of every drawn value, about half of LIME's sampling time on the sample."""

    def __init__(self, a: np.ndarray, b: np.ndarray, flip=None, plo=None, span=None) -> None:
        self.a, self.b = a, b
        if flip is None:
            flip = a > 0
            plo = ndtr(np.where(flip, -b, a))
            span = ndtr(np.where(flip, -a, b)) - plo
        self.flip, self.plo, self.span = flip, plo, span

    def take(self, at: np.ndarray) -> "_TruncatedNormals":
        """The bins ``at`` (flat indices), one per sample, without recomputing anything."""
        return _TruncatedNormals(*(np.take(v, at) for v in (self.a, self.b, self.flip, self.plo, self.span)))


def _ppf_of(q: np.ndarray, t: _TruncatedNormals) -> np.ndarray:
    """Inverse CDF at ``q`` of the truncated standard normals ``t``, elementwise; the upper tail by symmetry."""
    x = ndtri(t.plo + np.where(t.flip, 1 - q, q) * t.span)
    return np.clip(np.where(t.flip, -x, x), t.a, t.b)


class _Scratch:
    """The arrays one neighbourhood's blocks are computed in (:meth:`LimeSpace.sample`), allocated once for it.

    A block's dozen temporaries, allocated and freed block by block, made glibc give the heap's top back to the system
    after each block (its trim threshold is 128 KB once the server fixes the mmap threshold,
    :func:`workspace.limits.map_large_blocks`) and fault it in again for the next: half of the 13 ms a 4,000 x 30
    neighbourhood took. Written in place instead, a neighbourhood takes about 7 ms.
    """

    def __init__(self, cells: int) -> None:
        self.index, self.mask = np.empty(cells, dtype=np.intp), np.empty(cells, dtype=bool)
        self.bins, self.out = np.empty((6, cells)), np.empty(cells)

    def take(self, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions (intp), a mask and values (float) of ``shape``, views of the scratch arrays."""
        m = shape[0] * shape[1]
        return self.index[:m].reshape(shape), self.mask[:m].reshape(shape), self.out[:m].reshape(shape)


class LimeSpace:
    """lime's sampling statistics of a training table in LIME's space, and its neighbourhood sampler.

    Parameters
    ----------
    train : ndarray of shape (n_rows, n_features)
        Training rows (categorical columns as level codes, no NaN).
    categorical : iterable of int
        Columns sampled by level frequency (lime's ``categorical_features``); every other column is
        discretised by its quartiles.

    Attributes
    ----------
    bins : dict of int to ColumnBins
        The continuous columns' discretisation.
    values, cdfs : list of ndarray
        Per column, the sampled values (levels, or bin indices of a continuous column) present in the
        training rows, sorted, and their cumulative frequencies as ``RandomState.choice`` forms them.
    """

    def __init__(self, train: np.ndarray, categorical) -> None:
        train = np.asarray(train, dtype=float)
        cats = {int(j) for j in categorical}
        self.n_features = train.shape[1]
        cont = [j for j in range(self.n_features) if j not in cats]  # percentiles, minima, maxima: all columns at once
        qs = np.percentile(train[:, cont], [25, 50, 75], axis=0) if cont and len(train) else None
        lo, hi = (train[:, cont].min(axis=0), train[:, cont].max(axis=0)) if qs is not None else (None, None)
        self.bins = {j: _column_bins(train[:, j]) if qs is None else _column_bins(train[:, j], qs[:, k], lo[k], hi[k])
                     for k, j in enumerate(cont)}
        self.values, self.cdfs = [], []
        for j in range(self.n_features):
            col = np.searchsorted(self.bins[j].edges, train[:, j]).astype(float) if j in self.bins else train[:, j]
            values, counts = np.unique(col, return_counts=True)
            cdf = (counts / float(counts.sum())).cumsum()
            self.values.append(values)
            self.cdfs.append(cdf / cdf[-1])
        few = [j for j in range(self.n_features) if len(self.cdfs[j]) <= BLOCK_LEVELS]  # drawn by a count
        width = max((len(self.cdfs[j]) for j in few), default=1)  # padded to the most values among them: +inf never counts
        cdf, val = np.full((self.n_features, width - 1), np.inf), np.zeros((self.n_features, width))
        for j in few:  # a cdf's last value is 1 (x / x), never at most a uniform of [0, 1): not counted
            cdf[j, :len(self.cdfs[j]) - 1], val[j, :len(self.values[j])] = self.cdfs[j][:-1], self.values[j]
        self._levels = (np.isin(np.arange(self.n_features), few), cdf, val)
        self._counted = np.where(self._levels[0], [len(c) - 1 for c in self.cdfs], 0)  # cdf values a column counts
        cont = sorted(self.bins)
        self._cont = np.array(cont, dtype=int)
        width = max((len(self.bins[j].mins) for j in cont), default=1)
        self._mins, self._maxs, self._means, self._stds = (np.zeros((len(cont), width)) for _ in range(4))
        points = np.full((len(cont), width), np.nan)  # padding: no bin, no value
        for k, j in enumerate(cont):  # each bin's statistics, padded to the widest column's bins
            b = self.bins[j]
            for out, v in ((self._mins, b.mins), (self._maxs, b.maxs), (self._means, b.means), (self._stds, b.stds),
                           (points, b.points)):
                out[k, :len(v)] = v
        self._stds[self._stds == 0] = 1.0  # padding only
        self._normals = _TruncatedNormals((self._mins - self._means) / self._stds,
                                          (self._maxs - self._means) / self._stds)  # per bin, as lime's z-scores
        t = self._normals  # per bin, in one row: a drawn value gathers its bin's seven numbers at once
        self._drawn = (t.a != t.b).ravel()  # a uniform taken from the stream
        points = points.ravel()
        self._computed = self._drawn & np.isnan(points)  # the drawn value computed; else the bin's one value
        self._fixed = np.where(self._drawn & ~self._computed, points, self._mins.ravel())  # a value not computed
        self._col_drawn = self._drawn.reshape(self._mins.shape).any(axis=1)  # per continuous column
        self._col_computed = self._computed.reshape(self._mins.shape).any(axis=1)
        self._columns = tuple(np.ascontiguousarray(v.ravel(), dtype=float) for v in
                              (t.plo, t.span, t.a, t.b, self._stds, self._means))  # per bin, gathered per draw
        self._flip = t.flip.ravel()
        self._flips = bool(self._flip.any())
        edges = [self.bins[j].edges for j in cont]  # padded with +inf, for discretize
        self._edges = np.full((len(cont), max((len(e) for e in edges), default=0)), np.inf)
        for k, e in enumerate(edges):
            self._edges[k, :len(e)] = e
        self._n_edges = np.array([len(e) for e in edges], dtype=float)

    def discretize(self, row: np.ndarray) -> np.ndarray:
        """The row with each continuous column replaced by its bin index (lime's ``discretize``)."""
        out = np.array(row, dtype=float, copy=True)
        if self._cont.size:  # searchsorted(edges, v, side="left") is the count of edges below v (NaN: past them all)
            v = out[self._cont]
            out[self._cont] = np.where(np.isnan(v), self._n_edges, (self._edges < v[:, None]).sum(axis=1))
        return out

    def sample(self, row: np.ndarray, n: int, seed: int, values: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """A neighbourhood of ``n`` rows, the first the row itself, drawn as lime draws it with ``RandomState(seed)``.

        Parameters
        ----------
        row : ndarray of shape (n_features,)
            The explained row in LIME's space.
        n : int
        seed : int
        values : bool, default=True
            False: the binary representation only (``inverse`` None), the continuous values within their bins not
            drawn (the stream draws them after every level and bin): for a neighbourhood whose model outputs are kept
            (:mod:`explainers._lime_outputs`), 70 % of its sampling time on breast cancer.

        Returns
        -------
        binary : ndarray of uint8, shape (n, n_features)
            1 where the sample's level or bin is the row's (lime's interpretable representation; row 0 all 1). A
            byte each: a round's five neighbourhoods are held until fitted, and as float64 those of 4,000 rows on
            Adult's 108 columns were 17 MB of a row the store lacks (issue 23); a fit takes one as float64.
        inverse : ndarray of shape (n, n_features), or None
            The samples' values (levels; continuous values drawn within their bin), row 0 the row; None if not
            ``values``.

        Both are column-major (Fortran-ordered): each column's values are contiguous, as they were drawn.
        """
        rs, d = np.random.RandomState(seed), self.n_features
        first = self.discretize(row)
        drawn, scratch = np.empty((d, n)), _Scratch(max(n, min(BLOCK_CELLS, n * d)))  # a block: at most these cells
        # drawn column by column (lime's order), each column's values contiguous: writing a (n, d) table's columns
        # in place touched a cache line a value, most of a wide neighbourhood's time
        step = max(1, BLOCK_CELLS // max(n, 1))  # columns a block: the stream is consumed in the same order
        for start in range(0, d, step):  # lime: one RandomState.choice(values, n, p) per column
            u = rs.random_sample(min(step, d - start) * n).reshape(-1, n)
            self._choose_block(drawn, start, u, scratch)  # a block at once (the same draws: a count of cdf values <= u)
        binary = np.equal(drawn, first[:, None], out=np.empty((d, n), dtype=np.uint8))  # 0/1: a byte, not 8
        binary[:, 0] = 1
        if not values:
            return binary.T, None
        if self._cont.size and n > 1:  # lime: undiscretize(inverse[1:]), feature by feature, truncnorm.rvs
            self._undiscretize(drawn, rs, scratch)
        drawn[:, 0] = row
        return binary.T, drawn.T  # views, in column order: a copy in row order was 3 ms of a (4,000 x 108)

    def _choose_block(self, drawn: np.ndarray, start: int, u: np.ndarray, scratch: "_Scratch") -> None:
        """Columns ``start ..`` of the neighbourhood (rows of ``drawn``) from their uniforms ``u`` (a row each), as
        :meth:`sample`'s loop draws them: ``searchsorted(cdf, u, side="right")`` is the count of ``cdf`` values at most
        ``u``, counted for the block's columns of at most :data:`BLOCK_LEVELS` values at once (a 10,000-column table:
        10,000 calls a neighbourhood), as far as the block's column of most values needs."""
        few, cdf, val = self._levels
        stop = start + len(u)
        at, below, block = scratch.take(u.shape)
        fast, counted = few[start:stop], self._counted[start:stop].max()
        if counted == 1 and fast.all():  # two values a column (one-hot dummies, two bins): the second where u >= cdf
            np.greater_equal(u, cdf[start:stop, :1], out=below)
            drawn[start:stop] = val[start:stop, :1]
            np.copyto(drawn[start:stop], val[start:stop, 1:2], where=below)
            return
        at[...] = (np.arange(len(u)) * val.shape[1])[:, None]  # flat positions in val[start:stop]
        for level in cdf[start:stop, :counted].T:  # a count of the cdf values at most u
            np.greater_equal(u, level[:, None], out=below)
            at += below
        if fast.all():
            np.take(val[start:stop], at, out=drawn[start:stop], mode="clip")  # every position valid: written in place
            return
        np.take(val[start:stop], at, out=block, mode="clip")
        drawn[start + np.flatnonzero(fast)] = block[fast]
        for k in np.flatnonzero(~fast):
            j = start + int(k)
            drawn[j] = self.values[j][self.cdfs[j].searchsorted(u[k], side="right")]

    def _undiscretize(self, drawn: np.ndarray, rs: np.random.RandomState, scratch: "_Scratch") -> None:
        """Draw the continuous columns' values within their sampled bins (rows of ``drawn`` past the first), in place.

        lime draws column by column, then row by row, one uniform per value whose bin's bounds differ. A block of
        columns whose every such value is a bin's one training value (module docstring) takes its values by a
        gather, and its uniforms are only counted: drawn (and discarded) when a later value needs the stream.
        """
        width, m = self._mins.shape[1], drawn.shape[1] - 1
        step, pending = max(1, BLOCK_CELLS // m), 0
        for start in range(0, len(self._cont), step):  # blocks of columns: lime's order is column, then row
            block = np.arange(start, min(start + step, len(self._cont)))
            cols = self._cont[block]
            flat, mask, _ = scratch.take((len(cols), m))
            np.copyto(flat, drawn[cols, 1:], casting="unsafe")  # the bin codes, as astype(intp) makes them
            flat += (block * width)[:, None]
            if not self._col_computed[block].any():
                if self._col_drawn[block].any():
                    np.take(self._drawn, flat, out=mask, mode="clip")
                    pending += int(np.count_nonzero(mask))
                drawn[cols, 1:] = np.take(self._fixed, flat)
                continue
            for at in range(0, pending, BLOCK_CELLS):  # the uniforms of the values gathered before, in lime's order
                rs.random_sample(min(BLOCK_CELLS, pending - at))
            pending = 0
            np.take(self._computed, flat, out=mask, mode="clip")
            if mask.all():  # the usual case on a table without one-hot columns: every value drawn and computed
                q = rs.random_sample(flat.size)  # row-major over (column, row): lime's order
                drawn[cols, 1:] = self._draw(q, flat.ravel(), scratch).reshape(flat.shape)
                continue
            computed = mask.copy()
            np.take(self._drawn, flat, out=mask, mode="clip")
            q = rs.random_sample(int(np.count_nonzero(mask)))  # one uniform per drawn value, computed or not
            values = np.take(self._fixed, flat)  # a bin of one training value gives it (module docstring)
            if computed.any():  # the bins' normal CDFs were computed once per bin
                values[computed] = self._draw(q[computed[mask]], flat[computed], scratch)
            drawn[cols, 1:] = values

    def _draw(self, q: np.ndarray, at: np.ndarray, scratch: "_Scratch") -> np.ndarray:
        """``_ppf_of(q, bins at) * std + mean``, the bins' numbers gathered per value: the same operations in the same
        order, in ``scratch`` (its result is overwritten by the next block)."""
        gathered, out = scratch.bins[:, :len(q)], scratch.out[:len(q)]
        for v, into in zip(self._columns, gathered):
            np.take(v, at, out=into, mode="clip")
        plo, span, a, b, std, mean = gathered
        if self._flips:  # a bin wholly above its mean (never in lime's bins, whose means lie inside them)
            out[...] = _ppf_of(q, _TruncatedNormals(a, b, np.take(self._flip, at), plo, span))
        else:  # where(flip, 1 - q, q) is q and where(flip, -x, x) is x
            np.multiply(q, span, out=out)
            np.add(plo, out, out=out)
            ndtri(out, out=out)
            np.clip(out, a, b, out=out)
        np.multiply(out, std, out=out)
        return np.add(out, mean, out=out)
