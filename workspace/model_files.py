"""Open one model file: a fitted scikit-learn estimator or Pipeline, or a PyTorch tabular model.

The trust rule lives here: ``.skops`` files open with Candor's reviewed list of types
(:mod:`workspace.model_safety`); ``.joblib``/``.pkl`` (pickle), TorchScript, and skops types outside that
list only with ``trust_pickle=True`` (the CLI's ``--trust-model-code``, alias ``--trust-pickle``), never
for an upload; PyTorch state dicts through :mod:`workspace.torch_files`, never by unpickling.
"""
from __future__ import annotations

from pathlib import Path

from .errors import CandorError
from .model_safety import load_skops
from .torch_files import TORCH_SUFFIXES, TorchOptions, load_torch_model

MODEL_SUFFIXES = (".skops", ".joblib", ".pkl", ".pickle") + TORCH_SUFFIXES


def load_model(path: str | Path, *, trust_pickle: bool = False, torch_options: TorchOptions | None = None):
    """Load a fitted scikit-learn estimator or Pipeline, or a PyTorch tabular model, from ``path``.

    Parameters
    ----------
    trust_pickle : bool, default=False
        The file may run code (the CLI's ``--trust-model-code`` / ``--trust-pickle``): allow
        ``.joblib``/``.pkl``, TorchScript, and skops types outside the reviewed list (never a
        pickled PyTorch model).
    torch_options : TorchOptions, optional
        Classes, output, class and kwargs of a PyTorch model (see :mod:`workspace.torch_files`); of a
        scikit-learn model only ``classes`` applies (checked against ``classes_`` by :func:`~workspace.workspace.load_pair`).

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
        return load_torch_model(path, torch_options, trust_code=trust_pickle)
    torch_only = [g for g in (torch_options.given() if torch_options is not None else ()) if g != "classes"]
    if torch_only:  # --classes names a scikit-learn model's classes too (checked by the adapter)
        flags = {"model_class": "--torch-class", "kwargs": "--torch-kwargs", "classes": "--classes",
                 "output": "--torch-output", "feature_names": "feature_names"}
        raise CandorError(f"{path.name}: {', '.join(flags[g] for g in torch_only)} "
                          f"{'applies' if len(torch_only) == 1 else 'apply'} to PyTorch models only "
                          f"({', '.join(TORCH_SUFFIXES)}), not to a {suffix} file")
    if suffix == ".skops":
        model = load_skops(path, trust_code=trust_pickle)
    elif not trust_pickle:
        raise CandorError(f"{path.name}: {suffix} files run code when loaded; pass --trust-pickle only if you trust "
                          "this file (--trust-model-code is the same flag), or save the model with skops")
    else:
        import joblib

        try:
            model = joblib.load(path)
        except Exception as exc:
            raise CandorError(f"{path.name}: could not unpickle ({type(exc).__name__}: {exc})") from None
    if not hasattr(model, "predict"):
        raise CandorError(f"{path.name}: {type(model).__name__} has no predict method; expected a fitted estimator")
    return model
