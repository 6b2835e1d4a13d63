"""Load a model and its data into a :class:`Workspace`: the bundled sample or the user's files.

Loading is strict and explicit: skops files are opened with a reviewed list of types
(scikit-learn estimator classes and a few helper types, :mod:`workspace.model_safety`) after their
unpacked size is checked; anything that can run code from the file (other skops types,
pickle/joblib, TorchScript) only when the caller passes ``trust_pickle=True`` (the CLI's
``--trust-model-code``, alias ``--trust-pickle``), never for an upload; and every problem is a
:class:`~workspace.errors.CandorError` whose message names the file, column or type.

:func:`load_pair` accepts any scikit-learn estimator or Pipeline (classifier with
probabilities, margins or labels only; regressor; binary or multiclass) on a
table of any column types (see :class:`explainers._codec.TabularCodec`);
:func:`load_user_workspace` narrows it to what the dashboard pages show: one output (a class
against the rest, in probabilities, margins or labels; or a regressor's prediction).

PyTorch models (a state dict + a named class; TorchScript only with ``trust_pickle``) load through
:mod:`workspace.torch_files`, never by unpickling; ``torch_options`` or a
``<model file>.json`` sidecar give their classes and outputs.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from explainers._codec import TabularCodec
from explainers.model_adapter import CallLimits, ModelAdapter, OneVsRest, OutputView

from .errors import CandorError
from .columns import column_notes, encode_target, feature_columns
from .feature_names import FeatureNames, find_features_file, load_features, misnamed_features_file
from .model_files import load_model
from .model_safety import load_skops
from .torch_files import TorchOptions, check_numeric_columns, is_torch_model
from .smoke import probe
from .tables import read_table

log = logging.getLogger(__name__)

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_models" / "artifacts"
SAMPLE_MODEL = SAMPLE_DIR / "breast_cancer_gb.skops"
SAMPLE_META = SAMPLE_DIR / "breast_cancer_gb.json"
TRANSFORMER_WEIGHTS = SAMPLE_DIR / "tabular_transformer.safetensors"
TRANSFORMER_META = SAMPLE_DIR / "tabular_transformer.json"


@dataclass
class Workspace:
    """A model and the table it is explained on.

    Attributes
    ----------
    name : str
        Shown in the navbar.
    model : OutputView, or the ModelAdapter itself (a :func:`load_pair` result, all outputs)
        The explained output: a :class:`~explainers.model_adapter.OutputView`
        (:class:`~explainers.model_adapter.OneVsRest` for probabilities) that takes
        *encoded* rows (the pages' input); :meth:`output` gives the explained number. The bundled
        sample is shaped the same way (:func:`adapted_workspace`).
    X : DataFrame of shape (n_rows, n_features)
        Feature columns in the order the model expects: the float encoding of the raw table (category
        codes, NaN kept), named as the user wrote them.
    y : ndarray of shape (n_rows,)
        True labels as indices into ``classes`` (regression: the target values).
    classes : tuple of str
        (rest, explained class) display names; empty for a regressor.
    target : str
        Target column name.
    train_idx, test_idx : ndarray of int
        Row positions; held-out metrics and surrogate fidelity use ``test_idx``.
    source : str
        Where model and data came from.
    transformer_paths : (Path, Path) or None
        Weights and config of a tabular transformer over the same features.
    adapter : ModelAdapter
        The model behind one interface (task, outputs, units, codec), the sample's as a user's.
    raw : DataFrame or None
        The user's feature table as read (what the data table shows).
    notes : tuple of str
        Every normalisation done while loading, one line each.
    pair : Workspace or None
        For a one-class-against-the-rest view (:func:`one_vs_rest`), the workspace of all classes.
    features : FeatureNames or None
        The features file's names, descriptions and formats (:mod:`workspace.feature_names`), already
        applied to ``X``, ``raw`` and the adapter's codec; ``None`` without one.
    """

    name: str
    model: object
    X: pd.DataFrame
    y: np.ndarray
    classes: tuple[str, ...]
    target: str
    train_idx: np.ndarray
    test_idx: np.ndarray
    source: str
    adapter: ModelAdapter
    metadata: dict = field(default_factory=dict)
    transformer_paths: tuple[Path, Path] | None = None
    raw: pd.DataFrame | None = None
    notes: tuple[str, ...] = ()
    pair: "Workspace | None" = None
    features: FeatureNames | None = None

    @property
    def positive_class(self) -> str:
        """The explained class (a regressor: the target's name)."""
        return self.classes[1] if len(self.classes) > 1 else self.target

    @property
    def task(self) -> str:
        """"binary", "multiclass" or "regression" (the model's, whichever class is explained)."""
        return self.adapter.task

    @property
    def is_classifier(self) -> bool:
        return self.task != "regression"

    @property
    def output_kind(self) -> str:
        """Units of :meth:`output`: "probability", "margin", "label" or "raw" (a regressor's prediction)."""
        return self.adapter.kind

    @property
    def output_label(self) -> str:
        """Short name of the explained output, e.g. "P(malignant)", "margin of 'yes'", "predicted price"."""
        c = self.positive_class
        return {"probability": f"P({c})", "margin": f"margin of {c}", "label": f"predicted {c} (1/0)",
                "raw": f"predicted {c}"}[self.output_kind]

    def limited(self, limits: CallLimits) -> Workspace:
        """This workspace with every model call under ``limits`` (its adapter's :meth:`~ModelAdapter.limited`, the
        view and the pair on that adapter); ``self`` is unchanged."""
        adapter = self.adapter.limited(limits)

        def on(ws: Workspace) -> Workspace:
            model = adapter if ws.model is ws.adapter else type(ws.model)(adapter, ws.model.index)
            return replace(ws, adapter=adapter, model=model)

        return replace(on(self), pair=None if self.pair is None else on(self.pair))

    def output(self, X) -> np.ndarray:
        """The explained output of encoded rows ``X``, shape (n_rows,)."""
        return self.model.output(X)


def load_pair(model_path: str | Path, data_path: str | Path, target: str, *, trust_pickle: bool = False,
              test_size: float = 0.25, seed: int = 0, torch_options: TorchOptions | None = None,
              features_file: str | Path | None = None) -> Workspace:
    """Load the user's model and table, decide the task once, and check that they fit together.

    ``features_file`` (else ``<data file>.features.yaml``/``.yml``/``.json`` beside the data, if present)
    gives the features' display names and value formats (:mod:`workspace.feature_names`): the
    workspace's columns, codec and table then read those names and formats everywhere.

    The held-out rows are a seeded random ``test_size`` share of the table; if
    the model was trained on them, the metrics are optimistic (said in ``source``).

    Returns
    -------
    Workspace
        ``adapter`` set; ``model`` is the adapter itself (any task); ``y`` class
        indices (classification) or float targets (regression).

    Raises
    ------
    CandorError
        For every problem with the files, the target, the columns or their dtypes
        (a PyTorch model takes numeric columns only).
    """
    from sklearn.model_selection import train_test_split

    model = load_model(model_path, trust_pickle=trust_pickle, torch_options=torch_options)
    notes: list[str] = []
    df = read_table(data_path, notes)
    name, model_name = Path(data_path).name, Path(model_path).name
    if target not in [str(c) for c in df.columns]:
        cols = [str(c) for c in df.columns]
        close = [c for c in cols if c.strip().lower() == str(target).strip().lower()]
        if not close:
            import difflib

            close = difflib.get_close_matches(str(target), cols, n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        listed = cols if len(cols) <= 12 else cols[:6] + ["..."] + cols[-5:]  # the target is often last
        raise CandorError(f"{name}: target column {target!r} not found{hint}; columns are {', '.join(listed)}")
    tcol = df[[c for c in df.columns if str(c) == target][0]]
    if tcol.isna().any():
        notes.append(f"{name}: {int(tcol.isna().sum())} rows without a target value dropped")
        df = df[tcol.notna()].reset_index(drop=True)
        tcol = tcol.dropna().reset_index(drop=True)
    taken = set(features := feature_columns(model, df, target, name))  # a list: 10,000² comparisons (issue 27)
    unused = [str(c) for c in df.columns if str(c) != target and c not in taken]
    if unused:
        notes.append(f"{name}: {len(unused)} column(s) the model does not take are left out: "
                     f"{', '.join(unused[:8])}{' ...' if len(unused) > 8 else ''}")
    if not hasattr(model, "feature_names_in_"):
        notes.append(f"{name}: the model was fitted without column names; columns are matched by position")
    raw = df[features]
    notes += column_notes(raw, name)
    try:
        codec = TabularCodec(raw)
    except TypeError as exc:
        raise CandorError(f"{name}: {exc}") from None
    shown = None
    if (sidecar := find_features_file(data_path, features_file)) is not None:
        shown = load_features(sidecar, [str(c) for c in raw.columns])
        codec = shown.apply(codec)  # names and formats people read; the model still gets its own columns
        notes.append(f"{name}: feature names and value formats from {sidecar.name}")
    elif features_file is None and (guess := misnamed_features_file(data_path)):
        notes.append(f"{name}: {guess}")
        log.warning("candor: %s", guess)  # at start, not only in the notes: a wrong name is never ignored silently
    if is_torch_model(model):
        check_numeric_columns(codec, name, model_name)
    names = None if is_torch_model(model) or torch_options is None else torch_options.classes
    try:  # --classes of a scikit-learn model: names people read for its classes_, one each
        adapter = ModelAdapter(model, codec, target=target, class_names=names)
    except TypeError as exc:
        raise CandorError(f"{model_name}: {'--classes: ' if names else ''}{exc}") from None
    notes += [f"{name}: {n}" for n in codec.notes()]
    probe(adapter, raw, model_name, name)
    if adapter.task == "regression":
        y = pd.to_numeric(tcol, errors="coerce")
        if y.isna().any():
            bad = tcol.iloc[int(np.flatnonzero(y.isna())[0])]
            raise CandorError(f"{name}: target {target!r} of a regressor must be numeric; got {bad!r}")
        y, stratify = y.to_numpy(dtype=float), None
    else:
        own = tuple(str(c) for c in adapter.classes_)  # the data may spell classes as the model or as --classes
        y = encode_target(adapter.class_names, tcol, name, target, notes, aliases=own if names else ())
        counts = np.bincount(y)
        n_test = int(np.ceil(test_size * len(y)))
        stratify = y if counts.min() >= 2 and min(n_test, len(y) - n_test) >= len(counts) else None
    idx = np.arange(len(df))
    if len(idx) < 4:
        raise CandorError(f"{name}: {len(idx)} rows; at least 4 are needed to hold some out")
    train, test = train_test_split(idx, test_size=test_size, random_state=seed, stratify=stratify)
    return Workspace(
        name=name, model=adapter, X=codec.encode(raw), y=y, classes=adapter.class_names or (target,),
        target=target, train_idx=np.sort(train), test_idx=np.sort(test), adapter=adapter,
        raw=_narrow_ints(raw if shown is None else raw.set_axis(list(codec.names), axis=1)), features=shown,
        notes=tuple(notes),
        source=(f"your model {model_name} ({type(model).__name__}) on {name}; held-out rows are a "
                f"random {test_size:.0%} of the table (seed {seed}), optimistic if the model saw them in training"),
    )


def _narrow_ints(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each wide integer column in the smallest integer type that holds its values (the same values).

    The raw table is kept for display beside the float encoding ``X``: a one-hot table's 0/1 columns then take
    one byte a cell instead of eight (Adult's 108 columns: 27 MB down to 3.4 MB in every server process).
    """
    wide = {i for i, dt in enumerate(frame.dtypes) if isinstance(dt, np.dtype) and dt.kind in "iu" and dt.itemsize > 1}
    if not wide:
        return frame
    # column by column, never a copy of the whole table (on Adult a copy cost 28 MB of peak memory at load)
    columns = [pd.to_numeric(frame.iloc[:, i], downcast="integer") if i in wide else frame.iloc[:, i]
               for i in range(frame.shape[1])]
    return pd.concat(columns, axis=1, keys=range(frame.shape[1])).set_axis(frame.columns, axis=1)


def load_user_workspace(model_path: str | Path, data_path: str | Path, target: str, *,
                        trust_pickle: bool = False, test_size: float = 0.25, seed: int = 0,
                        target_class: str | None = None, torch_options: TorchOptions | None = None,
                        features_file: str | Path | None = None) -> Workspace:
    """Load the user's files for the dashboard: one output explained (a class against the rest, or a regressor's).

    Parameters
    ----------
    target_class : str, optional
        The class every page explains (``Settings.target_class``, ``--target-class``); default the last
        class (the positive class of a binary model).
    torch_options : TorchOptions, optional
        For a PyTorch model (see :mod:`workspace.torch_files`).
    features_file : str or Path, optional
        Display names and value formats of the features (see :func:`load_pair`).

    Raises
    ------
    CandorError
        As :func:`load_pair`, and as :func:`one_vs_rest`.
    """
    ws = load_pair(model_path, data_path, target, trust_pickle=trust_pickle, test_size=test_size, seed=seed,
                   torch_options=torch_options, features_file=features_file)
    a = ws.adapter
    if a.task == "regression":
        if target_class:
            raise CandorError(f"{Path(model_path).name}: {type(a.model).__name__} is a regressor; a target class "
                              "(--target-class, CANDOR_CLASS) applies to classifiers only")
        return one_vs_rest(ws, None)
    return one_vs_rest(ws, target_class or a.class_names[-1])


def one_vs_rest(pair: Workspace, target_class: str | None) -> Workspace:
    """The dashboard's view of the user's model: ``target_class`` against the rest, or a regressor's output.

    Parameters
    ----------
    pair : Workspace
        As returned by :func:`load_pair` (or by this function: ``pair.pair`` is reused), never changed.
    target_class : str or None
        One of the model's classes (``None`` for a regressor).

    Returns
    -------
    Workspace
        A new workspace whose ``model`` is an :class:`~explainers.model_adapter.OutputView` (a
        :class:`~explainers.model_adapter.OneVsRest` for probabilities) of the chosen output, ``y``
        is 1 for ``target_class`` (a regressor: the targets), and ``pair`` is the load_pair result
        (to choose another class).

    Raises
    ------
    CandorError
        If ``target_class`` is not one of the model's classes, or is the negative class of a binary
        margin model (its ``decision_function`` gives the margin of the positive class only).
    """
    pair = pair.pair or pair
    a = pair.adapter
    if a.task == "regression":
        return replace(pair, model=OutputView(a, 0), classes=(), pair=pair,
                       source=f"{pair.source}; explained output: {a.units(0)}")
    if target_class not in a.class_names:
        raise CandorError(f"class {target_class!r} is not one of the model's classes: {', '.join(a.class_names)}")
    c = a.class_names.index(target_class)
    k = c
    if a.kind == "margin" and a.task == "binary":
        if c != 1:
            raise CandorError(f"class {target_class!r}: this model's decision_function gives the margin of "
                              f"{a.class_names[1]!r} only; explain that class")
        k = 0
    source = pair.source
    if a.task == "binary":
        classes = (a.class_names[1 - c], a.class_names[c])
    else:
        classes = (f"not {target_class}", target_class)
        source += f"; {len(a.class_names)} classes, pages explain {target_class!r} against the rest"
    view = OneVsRest(a, k) if a.kind == "probability" else OutputView(a, k)
    if a.kind != "probability":
        source += f"; explained output: {view.units()}"
    return replace(pair, model=view, classes=classes, y=(pair.y == c).astype(int), source=source, pair=pair)


def adapted_workspace(model, X: pd.DataFrame, y, *, classes: tuple[str, str], target: str, train_idx, test_idx,
                      name: str, source: str, metadata: dict | None = None,
                      transformer_paths: tuple[Path, Path] | None = None) -> Workspace:
    """A fitted binary classifier with probabilities on a numeric table ``X``, behind the same
    :class:`~explainers.model_adapter.ModelAdapter` and :class:`~explainers.model_adapter.OneVsRest` view as
    :func:`load_user_workspace` gives (``classes[1]`` against ``classes[0]``; ``y`` in 0/1): the bundled sample.

    Raises
    ------
    TypeError
        If the model has no ``predict_proba`` or ``classes`` does not name its two classes.
    """
    adapter = ModelAdapter(model, TabularCodec(X), target=target, class_names=classes)
    if adapter.kind != "probability" or adapter.task != "binary":
        raise TypeError(f"{type(model).__name__} gives {adapter.task} {adapter.kind} outputs; "
                        "expected a binary classifier with predict_proba")
    pair = Workspace(name=name, model=adapter, X=X, y=np.asarray(y), classes=adapter.class_names, target=target,
                     train_idx=np.asarray(train_idx), test_idx=np.asarray(test_idx), source=source, adapter=adapter,
                     metadata=dict(metadata or {}), transformer_paths=transformer_paths)
    return one_vs_rest(pair, adapter.class_names[1])


def load_sample_workspace() -> Workspace:
    """The bundled gradient-boosting model on the breast cancer data (built by ``sample_models``).

    Raises
    ------
    CandorError
        If the sample has not been built (run ``python -m sample_models``).
    """
    from sample_models.common import breast_cancer

    if not (SAMPLE_MODEL.exists() and SAMPLE_META.exists()):
        raise CandorError("the bundled sample model is not built; run: python -m sample_models")
    meta = json.loads(SAMPLE_META.read_text())
    model = load_skops(SAMPLE_MODEL)
    X, y = breast_cancer()
    test = np.asarray(meta["split"]["test_indices"], dtype=int)
    train = np.setdiff1d(np.arange(len(X)), test)
    transformer = (TRANSFORMER_WEIGHTS, TRANSFORMER_META) if TRANSFORMER_WEIGHTS.exists() else None
    return adapted_workspace(
        model, X, y.to_numpy(), classes=tuple(meta["classes"]), target=meta["target"], train_idx=train, test_idx=test,
        name="Breast cancer (bundled sample)", metadata=meta, transformer_paths=transformer,
        source=f"{meta['model']}, {meta['library']}; data: {meta['data']['name']} via {meta['data']['loaded_with']}",
    )
