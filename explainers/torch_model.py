"""A scikit-learn-like view of a PyTorch tabular model, so that every explainer can call it.

:class:`TorchTabularModel` wraps a ``torch.nn.Module`` (a plain module or a
TorchScript ``RecursiveScriptModule``) that maps a float tensor of shape
(n_rows, n_features) to (n_rows, n_outputs), or (n_rows,) for one logit or one
regression output, and exposes what :class:`~explainers.model_adapter.ModelAdapter`
calls: ``predict``, ``predict_proba`` (classifiers only), ``classes_``,
``n_features_in_`` and, if feature names are given, ``feature_names_in_``.

The module runs in eval mode under ``torch.no_grad()``, in batches of
``batch_size`` rows; the wrapper never calls ``.train()``, never computes a
gradient of the parameters and never changes them (:meth:`parameter_fingerprint`
lets callers check). Thread counts (``torch.set_num_threads``) belong to the
process (the server or the CLI), not to this class.

How a model file becomes a module (TorchScript via ``torch.jit.load``, a state
dict via ``torch.load(weights_only=True)`` or ``safetensors``) is the app's job:
see :mod:`workspace.torch_files`.

References
----------
PyTorch, "Saving and loading models" and ``torch.load`` (``weights_only=True``):
https://pytorch.org/docs/stable/generated/torch.load.html; TorchScript
``torch.jit.load``: https://pytorch.org/docs/stable/generated/torch.jit.load.html
"""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import torch
from pandas.api import types as ptypes
from torch import nn

__all__ = ["TorchTabularModel", "infer_n_features"]

OUTPUTS = ("logits", "probabilities")


def _float_matrix(X, feature_names) -> np.ndarray:
    """Rows as a float64 matrix; non-numeric columns raise a TypeError naming the column."""
    if isinstance(X, pd.DataFrame):
        if feature_names is not None:
            labels = {str(c): c for c in X.columns}
            missing = [f for f in feature_names if f not in labels]
            if missing:
                raise ValueError(f"columns the model expects are missing: {', '.join(missing[:10])}")
            X = X[[labels[f] for f in feature_names]]
        for col in X.columns:
            dtype = X[col].dtype
            if not (ptypes.is_numeric_dtype(dtype) or ptypes.is_bool_dtype(dtype)) or \
                    isinstance(dtype, pd.CategoricalDtype) or ptypes.is_complex_dtype(dtype):
                raise TypeError(f"column {str(col)!r} has dtype {dtype}; a PyTorch model takes numbers only")
        return X.to_numpy(dtype=np.float64, na_value=np.nan)
    a = np.asarray(X)
    if a.dtype.kind in "biuf":
        return a.astype(np.float64)
    frame = pd.DataFrame(a)
    for j in frame.columns:
        try:
            frame[j] = pd.to_numeric(frame[j])
        except (TypeError, ValueError):
            raise TypeError(f"column {j} holds non-numeric values (e.g. {frame[j].iloc[0]!r}); a PyTorch model "
                            "takes numbers only") from None
    return frame.to_numpy(dtype=np.float64, na_value=np.nan)


def infer_n_features(module: nn.Module) -> int | None:
    """The input width of ``module``: ``in_features`` of its first ``Linear``, if a forward pass confirms it.

    Parameters
    ----------
    module : nn.Module
        Plain or TorchScript.

    Returns
    -------
    int or None
        ``None`` when there is no ``Linear`` layer or a zero input of that width fails.
    """
    for m in module.modules():
        n = getattr(m, "in_features", None)
        if isinstance(n, int) and n > 0:
            try:
                with torch.no_grad():
                    module(torch.zeros(2, n, dtype=_param_dtype(module)))
            except Exception:
                return None
            return n
    return None


def _param_dtype(module: nn.Module) -> torch.dtype:
    for p in module.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.float32


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # stable for any z


class TorchTabularModel:
    """A fitted PyTorch tabular model behind scikit-learn's ``predict`` / ``predict_proba``.

    Parameters
    ----------
    module : nn.Module
        Maps a tensor of shape (n_rows, n_features), in the dtype of its
        floating parameters (float32 if none), to (n_rows, n_outputs) or (n_rows,).
    task : {"classification", "regression"}
    classes : sequence, optional
        Class labels in output order; required for classification, at least two.
    output : {"logits", "probabilities"}, default="logits"
        What a classifier's module returns. Logits: softmax over >= 2 columns,
        sigmoid of a single column (the logit of ``classes[1]``). Probabilities:
        rows summing to 1, or one column P(``classes[1]``).
    feature_names : sequence of str, optional
        Column names in the module's input order; sets ``feature_names_in_``
        (DataFrames are then reordered by name).
    n_features : int, optional
        Input width; default :func:`infer_n_features`. Sets ``n_features_in_``.
    batch_size : int, default=4096
        Rows per forward pass.
    source : str, default=""
        Where the module came from, for display (e.g. "TorchScript m.pt").

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Classifiers only (regressors have no ``classes_`` and no ``predict_proba``).
    n_features_in_ : int
        Only when known.
    feature_names_in_ : ndarray of str
        Only when ``feature_names`` is given.

    Raises
    ------
    TypeError
        If ``module`` is not an ``nn.Module``.
    ValueError
        For an unknown ``task`` or ``output``, a classifier without two classes,
        or ``feature_names`` whose length differs from ``n_features``.
    """

    def __init__(self, module: nn.Module, *, task: str, classes=None, output: str = "logits", feature_names=None,
                 n_features: int | None = None, batch_size: int = 4096, source: str = "") -> None:
        if not isinstance(module, nn.Module):
            raise TypeError(f"expected a torch.nn.Module, got {type(module).__name__}")
        if task not in ("classification", "regression"):
            raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
        if output not in OUTPUTS:
            raise ValueError(f"output must be 'logits' or 'probabilities', got {output!r}")
        module.eval()  # dropout off, batch-norm statistics frozen; never switched back
        self.module, self.task, self.output, self.batch_size = module, task, output, int(batch_size)
        self.source = source or type(module).__name__
        self._dtype = _param_dtype(module)
        if task == "classification":
            if classes is None or len(classes) < 2:
                raise ValueError(f"a classifier needs at least two class labels, got {classes!r}")
            self.classes_ = np.asarray(list(classes))
        elif classes is not None:
            raise ValueError("a regressor takes no classes")
        if feature_names is not None:
            self.feature_names_in_ = np.asarray([str(f) for f in feature_names], dtype=object)
            if n_features is not None and n_features != len(feature_names):
                raise ValueError(f"{len(feature_names)} feature names for {n_features} features")
            n_features = len(feature_names)
        n_features = n_features if n_features is not None else infer_n_features(module)
        if n_features is not None:
            self.n_features_in_ = int(n_features)

    @property
    def predict_proba(self):
        """Class probabilities (classifiers only: a regressor has no ``predict_proba``, as in scikit-learn)."""
        if self.task != "classification":
            raise AttributeError("a regression TorchTabularModel has no predict_proba")
        return self._predict_proba

    def raw_outputs(self, X) -> np.ndarray:
        """The module's own outputs, unchanged.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)
            Numbers only (NaN allowed: what the module does with it is its own business).

        Returns
        -------
        ndarray of shape (n_rows, n_outputs), float64
            One column for a module that returns (n_rows,).

        Raises
        ------
        TypeError
            For a non-numeric column (named).
        ValueError
            If the module fails on the input (its last error line, with the input
            shape) or returns a tensor that is not (n_rows,) or (n_rows, k).
        """
        A = _float_matrix(X, getattr(self, "feature_names_in_", None))
        n_expected = getattr(self, "n_features_in_", None)
        if A.ndim != 2:
            raise ValueError(f"expected rows of shape (n_rows, n_features), got an input of shape {A.shape}")
        if n_expected is not None and A.shape[1] != n_expected:
            raise ValueError(f"the model expects {n_expected} features, got an input of shape {A.shape}")
        if self.module.training:
            self.module.eval()
        chunks = []
        with torch.no_grad():
            for start in range(0, max(len(A), 1), self.batch_size):
                x = torch.as_tensor(A[start:start + self.batch_size], dtype=self._dtype)
                try:
                    y = self.module(x)
                except Exception as exc:
                    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
                    raise ValueError(f"the module fails on an input of shape {tuple(x.shape)}: "
                                     f"{lines[-1] if lines else type(exc).__name__}") from None
                if not isinstance(y, torch.Tensor):
                    raise ValueError(f"the module returns {type(y).__name__}, expected a tensor")
                if y.ndim == 1:
                    y = y[:, None]
                if y.ndim != 2 or y.shape[0] != x.shape[0]:
                    raise ValueError(f"the module maps {tuple(x.shape)} to {tuple(y.shape)}; expected "
                                     f"({x.shape[0]}, n_outputs) or ({x.shape[0]},)")
                chunks.append(y.detach().to(torch.float64).cpu().numpy())
        return np.concatenate(chunks) if chunks else np.empty((0, 1))

    def _predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n_rows, n_classes), columns in ``classes_`` order.

        Raises
        ------
        ValueError
            If the module's output width does not fit ``classes_`` (k columns for
            k classes, or one column for two), or ``output="probabilities"`` and
            the outputs are not probabilities.
        """
        z, k = self.raw_outputs(X), len(self.classes_)
        if z.shape[1] == 1 and k == 2:
            p1 = _sigmoid(z[:, 0]) if self.output == "logits" else z[:, 0]
            p = np.column_stack([1.0 - p1, p1])
        elif z.shape[1] == k:
            p = _softmax(z) if self.output == "logits" else z
        else:
            raise ValueError(f"the module gives {z.shape[1]} outputs per row for {k} classes "
                             f"({', '.join(map(str, self.classes_))}); expected {k}" + (" or 1" if k == 2 else ""))
        if self.output == "probabilities":
            ok = np.isnan(p) | ((p >= -1e-6) & (p <= 1 + 1e-6))
            sums = np.nansum(p, axis=1)
            if not ok.all() or (len(p) and np.abs(sums - 1).max() > 1e-4):
                raise ValueError(f"output='probabilities' but the module's outputs are not probabilities (min "
                                 f"{np.nanmin(p):.3g}, max {np.nanmax(p):.3g}, row sums {sums.min():.3g} to "
                                 f"{sums.max():.3g}); are they logits?")
        return p

    def predict(self, X) -> np.ndarray:
        """Class labels (the most probable class) or regression outputs, shape (n_rows,).

        Raises
        ------
        ValueError
            As :meth:`raw_outputs`; a regressor's module must give one output per row.
        """
        if self.task == "classification":
            return self.classes_[np.argmax(self._predict_proba(X), axis=1)]
        z = self.raw_outputs(X)
        if z.shape[1] != 1:
            raise ValueError(f"the module gives {z.shape[1]} outputs per row, but no classes were given "
                             "(a regressor has one output); name the classes to explain a classifier")
        return z[:, 0]

    def scalar_module(self, index: int) -> nn.Module:
        """A differentiable module giving output ``index`` in the units of ``predict_proba`` / ``predict``.

        For gradient methods (Integrated Gradients): the probability of class
        ``classes_[index]`` for classifiers, the prediction for regressors.

        Returns
        -------
        nn.Module
            Maps (batch, n_features) to (batch,); wraps ``module`` without copying it.
        """
        return _Scalar(self.module, self.task, self.output, int(index), len(getattr(self, "classes_", ())))

    def parameter_fingerprint(self) -> str:
        """SHA-256 over the names, dtypes, shapes and bytes of every parameter and buffer."""
        h = hashlib.sha256()
        for name, t in self.module.state_dict().items():
            h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
            h.update(t.detach().cpu().contiguous().numpy().tobytes() if t.dtype != torch.bfloat16
                     else t.detach().cpu().float().numpy().tobytes())
        return h.hexdigest()

    def __repr__(self) -> str:
        what = f"{len(self.classes_)} classes, {self.output}" if self.task == "classification" else "regression"
        return f"TorchTabularModel({self.source}, {what})"


class _Scalar(nn.Module):
    """Output ``index`` of a tabular module, as ``TorchTabularModel`` reports it, shape (batch,)."""

    def __init__(self, module: nn.Module, task: str, output: str, index: int, n_classes: int) -> None:
        super().__init__()
        self.module, self.task, self.output, self.index, self.n_classes = module, task, output, index, n_classes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.module(x.to(_param_dtype(self.module)))
        z = z[:, None] if z.ndim == 1 else z
        if self.task == "regression":
            return z[:, 0]
        if z.shape[1] == 1:  # one column: the logit / probability of class 1
            p1 = torch.sigmoid(z[:, 0]) if self.output == "logits" else z[:, 0]
            return p1 if self.index == 1 else 1 - p1
        return (torch.softmax(z, dim=1) if self.output == "logits" else z)[:, self.index]
