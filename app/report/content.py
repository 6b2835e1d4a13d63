"""What a review report holds, computed through the pages' own services (never a second computation path).

:func:`report_content` is the one service call behind ``python -m app report`` and the dashboard's
"Export report" button: the model card (:func:`app.services.model_summary`), the global views
(:func:`app.services.global_importance`, each global method of the table of methods beside it, the
Surrogate page's default MUSE fit, the Persuasive page's held-out curve) and, per chosen row, the Persuasive
page's view (:func:`app.services.persuasive_view`: the descriptive SHAP explanation, the simplified story, what was
dropped and what it cost). The renderer (:mod:`app.report.render`) turns it into figures with the pages' figure
builders.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from app import services
from app.services import counterfactuals as cfs
from explainers.numbers import plain
from workspace.errors import CandorError

from .provenance import Provenance, provenance

DEFAULT_K = 3
"""Items the persuasive story shows (the Persuasive page's default k)."""


@dataclass(frozen=True)
class RowSection:
    """One chosen row: why it was chosen, its navbar status line, the Persuasive page's view of it
    (``persuasive`` None when the persuasive layer does not apply, with ``why_not``), and its SHAP."""

    row: int
    reason: str
    status: str
    shap: object
    persuasive: object | None
    why_not: str | None
    story: object | None = None
    """The story test of the row's story (:func:`app.services.counterfactuals.story_view`, nothing held fixed), or None
    where it does not apply."""


@dataclass(frozen=True)
class ReportContent:
    """Everything a report shows; the renderer only formats it.

    ``surrogate`` is the Surrogate page's default MUSE view (None with ``surrogate_why`` when rules do not
    apply); ``global_curve`` the Persuasive page's held-out curve (None with ``persuasive_why``).
    """

    name: str
    summary: object
    n_rows: int
    n_features: int
    output_label: str
    importance: object
    surrogate: object | None
    surrogate_why: str | None
    global_curve: object | None
    persuasive_why: str | None
    rows: tuple[RowSection, ...]
    rows_rule: str
    k: int
    provenance: Provenance
    notes: tuple[str, ...] = field(default_factory=tuple)
    descriptions: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    """(display name, description) of each feature the features file describes."""
    methods: tuple = field(default_factory=tuple)
    """Each global method of the table of methods beside mean |SHAP| (:func:`app.services.methods.global_method_views`:
    permutation importance), or why it does not apply."""
    performance: object | None = None
    """The Performance page's view (:func:`app.services.performance.performance`), or None."""
    threshold: object | None = None
    """Its confusion at the default threshold (:func:`app.services.performance.confusion`), or None (no scores)."""
    dependence: tuple = field(default_factory=tuple)
    """The Dependence page's views of the features with the largest mean |SHAP| (:func:`app.services.dependence.top`)."""
    cohorts: object | None = None
    """The Cohorts page's view of every held-out row (:func:`app.services.cohorts_view`: the error tree's leaves and
    where the story misleads most), None with ``cohorts_why`` when cohorts do not apply."""
    cohorts_why: str | None = None


def parse_rows(text: str | None) -> list[int] | None:
    """``"3,17,42"`` → ``[3, 17, 42]`` (order kept, repeats dropped); None or blank → None.

    Raises
    ------
    CandorError
        For an item that is not a whole number, naming it.
    """
    if text is None or not str(text).strip():
        return None
    rows: list[int] = []
    for item in str(text).split(","):
        item = item.strip()
        try:
            r = int(item)
        except ValueError:
            raise CandorError(f"--rows takes row numbers separated by commas, e.g. 3,17,42; got {item!r}") from None
        if r not in rows:
            rows.append(r)
    return rows


def default_rows() -> tuple[list[int], list[str], str]:
    """Three held-out rows: the highest, the lowest and the median explained output.

    Returns
    -------
    rows : list of int
        Distinct row numbers (fewer than three on a table with fewer held-out rows).
    reasons : list of str
        Why each row was chosen, e.g. ``"highest P(malignant) of the held-out rows (0.999)"``.
    rule : str
        The rule, as the report states it.
    """
    ws = services.workspace()
    test = np.asarray(ws.test_idx)
    out = ws.output(ws.X.iloc[test])
    order = np.argsort(out, kind="stable")
    picks = [("highest", order[-1]), ("lowest", order[0]), ("median", order[len(order) // 2])]
    rows, reasons = [], []
    for word, i in picks:
        r = int(test[i])
        if r not in rows:
            rows.append(r)
            reasons.append(f"{word} {ws.output_label} of the held-out rows ({plain(out[i], 4, trim=True)})")
    rule = (f"No rows were chosen, so the report shows {len(rows)} held-out rows: the highest, the lowest and the "
            f"median {ws.output_label} among the {len(test):,} held-out rows.")
    return rows, reasons, rule


def report_content(rows: list[int] | None = None, *, k: int = DEFAULT_K, files: dict | None = None) -> ReportContent:
    """The report's content for the installed workspace, through the pages' services.

    Parameters
    ----------
    rows : list of int, optional
        Rows to explain; default :func:`default_rows`.
    k : int
        Items of the persuasive story (clipped by the service to the number of features).
    files : dict, optional
        ``{"model": path, "data": path}`` hashed (SHA-256) into the provenance, when the files are known.

    Raises
    ------
    CandorError
        For a row that does not exist (the message names the valid range), and as the services raise.
    """
    if rows is None:
        rows, reasons, rule = default_rows()
    else:
        rows = [services.check_row(r) for r in rows]  # every row checked before anything is computed
        reasons, rule = ["chosen"] * len(rows), f"Rows chosen by the person who exported: {', '.join(map(str, rows))}."
    if not rows:
        raise CandorError("no rows to report")
    ws = services.workspace()
    persuasive_why = services.why_not("persuasive")
    surrogate_why = services.why_not("surrogate")
    sections = []
    for r, reason in zip(rows, reasons):
        view = services.persuasive_view(r, k) if persuasive_why is None else None
        shap = view.simplification.parent if view is not None else services.shap_row(r)
        story = cfs.story_view(r, k) if view is not None and cfs.why_not() is None else None
        sections.append(RowSection(r, reason, services.row_status(r), shap, view, persuasive_why, story))
    surrogate = services.muse_view(services.default_muse_key()) if surrogate_why is None else None
    curve = services.persuasive_global() if persuasive_why is None else None
    k_used = sections[0].persuasive.settings["k"] if sections[0].persuasive is not None else k
    methods = services.methods.global_method_views()
    perf = services.performance.performance()
    threshold = (services.performance.confusion(services.performance.DEFAULT_THRESHOLD)
                 if perf.classifier is not None else None)
    cohorts_why = services.why_not("cohorts")
    return ReportContent(
        name=ws.name, summary=services.model_summary(), n_rows=len(ws.X), n_features=ws.X.shape[1],
        output_label=ws.output_label, importance=services.global_importance(), surrogate=surrogate,
        surrogate_why=surrogate_why, global_curve=curve, persuasive_why=persuasive_why, rows=tuple(sections),
        rows_rule=rule, k=k_used, provenance=provenance(files, sections, surrogate, k_used, methods),
        notes=tuple(ws.notes), descriptions=tuple((name, text) for _, name, text in services.feature_descriptions()),
        methods=methods, performance=perf, threshold=threshold, dependence=services.dependence.top(),
        cohorts=services.cohorts_view() if cohorts_why is None else None, cohorts_why=cohorts_why)
