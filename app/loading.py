"""Load a model and its data into a :class:`Workspace`: the bundled sample or the user's files.

Loading is strict and explicit: skops files are opened with a trusted-types list
(scikit-learn's own classes only), pickle/joblib only when the caller passes
``trust_pickle=True`` (the CLI's ``--trust-pickle`` flag), and every problem is a
:class:`~app.errors.CandorError` whose message names the file, column or type.

:func:`load_pair` accepts any scikit-learn estimator or Pipeline (classifier with
probabilities, margins or labels only; regressor; binary or multiclass) on a
table of any column types (see :class:`explainers._codec.TabularCodec`);
:func:`load_user_workspace` narrows it to what the dashboard pages show today:
class probabilities, one class against the rest.

PyTorch models (TorchScript, or a state dict + a named class) load through
:mod:`app.loading_torch`, never by unpickling; ``torch_options`` or a
``<model file>.json`` sidecar give their classes and outputs.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from pandas.api import types as ptypes
import pandas as pd

from explainers._codec import TabularCodec
from explainers.model_adapter import ModelAdapter, OneVsRest

from .errors import CandorError
from .loading_torch import TORCH_SUFFIXES, TorchOptions, check_numeric_columns, is_torch_model, load_torch_model
from .probe import probe
from .tables import read_table

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_models" / "artifacts"
SAMPLE_MODEL = SAMPLE_DIR / "breast_cancer_gb.skops"
SAMPLE_META = SAMPLE_DIR / "breast_cancer_gb.json"
TRANSFORMER_WEIGHTS = SAMPLE_DIR / "tabular_transformer.safetensors"
TRANSFORMER_META = SAMPLE_DIR / "tabular_transformer.json"
TRUSTED_PREFIXES = ("sklearn.", "numpy.", "scipy.")
MODEL_SUFFIXES = (".skops", ".joblib", ".pkl", ".pickle") + TORCH_SUFFIXES


@dataclass
class Workspace:
    """A model and the table it is explained on.

    Attributes
    ----------
    name : str
        Shown in the navbar.
    model : fitted binary classifier with ``predict_proba``
        For the user's files, a :class:`~explainers.model_adapter.OneVsRest`
        view that takes *encoded* rows (the pages' input).
    X : DataFrame of shape (n_rows, n_features)
        Feature columns in the order the model expects; for the user's files the
        float encoding of the raw table (category codes, NaN kept), named as the user wrote them.
    y : ndarray of shape (n_rows,)
        True labels as indices into ``classes`` (regression: the target values).
    classes : tuple of str
        Display names aligned with ``predict_proba`` columns.
    target : str
        Target column name.
    train_idx, test_idx : ndarray of int
        Row positions; held-out metrics and surrogate fidelity use ``test_idx``.
    source : str
        Where model and data came from.
    transformer_paths : (Path, Path) or None
        Weights and config of a tabular transformer over the same features.
    adapter : ModelAdapter or None
        The user's model behind one interface (task, outputs, units); ``None`` for the sample.
    raw : DataFrame or None
        The user's feature table as read (what the data table shows).
    notes : tuple of str
        Every normalisation done while loading, one line each.
    pair : Workspace or None
        For a one-class-against-the-rest view (:func:`one_vs_rest`), the workspace of all classes.
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
    metadata: dict = field(default_factory=dict)
    transformer_paths: tuple[Path, Path] | None = None
    adapter: ModelAdapter | None = None
    raw: pd.DataFrame | None = None
    notes: tuple[str, ...] = ()
    pair: "Workspace | None" = None

    @property
    def positive_class(self) -> str:
        return self.classes[1]

    @property
    def task(self) -> str:
        return self.adapter.task if self.adapter is not None else "binary"


def load_skops(path: Path):
    """Load a skops file, trusting only scikit-learn, numpy and scipy types.

    Raises
    ------
    CandorError
        If the file is not a valid skops archive or holds any other type.
    """
    import skops.io as sio

    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:  # skops raises zipfile/json errors on non-skops files
        raise CandorError(f"{path.name}: not a readable skops file ({type(exc).__name__}: {exc})") from None
    refused = [t for t in untrusted if not t.startswith(TRUSTED_PREFIXES)]
    if refused:
        raise CandorError(f"{path.name}: refusing to load types outside scikit-learn/numpy/scipy: {', '.join(refused)}")
    try:
        return sio.load(path, trusted=untrusted)
    except Exception as exc:
        raise CandorError(f"{path.name}: skops could not rebuild the model ({type(exc).__name__}: {exc})") from None


def load_model(path: str | Path, *, trust_pickle: bool = False, torch_options: TorchOptions | None = None):
    """Load a fitted scikit-learn estimator or Pipeline, or a PyTorch tabular model, from ``path``.

    Parameters
    ----------
    trust_pickle : bool, default=False
        Allow ``.joblib``/``.pkl`` (never a pickled PyTorch model).
    torch_options : TorchOptions, optional
        Classes, output, class and kwargs of a PyTorch model (see :mod:`app.loading_torch`).

    Raises
    ------
    CandorError
        For a missing file, an unknown suffix, a pickle without ``trust_pickle``,
        PyTorch options with a scikit-learn file, any PyTorch loading problem,
        or an object without ``predict``.
    """
    path = Path(path)
    if not path.is_file():
        raise CandorError(f"model file not found: {path}")
    suffix = path.suffix.lower()
    if suffix not in MODEL_SUFFIXES:
        raise CandorError(f"{path.name}: unsupported model file type {suffix or '(none)'}; "
                          f"expected one of {', '.join(MODEL_SUFFIXES)}")
    if suffix in TORCH_SUFFIXES:
        return load_torch_model(path, torch_options)
    if torch_options is not None and torch_options.given():
        raise CandorError(f"{path.name}: {', '.join(torch_options.given())} apply to PyTorch models only "
                          f"({', '.join(TORCH_SUFFIXES)}); a {suffix} model knows its own classes")
    if suffix == ".skops":
        model = load_skops(path)
    elif not trust_pickle:
        raise CandorError(f"{path.name}: {suffix} files run code when loaded; pass --trust-pickle only if you trust "
                          "this file, or save the model with skops")
    else:
        import joblib

        try:
            model = joblib.load(path)
        except Exception as exc:
            raise CandorError(f"{path.name}: could not unpickle ({type(exc).__name__}: {exc})") from None
    if not hasattr(model, "predict"):
        raise CandorError(f"{path.name}: {type(model).__name__} has no predict method; expected a fitted estimator")
    return model


def _feature_columns(model, df: pd.DataFrame, target: str, data_name: str) -> list:
    labels = {str(c): c for c in df.columns}
    if hasattr(model, "feature_names_in_"):
        expected = [str(c) for c in model.feature_names_in_]
        missing = [c for c in expected if c not in labels]
        if missing:
            raise CandorError(f"{data_name}: columns the model expects are missing: {', '.join(missing[:10])}"
                              + (f" and {len(missing) - 10} more" if len(missing) > 10 else ""))
        if target in expected:
            raise CandorError(f"{data_name}: the model takes the target {target!r} as a feature")
        return [labels[c] for c in expected]
    features = [c for c in df.columns if str(c) != target]
    n_expected = getattr(model, "n_features_in_", len(features))
    if n_expected != len(features):
        raise CandorError(f"{data_name}: the model expects {n_expected} features, the table has {len(features)} "
                          f"columns besides {target!r}")
    return features


def _strip_label(v: str) -> str:
    v = v.strip()
    return v[:-1].strip() if v.endswith(".") else v


def _encode_target(classes: tuple[str, ...], values: pd.Series, data_name: str, target: str,
                   notes: list[str]) -> np.ndarray:
    """Class index of every target value.

    Labels that differ from a class only by spaces or a trailing '.' (UCI Adult's
    test file: ``>50K.``) are normalised, and a note says how many and which.
    """
    if ptypes.is_float_dtype(values) and (values == values.round()).all():
        values = values.astype("int64")  # 1.0 is the class 1 (a CSV column with a gap reads as float)
        notes.append(f"{data_name}: target {target!r} read as decimals; whole numbers matched to the classes")
    by_text = {c: i for i, c in enumerate(classes)}
    text = values.astype(str)
    codes = text.map(by_text)
    if codes.isna().any():
        stripped = {_strip_label(c): i for i, c in enumerate(classes)}
        fixed = text[codes.isna()].map(_strip_label).map(stripped)
        if fixed.notna().all() and len(stripped) == len(classes):
            examples = sorted({f"{v!r} -> {classes[int(i)]!r}" for v, i in zip(text[codes.isna()], fixed)})[:4]
            notes.append(f"{data_name}: {int(codes.isna().sum())} target labels normalised (spaces / trailing '.' "
                         f"removed): {', '.join(examples)}")
            codes = codes.fillna(fixed)
        else:
            bad = sorted(text[codes.isna()].unique())[:5]
            raise CandorError(f"{data_name}: target {target!r} has values the model never predicts: "
                              f"{', '.join(bad)} (model classes: {', '.join(classes)})")
    return codes.to_numpy(dtype=int)


def load_pair(model_path: str | Path, data_path: str | Path, target: str, *, trust_pickle: bool = False,
              test_size: float = 0.25, seed: int = 0, torch_options: TorchOptions | None = None) -> Workspace:
    """Load the user's model and table, decide the task once, and check that they fit together.

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
        raise CandorError(f"{name}: target column {target!r} not found; columns are "
                          f"{', '.join(map(str, df.columns[:12]))}"
                          + (" ..." if len(df.columns) > 12 else ""))
    tcol = df[[c for c in df.columns if str(c) == target][0]]
    if tcol.isna().any():
        notes.append(f"{name}: {int(tcol.isna().sum())} rows without a target value dropped")
        df = df[tcol.notna()].reset_index(drop=True)
        tcol = tcol.dropna().reset_index(drop=True)
    features = _feature_columns(model, df, target, name)
    raw = df[features]
    for col in raw.columns:
        s = raw[col]
        if s.isna().all():
            notes.append(f"{name}: column {str(col)!r} is empty in every row")
        elif s.nunique(dropna=False) == 1:
            notes.append(f"{name}: column {str(col)!r} is constant ({s.iloc[0]!r})")
    try:
        codec = TabularCodec(raw)
    except TypeError as exc:
        raise CandorError(f"{name}: {exc}") from None
    if is_torch_model(model):
        check_numeric_columns(codec, name, model_name)
    try:
        adapter = ModelAdapter(model, codec, target=target)
    except TypeError as exc:
        raise CandorError(f"{model_name}: {exc}") from None
    notes += [f"{name}: {n}" for n in codec.notes()]
    probe(adapter, raw, model_name, name)
    if adapter.task == "regression":
        y = pd.to_numeric(tcol, errors="coerce")
        if y.isna().any():
            bad = tcol.iloc[int(np.flatnonzero(y.isna())[0])]
            raise CandorError(f"{name}: target {target!r} of a regressor must be numeric; got {bad!r}")
        y, stratify = y.to_numpy(dtype=float), None
    else:
        y = _encode_target(adapter.class_names, tcol, name, target, notes)
        counts = np.bincount(y)
        n_test = int(np.ceil(test_size * len(y)))
        stratify = y if counts.min() >= 2 and min(n_test, len(y) - n_test) >= len(counts) else None
    idx = np.arange(len(df))
    if len(idx) < 4:
        raise CandorError(f"{name}: {len(idx)} rows; at least 4 are needed to hold some out")
    train, test = train_test_split(idx, test_size=test_size, random_state=seed, stratify=stratify)
    return Workspace(
        name=name, model=adapter, X=codec.encode(raw), y=y, classes=adapter.class_names or (target,),
        target=target, train_idx=np.sort(train), test_idx=np.sort(test), adapter=adapter, raw=raw,
        notes=tuple(notes),
        source=(f"your model {model_name} ({type(model).__name__}) on {name}; held-out rows are a "
                f"random {test_size:.0%} of the table (seed {seed}), optimistic if the model saw them in training"),
    )


def load_user_workspace(model_path: str | Path, data_path: str | Path, target: str, *,
                        trust_pickle: bool = False, test_size: float = 0.25, seed: int = 0,
                        target_class: str | None = None, torch_options: TorchOptions | None = None) -> Workspace:
    """Load the user's files for the dashboard: a probabilistic classifier, one class against the rest.

    Parameters
    ----------
    target_class : str, optional
        The class every page explains; default ``CANDOR_CLASS`` or the last
        class (the positive class of a binary model).
    torch_options : TorchOptions, optional
        For a PyTorch model (see :mod:`app.loading_torch`).

    Raises
    ------
    CandorError
        As :func:`load_pair`, and for models without class probabilities
        (``python -m app check`` explains those).
    """
    ws = load_pair(model_path, data_path, target, trust_pickle=trust_pickle, test_size=test_size, seed=seed,
                   torch_options=torch_options)
    a = ws.adapter
    if a.kind != "probability":
        what = "a regressor" if a.task == "regression" else f"a classifier without predict_proba ({a.kind} outputs)"
        raise CandorError(f"{Path(model_path).name}: {type(a.model).__name__} is {what}; the dashboard pages show "
                          "class probabilities; run `python -m app check` to explain it")
    return one_vs_rest(ws, target_class or os.environ.get("CANDOR_CLASS") or a.class_names[-1])


def one_vs_rest(pair: Workspace, target_class: str) -> Workspace:
    """The dashboard's view of a probabilistic classifier: ``target_class`` against the rest.

    Parameters
    ----------
    pair : Workspace
        As returned by :func:`load_pair` (or by this function: ``pair.pair`` is reused), never changed.
    target_class : str
        One of the model's classes.

    Returns
    -------
    Workspace
        A new workspace whose ``model`` is a :class:`~explainers.model_adapter.OneVsRest`, ``y``
        is 1 for ``target_class``, and ``pair`` is the load_pair result (to choose another class).

    Raises
    ------
    CandorError
        If ``target_class`` is not one of the model's classes.
    """
    pair = pair.pair or pair
    a = pair.adapter
    if target_class not in a.class_names:
        raise CandorError(f"class {target_class!r} is not one of the model's classes: {', '.join(a.class_names)}")
    c = a.class_names.index(target_class)
    source = pair.source
    if a.task == "binary":
        classes = (a.class_names[1 - c], a.class_names[c])
    else:
        classes = (f"not {target_class}", target_class)
        source += f"; {len(a.class_names)} classes, pages explain {target_class!r} against the rest"
    return replace(pair, model=OneVsRest(a, c), classes=classes, y=(pair.y == c).astype(int), source=source,
                   pair=pair)


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
    return Workspace(
        name="Breast cancer (bundled sample)", model=model, X=X, y=y.to_numpy(), classes=tuple(meta["classes"]),
        target=meta["target"], train_idx=train, test_idx=test, metadata=meta,
        source=f"{meta['model']}, {meta['library']}; data: {meta['data']['name']} via {meta['data']['loaded_with']}",
        transformer_paths=transformer,
    )
