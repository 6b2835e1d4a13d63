"""LIME attributions for tabular classifiers (Ribeiro, Singh, Guestrin 2016, "Why Should I Trust You?", KDD,
arXiv 1602.04938).

Computes what ``lime.lime_tabular.LimeTabularExplainer`` computes with the reference settings of
docs/methods.md, "LIME" (quartile discretisation, kernel width 0.75·√d, ridge surrogate with
``alpha=1``), vectorised: the neighbourhood is drawn by :class:`explainers._lime_sampler.LimeSpace`
from the same ``RandomState`` stream lime's ``__data_inverse`` consumes (so each fit equals lime's
``explain_instance`` with that seed, to rounding; tests compare them), a round's neighbourhoods go to
the model in one call (and their outputs are kept for the next row: a neighbourhood's samples do not depend on the
row, :mod:`explainers._lime_outputs`), and the ridge is solved in closed form (:func:`explainers._lime_fits.ridge_fit`).
On top it adds the product's held-out local R² on a fresh neighborhood, and the sampling error of every
coefficient: the weights shown are the mean of ``repeats`` LIME fits on independent seeded
neighborhoods, their standard error the spread of those fits over ``sqrt(repeats)``, and the
neighborhood size grows on the doubling ladder (skipping sizes too small for the tolerance) until the
largest standard error is within ``rel_tolerance`` of the largest weight
or the time budget is spent (docs/methods.md, "LIME"). Features the neighbourhood cannot identify (indicator
changed in fewer than ``min_changes`` samples a fit) are named and left out of that judgment.

Missing values: a numeric column with NaN (or a constant column) is binned by
its quartiles plus an explicit ``(missing)`` bin and handed to LIME as a
categorical feature; a sampled bin is turned back into a value for the model as
the explained row's own value (same bin), the training median of the bin, or
NaN for the missing bin. Category columns (integer codes) are LIME categorical
features with their level names.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._lime_fits import MAX_SAMPLES, REL_TOLERANCE, REPEATS, TIME_BUDGET_S, repeat_until_converged
from ._lime_fits import one_blas_thread, ridge_fit, unidentified_note, weighted_r2
from ._lime_outputs import KeptOutputs, outputs_in_calls
from ._lime_sampler import LimeSpace, kernel_weights
from .numbers import plain
from .types import Explanation, Fidelity

__all__ = ["LimeExplainer"]

MISSING_BIN = "(missing)"
ROUND_CELLS = 1_000_000
"""Most cells (samples x features) a round sends the model at once; past it each neighbourhood is drawn, sent (in calls
of at most this many cells) and fitted in turn: the same fits, each neighbourhood has its own seed. Sent at once, a
round of 4,000 samples on Adult's 108 columns held its five neighbourhoods and the model's copies of them, about 58 MB
above the server's resident memory for a row the store lacks (issue 23; 16 million cells before, 128 MB a copy); in
turn, about 9 MB."""
MIN_CHANGES = 30
"""A feature whose indicator changes in fewer samples a fit (mean over the fits) is not identified there."""


class LimeExplainer:
    """LIME tabular attributions of one output (a class probability, a margin or a regression output).

    Parameters
    ----------
    predict_proba : callable
        Maps an ndarray of shape (n, n_features) to outputs (n, n_outputs)
        (probabilities in classification mode).
    training_data : DataFrame of shape (n_rows, n_features)
        Background for LIME's sampling statistics and quartile bins (numeric;
        category columns as integer codes; NaN allowed).
    class_names : sequence of str
        Names of the outputs.
    target_index : int, default=1
    num_samples : int, default=1000
        Neighborhood size ("interactive" profile; the reference profile uses 5000).
    kernel_width : float or None, default=None
        ``None`` means LIME's default ``0.75 * sqrt(n_features)``.
    seed : int, default=0
    mode : {"classification", "regression"}, default="classification"
        ``regression`` explains column ``target_index`` of the outputs as a number
        (margins, labels-as-indicators, regression outputs).
    categorical_names : dict of int to sequence of str, optional
        Category columns (integer codes) and their level names.
    missing_columns : sequence of int, optional
        Columns that may hold NaN in explained rows (binned with a missing bin)
        besides those with NaN in ``training_data``.
    output_space : {"probability", "log_odds", "raw"}, default="probability"
    units : str, optional
        What the explained output measures, for display.
    max_training_rows : int, default=5000
        LIME's sampling statistics (quartiles, level frequencies, scale) come from a
        seeded sample of this many training rows when there are more (said in
        ``source``): on 75,000 x 1,000 training rows building LIME's explainer
        from all of them took minutes per explained row.
    training_rows : ndarray of int, optional
        Positions in ``training_data`` of the training rows (default: every row): the statistics are those of
        ``training_data.iloc[training_rows]``, without copying those rows (Adult's 24,420 training rows: a 21 MB copy
        at start, for the 5,000 rows sampled).
    repeats : int, default=5
        Independent LIME fits per explanation (seeds ``seed, seed+1, ..., seed+repeats-1``); at least 2.
    rel_tolerance : float, default=0.05
        Stop growing ``num_samples`` once the largest standard error is at most this share of the
        largest ``|weight|``.
    time_budget_s : float, default=1.0
        Do not start a larger round whose predicted time (the last round's times its growth) would exceed
        this many seconds since the start; the result then says ``converged=False``.
    max_samples : int, default=64000
        Largest neighborhood per fit.
    min_changes : int, default=30
        A feature whose interpretable indicator is 0 (level or bin not the row's) in fewer sampled rows a fit,
        on average over the fits, is "not identified in this neighbourhood" (:meth:`identified`): its weight
        and standard error are reported, named in ``params["unidentified"]`` and left out of the convergence
        judgment. 0 judges every feature.

    Notes
    -----
    ``values`` are the ridge coefficients on LIME's interpretable (binary,
    standardised) features, one per feature: LIME's "weights". The fidelity
    is LIME's own ``score``, the weighted *in-sample* R² of the surrogate;
    ``params["heldout_r2"]`` is the same R² on a fresh neighborhood.

    Sampling error: ``values`` are the mean of ``repeats`` fits on independent neighborhoods;
    ``params["standard_error"][j]`` is the sample standard deviation of feature ``j``'s weight over
    those fits divided by ``sqrt(repeats)`` (the standard error of the mean shown, same units as
    ``values``). Independent refits are used rather than the weighted least-squares covariance of
    one fit: the residuals of LIME's surrogate are deterministic misfit of ``g``, not noise, the
    design itself is random, and the ridge penalty and the explained row's own sample (weight 1)
    are outside that formula, so it does not say how the weights move with the draw; refits
    measure exactly that. The error is the sampling error only: a systematic difference between
    LIME at this neighborhood size and LIME at an infinite one (ridge shrinkage) is not in it.

    Identification: a row at a common level (a one-hot dummy at 0 whose 1 is 0.03 % of rows) keeps it in nearly
    every sample, so that indicator's weight rests on a handful of rows (on Adult's 108 one-hot columns the tolerance
    would need about 25,000 samples a fit). Features changed in fewer than ``min_changes`` samples a fit are reported
    as not identified and the tolerance is judged on the others (:meth:`identified`); their standard error stays the
    spread of the fits, finite (0 when they never changed), never NaN: a stored row must be finite.
    """

    def __init__(self, predict_proba, *, training_data: pd.DataFrame, class_names, target_index: int = 1,
                 num_samples: int = 1000, kernel_width: float | None = None, seed: int = 0,
                 mode: str = "classification", categorical_names: dict | None = None,
                 missing_columns=(), output_space: str = "probability", units: str | None = None,
                 max_training_rows: int = 5000, repeats: int = REPEATS, rel_tolerance: float = REL_TOLERANCE,
                 time_budget_s: float = TIME_BUDGET_S, max_samples: int = MAX_SAMPLES,
                 min_changes: int = MIN_CHANGES, training_rows: np.ndarray | None = None) -> None:
        if int(repeats) < 2:
            raise ValueError(f"repeats must be at least 2 (a standard error needs two fits), got {repeats}")
        if not rel_tolerance > 0 or not time_budget_s > 0:
            raise ValueError(f"rel_tolerance and time_budget_s must be positive, got {rel_tolerance} and "
                             f"{time_budget_s}")
        if int(num_samples) < 2 or int(max_samples) < int(num_samples):
            raise ValueError(f"need 2 <= num_samples <= max_samples, got {num_samples} and {max_samples}")
        self.repeats, self.rel_tolerance = int(repeats), float(rel_tolerance)
        self.time_budget_s, self.max_samples = float(time_budget_s), int(max_samples)
        self.min_changes = int(min_changes)
        self.predict_proba = predict_proba
        self.feature_names = tuple(str(c) for c in training_data.columns)
        self.class_names = tuple(class_names)
        self.target_index, self.num_samples, self.seed = target_index, num_samples, seed
        self.mode, self.output_space = mode, output_space
        self.units = units or f"probability of {self.class_names[target_index]!r}"
        self.kernel_width = kernel_width if kernel_width is not None else 0.75 * np.sqrt(len(self.feature_names))
        rows = np.arange(len(training_data)) if training_rows is None else np.asarray(training_rows, dtype=np.intp)
        summary, n_train = "", len(rows)
        if n_train > max_training_rows:  # only the sampled rows are converted (Adult: 4 MB, not 20)
            rows = rows[np.sort(np.random.default_rng(seed).choice(n_train, max_training_rows, replace=False))]
            summary = f"; training statistics from a seeded sample of {max_training_rows} of {n_train} rows"
        train = training_data.iloc[rows].to_numpy(dtype=float)
        self._cats = {int(j): [str(v) for v in names] for j, names in (categorical_names or {}).items()}
        nan_cols = set(np.flatnonzero(np.isnan(train).any(axis=0)).tolist()) | {int(j) for j in missing_columns}
        const = {j for j in range(train.shape[1]) if np.unique(train[~np.isnan(train[:, j]), j]).size <= 1}
        self._bins = {j: self._fit_bins(train[:, j]) for j in sorted((nan_cols | const) - set(self._cats))}
        self._train = self._to_lime(train)
        self._names = {**self._cats, **{j: self._bin_names(j) for j in self._bins}}
        self._space = LimeSpace(self._train, set(self._cats) | set(self._bins))
        self._kept = KeptOutputs()  # the model's outputs on neighbourhoods, from one row to the next (_lime_outputs)
        binned = ", ".join(self.feature_names[j] for j in self._bins)
        self.source = (f"LIME 0.2.0.1's neighbourhood and ridge (vectorised), quartile bins, kernel width "
                       f"{self.kernel_width:.2f}, mean of {self.repeats} seeded fits (seeds {seed}+)"
                       + (f"; missing values are their own bin in {binned}" if binned else "") + summary)

    @staticmethod
    def _fit_bins(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Quartile edges of the observed values and each bin's training median (last bin: missing)."""
        seen = col[~np.isnan(col)]
        edges = np.unique(np.percentile(seen, [25, 50, 75])) if seen.size else np.array([])
        codes = np.searchsorted(edges, seen, side="left")
        reps = np.array([np.median(seen[codes == b]) if np.any(codes == b) else
                         (edges[min(b, len(edges) - 1)] if len(edges) else 0.0) for b in range(len(edges) + 1)])
        return edges, np.append(reps, np.nan)

    def _bin_codes(self, j: int, col: np.ndarray) -> np.ndarray:
        edges, reps = self._bins[j]
        codes = np.searchsorted(edges, col, side="left").astype(float)
        codes[np.isnan(col)] = len(reps) - 1
        return codes

    def _to_lime(self, X: np.ndarray) -> np.ndarray:
        T = np.array(X, dtype=float, copy=True)
        for j in self._bins:
            T[:, j] = self._bin_codes(j, X[:, j])
        return T

    def _bin_names(self, j: int) -> list[str]:
        edges, reps = self._bins[j]
        e = [plain(v, 4, trim=True) for v in edges]  # "> 1,084", never "> 1.084e+03"
        if not e:
            return ["observed value", MISSING_BIN]
        return [f"<= {e[0]}"] + [f"{a} < x <= {b}" for a, b in zip(e, e[1:])] + [f"> {e[-1]}", MISSING_BIN]

    def _model_fn(self, row: np.ndarray, row_t: np.ndarray):
        """LIME-space rows -> the explained output, binned columns decoded in place (``T``: a round's own array)."""
        def fn(T: np.ndarray) -> np.ndarray:
            X = T if T.dtype == np.float64 and T.flags.writeable else np.array(T, dtype=float, copy=True)
            for j, (_, reps) in self._bins.items():
                codes = np.clip(np.round(T[:, j]), 0, len(reps) - 1).astype(int)
                X[:, j] = np.where(codes == row_t[j], row[j], reps[codes])
            out = np.asarray(self.predict_proba(X), dtype=float)
            return out if self.mode == "classification" else out.reshape(len(X), -1)[:, self.target_index]
        return fn

    def conditions(self, row_t: np.ndarray) -> tuple[str, ...]:
        """The interpretable feature LIME weighs for each column of this row, as a reader should see it.

        A continuous column is the quartile bin the row falls in (``"worst area > 1,084"``,
        ``"12.3 < worst radius <= 15.8"``: the bounds of lime's discretizer, written with
        :func:`explainers.numbers.plain`), a categorical or binned column its level (``"colour = blue"``).

        Parameters
        ----------
        row_t : ndarray of shape (n_features,)
            The row in LIME's space (levels and bins as codes).

        Returns
        -------
        tuple of str, length n_features
        """
        out = []
        for j, name in enumerate(self.feature_names):
            if j in self._space.bins:
                qts, lo, hi = self._space.bins[j].edges, self._space.bins[j].mins, self._space.bins[j].maxs
                b, last = int(np.searchsorted(qts, row_t[j])), len(lo) - 1
                out.append(f"{name} <= {plain(hi[0], 4, trim=True)}" if b == 0 else
                           f"{name} > {plain(lo[b], 4, trim=True)}" if b >= last else
                           f"{plain(lo[b], 4, trim=True)} < {name} <= {plain(hi[b], 4, trim=True)}")
            elif j in self._names:
                levels = self._names[j]
                level = levels[int(min(max(round(float(row_t[j])), 0), len(levels) - 1))]
                out.append((level.replace(" x ", f" {name} ") if " x " in level else f"{name} {level}")
                           if j in self._bins else f"{name} = {level}")
            else:
                out.append(str(name))
        return tuple(out)

    def independent_seeds(self, n: int) -> tuple[int, ...]:
        """``n`` seeds whose explanations share no neighborhood (each uses ``repeats + 1`` consecutive seeds).

        For reruns (stability over seeds): seed ``seed + r (repeats + 1)`` for ``r = 0 .. n-1``.
        """
        return tuple(self.seed + r * (self.repeats + 1) for r in range(int(n)))

    def explain(self, x, *, seed: int | None = None, num_samples: int | None = None) -> Explanation:
        """Explain one row: the mean of ``repeats`` LIME fits, with the standard error of each weight.

        Parameters
        ----------
        x : array-like of shape (n_features,) or one-row DataFrame
        seed : int, optional
            Overrides the explainer's ``seed`` for this call (fits use ``seed .. seed+repeats-1``,
            the held-out neighborhood ``seed+repeats``).
        num_samples : int, optional
            Fit exactly this neighborhood size per repeat (no growth); ``converged`` still says
            whether the tolerance was met. Default: start at the explainer's ``num_samples`` and
            grow (:func:`explainers._lime_fits.repeat_until_converged`, ``jump=True``) until converged,
            ``max_samples`` or the time budget.

        Returns
        -------
        Explanation
            ``method="lime"``, ``values`` of shape (n_features,) (mean weight over the fits),
            ``fidelity`` the mean in-sample weighted R² of the fits, ``params`` with
            ``standard_error`` (tuple of n_features floats, units of ``values``), ``converged``
            (bool, judged on the identified features), ``tolerance`` (absolute, units of ``values``),
            ``unidentified`` (names of the features left out of that judgment, largest ``|weight|``
            first), ``min_changes``,
            ``num_samples`` (per fit, last
            round), ``repeats``, ``total_samples`` (every round), ``seconds``, ``heldout_r2`` (the
            mean surrogate on a fresh neighborhood) and ``local_pred``.

        Raises
        ------
        ValueError
            If ``x`` has the wrong number of features, or a missing value in a
            column that has none in the training data (and is not in ``missing_columns``).
        """
        row = np.asarray(x.to_numpy(dtype=float) if isinstance(x, pd.DataFrame) else x, dtype=float).ravel()
        d = len(self.feature_names)
        if row.size != d:
            raise ValueError(f"row has {row.size} values, expected {d} features")
        bad = [self.feature_names[j] for j in np.flatnonzero(np.isnan(row)) if j not in self._bins]
        if bad:
            raise ValueError(f"LIME cannot explain missing values in {bad[0]!r}: the training data has none "
                             "there (pass the column in missing_columns)")
        seed = self.seed if seed is None else int(seed)
        at = self._row_at(row)
        row_t, row_y = at[0], at[2]
        fixed = num_samples is not None
        r = repeat_until_converged(None, fit_round=lambda seeds, m: self._fit_round(at, seeds, m),
                                   num_samples=int(num_samples) if fixed else self.num_samples, seed=seed,
                                   repeats=self.repeats, rel_tolerance=self.rel_tolerance,
                                   time_budget_s=self.time_budget_s, max_samples=self.max_samples, fixed=fixed,
                                   jump=True, judge=lambda fits, m: self.identified(fits))
        fits, values, se, n, total = r.fits, r.values, r.standard_error, r.num_samples, r.total_samples
        converged, tolerance, seconds = r.converged, r.tolerance, r.seconds
        out_j = np.flatnonzero(~self.identified(fits))
        unidentified = tuple(self.feature_names[j] for j in out_j[np.argsort(-np.abs(values[out_j]), kind="stable")])
        judged_se = float(np.max(se[r.judged]))  # the identified features' (all of them if none is)
        intercept = float(np.mean([f[1] for f in fits]))
        score = float(np.mean([f[2] for f in fits]))
        heldout, prediction = self._heldout_r2(at, values, intercept, seed + self.repeats, n), row_y
        why = "" if converged else f" ({r.stopped_by})"
        of = " of the identified features" if 0 < len(unidentified) < d else ""
        source = (f"{self.source}; {n} samples per fit, {self.repeats} fits (seeds {seed}–{seed + self.repeats - 1}); "
                  f"largest standard error{of} {plain(judged_se, 2, trim=True)} "
                  f"{'≤' if converged else '>'} tolerance {plain(tolerance, 2, trim=True)} "
                  f"({self.rel_tolerance:.0%} of the largest |weight|{of}): "
                  + ("converged" if converged else f"not converged{why}")
                  + unidentified_note(unidentified, d, self.min_changes, n))
        return Explanation(
            method="lime", feature_names=self.feature_names, values=values, base_value=intercept,
            prediction=prediction, feature_values=row, output_space=self.output_space,
            target=self.class_names[self.target_index], source=source,
            fidelity=Fidelity("r2", score, n, "neighborhood"),
            params={"num_samples": n, "repeats": self.repeats, "total_samples": total, "seed": seed,
                    "kernel_width": self.kernel_width, "standard_error": tuple(float(v) for v in se),
                    "converged": converged, "tolerance": tolerance, "rel_tolerance": self.rel_tolerance,
                    "time_budget_s": self.time_budget_s, "seconds": seconds,
                    "heldout_r2": heldout, "local_pred": float(np.mean([f[3] for f in fits])), "units": self.units,
                    "binned_missing": tuple(self.feature_names[j] for j in self._bins),
                    "unidentified": unidentified, "min_changes": self.min_changes,
                    "conditions": self.conditions(row_t)},
        )

    def _row_at(self, row: np.ndarray) -> tuple:
        """What a fit of ``row`` (shape (n_features,)) needs: the row in LIME's space, the model on LIME-space rows,
        the explained output at the row, and the key of its binned columns (:mod:`explainers._lime_outputs`)."""
        row_t = self._to_lime(row[None, :])[0]
        fn = self._model_fn(row, row_t)  # it decodes binned columns in place: the row is copied
        binned = np.array([(row_t[j], row[j]) for j in sorted(self._bins)], dtype=float).tobytes()
        return row_t, fn, float(self._outputs(fn, row_t[None, :].copy())[0]), binned

    def _fit_round(self, at: tuple, seeds, n: int) -> list:
        """One LIME fit per seed (``at``: :meth:`explain`'s), the neighbourhoods the model has not seen sent to it in
        one call (a wide table's: in turn). Each fit is lime's ``explain_instance(row_t, fn, num_samples=n)`` with
        ``random_state=seed``: the neighbourhood of :meth:`LimeSpace.sample`, LIME's kernel on the distance of the
        binary representation to the row's (all ones), ridge with ``alpha=1`` (:func:`ridge_fit`). Returns (weights of
        shape (n_features,), intercept, in-sample R², local prediction, changes) per seed, ``changes`` of shape
        (n_features,) the samples whose indicator is 0 (its level or bin not the row's)."""
        if n * len(self.feature_names) * len(seeds) > ROUND_CELLS:  # a wide table: one neighbourhood at a time
            return [self._fit(*self._neighbourhoods(at, [s], n)[0], n) for s in seeds]
        return [self._fit(binary, ys, n) for binary, ys in self._neighbourhoods(at, seeds, n)]

    def _neighbourhoods(self, at: tuple, seeds, n: int) -> list:
        """``(binary, outputs)`` of each seed's neighbourhood of ``n`` samples: the outputs kept from an earlier row
        (:class:`explainers._lime_outputs.KeptOutputs`) or, for those not kept, from one model call."""
        row_t, fn, row_y, binned = at
        keys = [(s, n, self.target_index, binned) for s in seeds]
        found = [self._kept.get(k) for k in keys]  # a neighbourhood whose outputs are kept: its binary only
        samples = [self._space.sample(row_t, n, s, values=f is None) for s, f in zip(seeds, found)]
        binaries, inverses, samples = [b for b, _ in samples], [i for _, i in samples], None  # emptied once sent
        return list(zip(binaries, self._kept.outputs(lambda r: self._outputs(fn, r), inverses, keys, row_y, found)))

    def _fit(self, binary: np.ndarray, ys: np.ndarray, n: int) -> tuple:
        """One LIME fit of a neighbourhood (``binary``) and its outputs: :meth:`_fit_round`'s tuple."""
        binary = binary.astype(float)  # the sampler's bytes (LimeSpace.sample), as float64 for the fit
        with one_blas_thread():  # BLAS threads spinning against the model's OpenMP: 10-100x
            weights = kernel_weights(np.sqrt(((binary - 1.0) ** 2).sum(axis=1)), self.kernel_width)
            return (*ridge_fit(binary, ys, weights), n - binary.sum(axis=0))

    def identified(self, fits) -> np.ndarray:
        """Features the neighbourhood identifies: indicator changed in at least ``min_changes`` samples a fit.

        A weight (Ribeiro et al. 2016) rests on the samples whose indicator is 0; for a row at a one-hot dummy's
        common 0 whose 1 is rare (Adult's ``workclass_Never-worked``, 0.03 % of rows) that is about ``n × 0.0003``
        samples: the indicator is nearly constant, collinear with the intercept, its weight not identified.

        Parameters
        ----------
        fits : list
            :meth:`_fit_round`'s fits (their fifth item: per feature, the samples whose indicator is 0).

        Returns
        -------
        ndarray of bool, shape (n_features,)
            True where the mean count over the fits is at least ``min_changes``.
        """
        return np.mean([f[4] for f in fits], axis=0) >= self.min_changes

    def _outputs(self, fn, inverse: np.ndarray) -> np.ndarray:
        """The explained output of LIME-space rows, in calls of at most :data:`ROUND_CELLS` cells."""
        out = outputs_in_calls(fn, inverse, ROUND_CELLS)
        return out[:, self.target_index] if out.ndim == 2 else out

    def _heldout_r2(self, at: tuple, coef: np.ndarray, intercept: float, seed: int, n: int) -> float:
        """Weighted R² of the fitted surrogate on a fresh neighborhood of ``n`` samples drawn with ``seed``."""
        ((binary, ys),) = self._neighbourhoods(at, [seed], n)
        binary = binary.astype(float)
        weights = kernel_weights(np.sqrt(((binary - 1.0) ** 2).sum(axis=1)), self.kernel_width)
        return weighted_r2(ys, intercept + binary @ coef, weights)
