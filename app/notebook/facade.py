"""Candor from a notebook: load a model and its data, get the dashboard's explanations, costs and figures as objects.

:class:`Candor` holds one loaded workspace and its own :class:`app.services.ServiceState`; each method installs them
for its call (:func:`app.services.overridden`) and calls the page's own service, so a notebook gets the numbers and the
figures the dashboard shows for the same row, never a second computation of them. What a call computed stays in
the object's state: asking again is a cache hit.
"""
from __future__ import annotations

import dataclasses
import warnings
from contextlib import contextmanager
from pathlib import Path

from app import services
from app.services.selection import Selection
from workspace import limits, settings
from workspace.errors import CandorError
from workspace.torch_options import TorchOptions

from . import figures as _figures


class Candor:
    """One model explained on one table, as the dashboard explains it.

    Make one with :meth:`load` (the bundled sample without arguments). The methods take a row number of the table
    (0-based, as the dashboard's row box; a dict ``{"row": 3, "edits": {"mean radius": 20}}`` is the what-if
    editor's edited row) and return the services' frozen result types.

    Parameters
    ----------
    workspace : workspace.workspace.Workspace
        The loaded model and table.
    selection : app.services.selection.Selection
        What it was loaded from (the report's provenance names these files).
    chosen : workspace.settings.Settings
        The settings every call runs under: the environment's, with the model, data and trust flag given to
        :meth:`load`.

    Examples
    --------
    >>> from app.notebook import Candor
    >>> c = Candor.load()                                   # doctest: +SKIP
    >>> c.shap(128).values.shape                            # doctest: +SKIP
    (30,)
    """

    def __init__(self, workspace, *, selection: Selection, chosen: settings.Settings) -> None:
        self._settings = chosen
        with settings.installed(chosen):
            limited = limits.model_call_limits(timeout=False)  # a model that raises: one line, as check says it
        self._state = services.ServiceState(workspace, selection=selection, call_limits=limited)

    @classmethod
    def load(cls, model_path=None, data_path=None, *, target: str | None = None, target_class: str | None = None,
             features_file=None, trust_model_code: bool = False, torch_options: TorchOptions | None = None) -> Candor:
        """Load a model and its table as ``python -m app --model ... --data ... --target ...`` does.

        Parameters
        ----------
        model_path : str or Path, optional
            A fitted scikit-learn estimator or Pipeline saved with skops, or a PyTorch tabular model (README, "Model
            files and code"). Default None: the bundled sample (a gradient-boosting classifier on the breast cancer
            table).
        data_path : str or Path, optional
            CSV/TSV or Parquet with the model's feature columns and the target column.
        target : str, optional
            The target column of ``data_path``.
        target_class : str, optional
            The class explained against the rest (a multiclass model; default the last class).
        features_file : str or Path, optional
            Display names and value formats of the features (README, "Names people read"); default
            ``<data file>.features.yaml`` beside the data, if present.
        trust_model_code : bool, default=False
            The model file may RUN CODE: ``.joblib``/``.pkl``, TorchScript and skops types outside Candor's reviewed
            list load only with it, as with ``--trust-model-code``. Only for files you trust.
        torch_options : workspace.torch_options.TorchOptions, optional
            A PyTorch state dict's class, constructor arguments, classes and outputs (as ``--torch-*``).

        Returns
        -------
        Candor

        Raises
        ------
        CandorError
            One line, as the command line prints it: arguments that go together given apart, a file that cannot be
            loaded, a skops type outside the reviewed list without ``trust_model_code``, a missing target column.
        """
        given = {"model_path": model_path, "data_path": data_path, "target": target}
        if any(v is not None for v in given.values()) and not all(v is not None for v in given.values()):
            missing = ", ".join(k for k, v in given.items() if v is None)
            raise CandorError(f"Candor.load: model_path, data_path and target go together; missing {missing}")
        extra = {"target_class": target_class, "features_file": features_file, "torch_options": torch_options,
                 "trust_model_code": trust_model_code or None}
        if model_path is None and any(v is not None for v in extra.values()):
            named = ", ".join(k for k, v in extra.items() if v is not None)
            raise CandorError(f"Candor.load: {named} go(es) with model_path (the bundled sample takes none)")
        where = lambda p: Path(p).absolute() if p is not None else None  # noqa: E731  (run() serves from the checkout)
        chosen = dataclasses.replace(
            settings.current(), model=where(model_path), data=where(data_path), target=target,
            target_class=target_class, features_file=where(features_file), trust_pickle=bool(trust_model_code),
            torch=torch_options or TorchOptions(), store=None)
        if trust_model_code:
            warnings.warn("trust_model_code=True lets the model file run code (pickle, TorchScript, any skops type)",
                          stacklevel=2)
        selection = Selection.from_settings(chosen)
        with settings.installed(chosen):  # the limits a load reads (unpacked size, cells, memory) are these
            ws = selection.load()
        return cls(ws, selection=selection, chosen=chosen)

    @contextmanager
    def _active(self):
        with settings.installed(self._settings), services.overridden(self._state):
            yield

    @property
    def workspace(self):
        """The loaded :class:`~workspace.workspace.Workspace` (``X``, ``y``, ``test_idx``, ``adapter``, ``notes``)."""
        return self._state.workspace

    @property
    def held_out(self) -> list[int]:
        """The held-out rows (their numbers), on which agreement, performance and the curves are measured."""
        return [int(r) for r in self.workspace.test_idx]

    def summary(self):
        """The model card: task, classes, held-out metrics and where model and data came from
        (:class:`explainers.ModelSummary`)."""
        with self._active():
            return services.model_summary()

    def shap(self, row):
        """SHAP attributions of ``row`` (:class:`explainers.Explanation`: ``values``, ``base_value``,
        ``prediction``, ``additivity_gap``, ``source``), as the Descriptive page shows them.

        Raises
        ------
        CandorError
            For a row that does not exist (the valid range is named).
        """
        with self._active():
            return services.shap_row(row)

    def lime(self, row):
        """LIME attributions of ``row`` with their local R² (``fidelity``), seeded as the Descriptive page's.

        Raises
        ------
        CandorError
            For a row that does not exist.
        """
        with self._active():
            return services.lime_row(row)

    def local(self, row, k: int = 5):
        """SHAP and LIME of ``row`` and how far they agree (Spearman, Kendall τ-b, top-``k`` overlap, sign agreement):
        the Descriptive page's :class:`app.services.LocalView`."""
        with self._active():
            return services.local_view(row, k=k)

    def importance(self):
        """Global SHAP importance (mean |SHAP| per feature, :class:`explainers.GlobalImportance`)."""
        with self._active():
            return services.global_importance()

    def surrogate(self, features_of_interest=None, *, max_rules: int | None = None, max_width: int | None = None,
                  max_neighborhoods: int | None = None, lambdas: str | None = None):
        """A MUSE two-level decision set fitted to the model's predictions, as the Surrogate page fits it.

        Parameters
        ----------
        features_of_interest : list of str, optional
            Features the neighborhoods are described by (default every feature).
        max_rules, max_width, max_neighborhoods : int, optional
            Budgets (defaults 10, 3 and 4, as the page's).
        lambdas : str, optional
            MUSE's five λ weights, e.g. ``"0.1, 0.1, 0.1, 1, auto"`` (the page's default).

        Returns
        -------
        app.services.MuseView
            ``heldout.agreement`` (with ``agreement_low``/``agreement_high``, its Wilson 95 % interval) is the
            surrogate's agreement with the model on the held-out rows; ``rule_set``, ``rule_texts``,
            ``detail.trivial_agreement`` (always the majority label) beside it.

        Raises
        ------
        CandorError
            For a regression model (rule surrogates imitate class labels) or a bad budget (named).
        """
        with self._active():
            services.applicable.require("surrogate")
            params = services.muse_params(features_of_interest, max_rules, max_width, max_neighborhoods, lambdas)
            return services.muse_view(services.fit_muse(params))

    def persuasive(self, row, k: int = 3, *, rounding: str = "exact", grouping: bool = False, sensitive=()):
        """The simplified story of ``row`` (its top-``k`` SHAP items) and what it costs in fidelity.

        Parameters
        ----------
        row : int
            The row.
        k : int, default=3
            Items the story shows (the report's default; clipped to the number of features).
        rounding : {"exact", "0.01", "0.05", "0.1", "qualitative", "direction"}, default="exact"
        grouping : bool, default=False
            Group correlated features into one item.
        sensitive : sequence of str
            Features whose hiding the guardrail names.

        Returns
        -------
        app.services.PersuasiveView
            ``simplification.statement`` (the sentence, checked against the SHAP values), ``simplification.items``,
            ``simplification.fidelity_after`` (``mass_retained``: share of |attribution| shown, ``sufficiency``,
            ``comprehensiveness``, ...), ``dropped``, ``guardrail`` and the Gilpin labels.

        Raises
        ------
        CandorError
            Where the persuasive layer does not apply (a model without class probabilities) or for a bad setting.
        """
        with self._active():
            return services.persuasive_view(row, k, rounding, grouping, list(sensitive))

    def performance(self):
        """The Performance page's view: ROC, precision-recall, calibration with intervals, a multiclass model's
        confusion matrix and accuracy, or a regressor's R² and RMSE
        (:class:`app.services.performance.PerformanceView`)."""
        with self._active():
            return services.performance.performance()

    figure_names = tuple(_figures.FIGURES)
    """The names :meth:`figure` takes."""

    def figure(self, name: str, row=None, *, k: int = 3, feature: str | None = None, threshold: float = 0.5):
        """One of the dashboard's figures, as its page draws it (a :class:`plotly.graph_objects.Figure`).

        Parameters
        ----------
        name : str
            One of :attr:`figure_names`: ``"importance"``, ``"beeswarm"``, ``"permutation_importance"``, the row's
            ``"waterfall"``, ``"lime"``, ``"descriptive"``, ``"story"``, ``"tradeoff"``, ``"global_tradeoff"``,
            ``"surrogate"``, ``"roc"``, ``"pr"``, ``"calibration"``, ``"confusion"``, ``"multiclass"``,
            ``"predicted_actual"``, ``"residuals"``, a feature's ``"dependence"`` and ``"pdp"``.
        row : int, optional
            For a row's figure; default the first held-out row (where the pages open).
        k : int, default=3
            Items of the story (``"descriptive"``, ``"story"``, ``"tradeoff"``, ``"global_tradeoff"``).
        feature : str, optional
            For ``"dependence"`` and ``"pdp"``.
        threshold : float, default=0.5
            For ``"confusion"``.

        Raises
        ------
        CandorError
            For an unknown name (the names are listed), a figure that does not apply to this model (why), a row or
            feature that does not exist.
        """
        with self._active():
            if row is None and _figures.FIGURES.get(name) is not None and _figures.FIGURES[name].needs == "row":
                row = services.default_row()
            return _figures.draw(name, row, k, feature, threshold)

    def report(self, path, *, rows=None, k: int = 3, pdf=None) -> Path:
        """Write the review report, as ``python -m app report`` does: one self-contained HTML file (and a PDF).

        Parameters
        ----------
        path : str or Path
            The HTML file to write.
        rows : list of int, optional
            Rows to explain; default the held-out rows with the highest, lowest and median output.
        k : int, default=3
            Items of each row's story.
        pdf : str or Path, optional
            Also print the report to this PDF (needs Chromium).

        Returns
        -------
        Path
            The HTML file.
        """
        from app.report import cli

        html_path, pdf_path = cli.outputs(str(path), str(pdf) if pdf is not None else None, k)
        with self._active():
            cli.write(list(rows) if rows is not None else None, k=k, html_path=html_path, pdf_path=pdf_path)
        return html_path

    def run(self, port: int | None = None, *, host: str = "127.0.0.1", block: bool = False, timeout: float = 120.0):
        """Serve the dashboard on this model and data, as ``python -m app`` does, in a process of its own.

        Parameters
        ----------
        port : int, optional
            Default: a free port the operating system gives.
        host : str, default="127.0.0.1"
            Beyond this machine only with a login (SECURITY.md).
        block : bool, default=False
            Wait until the server ends (Ctrl-C stops it), as a script would; by default return once it answers.
        timeout : float, default=120.0
            Seconds to wait for its first page.

        Returns
        -------
        app.notebook.served.Dashboard
            ``url``, ``stop()``, ``wait()``; shown in a notebook as a link.

        Raises
        ------
        CandorError
            The server's own line when it does not start (a busy port, a file it cannot load), or a time-out.
        """
        from .served import serve

        dashboard = serve(self._settings, port=port, host=host, timeout=timeout)
        if block:
            dashboard.wait()
        return dashboard

    def __repr__(self) -> str:
        ws = self.workspace
        return (f"Candor({ws.name!r}: {len(ws.X):,} rows x {ws.X.shape[1]:,} features, {ws.task}, "
                f"explaining {ws.output_label})")
