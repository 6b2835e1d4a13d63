"""Load a model and its data into a :class:`Workspace`: the bundled sample or the user's files.

Loading is strict and explicit: skops files are opened with a trusted-types list
(scikit-learn's own classes only), pickle/joblib only when the caller passes
``trust_pickle=True`` (the CLI's ``--trust-pickle`` flag), and every problem is a
:class:`~app.errors.CandorError` whose message names the file, column or type.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .errors import CandorError

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_models" / "artifacts"
SAMPLE_MODEL = SAMPLE_DIR / "breast_cancer_gb.skops"
SAMPLE_META = SAMPLE_DIR / "breast_cancer_gb.json"
TRANSFORMER_WEIGHTS = SAMPLE_DIR / "tabular_transformer.safetensors"
TRANSFORMER_META = SAMPLE_DIR / "tabular_transformer.json"
TRUSTED_PREFIXES = ("sklearn.", "numpy.", "scipy.")
MODEL_SUFFIXES = (".skops", ".joblib", ".pkl", ".pickle")


@dataclass
class Workspace:
    """A model and the table it is explained on.

    Attributes
    ----------
    name : str
        Shown in the navbar.
    model : fitted binary classifier with ``predict_proba``
    X : DataFrame of shape (n_rows, n_features)
        Feature columns in the order the model expects.
    y : ndarray of shape (n_rows,)
        True labels as indices into ``classes``.
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

    @property
    def positive_class(self) -> str:
        return self.classes[1]


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
    return sio.load(path, trusted=untrusted)


def load_model(path: str | Path, *, trust_pickle: bool = False):
    """Load a fitted scikit-learn model from ``path``.

    Raises
    ------
    CandorError
        For a missing file, an unknown suffix, a pickle without ``trust_pickle``,
        or a model without ``predict_proba``.
    """
    path = Path(path)
    if not path.is_file():
        raise CandorError(f"model file not found: {path}")
    suffix = path.suffix.lower()
    if suffix not in MODEL_SUFFIXES:
        raise CandorError(f"{path.name}: unsupported model file type {suffix or '(none)'}; "
                          f"expected one of {', '.join(MODEL_SUFFIXES)}")
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
    if not hasattr(model, "predict_proba"):
        raise CandorError(f"{path.name}: {type(model).__name__} has no predict_proba; "
                          "this version explains probabilistic classifiers")
    return model


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV file, naming the file and the parser's complaint on failure."""
    path = Path(path)
    if not path.is_file():
        raise CandorError(f"data file not found: {path}")
    if path.suffix.lower() != ".csv":
        raise CandorError(f"{path.name}: unsupported data file type {path.suffix or '(none)'}; expected .csv")
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise CandorError(f"{path.name}: not a readable CSV ({type(exc).__name__}: {str(exc).splitlines()[0]})") from None
    if df.empty:
        raise CandorError(f"{path.name}: the table has no rows")
    return df


def _feature_columns(model, df: pd.DataFrame, target: str, data_name: str) -> list[str]:
    if hasattr(model, "feature_names_in_"):
        expected = [str(c) for c in model.feature_names_in_]
        missing = [c for c in expected if c not in df.columns]
        if missing:
            raise CandorError(f"{data_name}: columns the model expects are missing: {', '.join(missing[:10])}"
                              + (f" and {len(missing) - 10} more" if len(missing) > 10 else ""))
        return expected
    features = [c for c in df.columns if c != target]
    n_expected = getattr(model, "n_features_in_", len(features))
    if n_expected != len(features):
        raise CandorError(f"{data_name}: the model expects {n_expected} features, the table has {len(features)} "
                          f"columns besides {target!r}")
    return features


def _encode_target(model, values: pd.Series, data_name: str, target: str) -> np.ndarray:
    classes = list(model.classes_)
    by_text = {str(c): i for i, c in enumerate(classes)}
    codes = values.astype(str).map(by_text)
    if codes.isna().any():
        bad = sorted(values[codes.isna()].astype(str).unique())[:5]
        raise CandorError(f"{data_name}: target {target!r} has values the model never predicts: {', '.join(bad)} "
                          f"(model classes: {', '.join(map(str, classes))})")
    return codes.to_numpy(dtype=int)


def load_user_workspace(model_path: str | Path, data_path: str | Path, target: str, *,
                        trust_pickle: bool = False, test_size: float = 0.25, seed: int = 0) -> Workspace:
    """Load the user's model and CSV and check that they fit together.

    The held-out rows are a seeded random ``test_size`` share of the CSV; if
    the model was trained on them, the metrics are optimistic (said in ``source``).

    Raises
    ------
    CandorError
        For every problem with the files, the target or the columns.
    """
    from sklearn.model_selection import train_test_split

    model = load_model(model_path, trust_pickle=trust_pickle)
    df = read_table(data_path)
    name = Path(data_path).name
    if target not in df.columns:
        raise CandorError(f"{name}: target column {target!r} not found; columns are {', '.join(map(str, df.columns[:12]))}"
                          + (" ..." if len(df.columns) > 12 else ""))
    if len(getattr(model, "classes_", [])) != 2:
        raise CandorError(f"{Path(model_path).name}: this version explains binary classifiers; "
                          f"the model has {len(getattr(model, 'classes_', []))} classes")
    features = _feature_columns(model, df, target, name)
    X = df[features]
    non_numeric = [c for c in features if not ptypes.is_numeric_dtype(X[c])]
    if non_numeric:
        raise CandorError(f"{name}: column {non_numeric[0]!r} has dtype {X[non_numeric[0]].dtype}; "
                          "this version explains numeric feature tables only")
    nan_cols = [c for c in features if X[c].isna().any()]
    if nan_cols:
        raise CandorError(f"{name}: column {nan_cols[0]!r} has {int(X[nan_cols[0]].isna().sum())} missing values; "
                          "LIME and this version's SHAP need complete rows")
    y = _encode_target(model, df[target], name, target)
    idx = np.arange(len(df))
    stratify = y if np.bincount(y).min() >= 2 else None
    train, test = train_test_split(idx, test_size=test_size, random_state=seed, stratify=stratify)
    return Workspace(
        name=name, model=model, X=X.astype(float), y=y, classes=tuple(str(c) for c in model.classes_),
        target=target, train_idx=np.sort(train), test_idx=np.sort(test),
        source=(f"your model {Path(model_path).name} ({type(model).__name__}) on {name}; held-out rows are a "
                f"random {test_size:.0%} of the CSV (seed {seed}), optimistic if the model saw them in training"),
    )


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
