"""Text page: the single-layer multi-head attention classifier of Lopardo et al. (2024), issue 5.

Lopardo, Precioso, Garreau, "Attention Meets Post-hoc Interpretability: A Mathematical
Perspective", ICML 2024, arXiv 2402.03485 (docs/methods.md, "Lopardo et al. 2024"). The model is trained on CPU on the
labelled texts of the current dataset (the built-in examples or an uploaded CSV with a label
column) in a background job (:func:`train`), and saved per dataset under ``TEXT_DIR/lopardo`` as
safetensors (the weights) with the vocabulary, sizes and training figures as JSON in its header, never a
pickle (``torch.save`` is one). :func:`trained_model` reads it back (memoized per process). What the
card shows for one text is :mod:`app.services.text_lopardo_view`.

torch and :mod:`explainers.text` are imported at module top: the training job runs in
a forked process, where a first import inside the job could deadlock on an import lock.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from explainers.text import LopardoClassifier, SimpleVocab, train_lopardo

from workspace.errors import CandorError
from . import text as _text
from .text import CACHE_VERSION
from .text_data import BUILTIN, dataset
from .text_loader import model_labels

CONFIG = dict(n_heads=2, d_e=32, d_att=16, d_out=16, max_len=64)
"""Model size (the defaults of :func:`explainers.text.train_lopardo`)."""
EPOCHS = 30
LR = 1e-2
BATCH_SIZE = 32
SEED = 0
MAX_TRAIN_TEXTS = 5000
HOLDOUT_MIN_TEXTS = 20
"""With at least this many labelled texts, a seeded 20% is held out and accuracy is measured on it;
with fewer (the 12 built-in examples), only training accuracy is reported, and said so."""
HOLDOUT_FRACTION = 0.2

_models: dict = {}
_lock = threading.Lock()


def _fresh_lock_in_child() -> None:
    """A forked job never inherits ``_lock`` held by a request thread of the parent."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_lock_in_child)


def _folder():
    folder = _text.text_dir() / "lopardo"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def model_key(spec: dict | None) -> str:
    """Cache key of the model trained on a dataset (its id and chosen columns, the training settings).

    Parameters
    ----------
    spec : dict or None
        Dataset description (:func:`app.services.text_data.dataset`); None = built-in examples.

    Returns
    -------
    str
        20 hex characters.
    """
    spec = spec or BUILTIN
    raw = (f"{CACHE_VERSION}|lopardo|{spec['id']}:{spec.get('text_column')}:{spec.get('label_column')}|"
           f"labels={'/'.join(model_labels())}|"
           f"{sorted(CONFIG.items())}|epochs={EPOCHS}|lr={LR}|bs={BATCH_SIZE}|seed={SEED}|max={MAX_TRAIN_TEXTS}|"
           f"holdout={HOLDOUT_MIN_TEXTS}:{HOLDOUT_FRACTION}")
    return hashlib.sha256(raw.encode()).hexdigest()[:20]


@dataclass(frozen=True)
class LopardoModel:
    """A trained Lopardo et al. (2024) classifier with what it was trained on.

    Parameters
    ----------
    model : explainers.text.LopardoClassifier
        In eval mode.
    vocab : explainers.text.SimpleVocab
    meta : dict
        ``dataset`` (name), ``n_train``, ``n_test``, ``train_accuracy``, ``test_accuracy`` (None
        when nothing was held out), ``epochs``, ``seconds``, ``key``, ``labels`` (class names, in
        logit order: the text model's labels, which the dataset's labels were read as).
    """

    model: object
    vocab: object
    meta: dict

    @property
    def labels(self) -> list:
        """Class names in logit order (``class 0``, ``class 1``... for a model saved without them)."""
        n = int(self.model.W_l.shape[1])
        names = list(self.meta.get("labels") or [])
        return names + [f"class {i}" for i in range(len(names), n)]

    @property
    def accuracy_text(self) -> str:
        """Accuracy in words, saying whether it is held-out or training accuracy."""
        m = self.meta
        if m["test_accuracy"] is not None:
            return (f"held-out accuracy {m['test_accuracy']:.3f} on {m['n_test']} texts not used for training "
                    f"(training accuracy {m['train_accuracy']:.3f} on {m['n_train']})")
        return (f"training accuracy {m['train_accuracy']:.3f} on the {m['n_train']} texts it was trained on "
                f"(too few labelled texts to hold any out: this says nothing about generalisation)")


def _vocab_from_itos(itos: list) -> SimpleVocab:
    vocab = SimpleVocab([])
    vocab.itos = list(itos)
    vocab.stoi = {w: i for i, w in enumerate(vocab.itos)}
    return vocab


def _save(trained: LopardoModel, path) -> None:
    rest = {"itos": list(trained.vocab.itos), "n_classes": int(trained.model.W_l.shape[1]), "config": dict(CONFIG),
            "meta": dict(trained.meta)}
    save_file({k: v.contiguous() for k, v in trained.model.state_dict().items()}, str(path),
              metadata={"candor": json.dumps(rest)})


def _load(path) -> LopardoModel:
    with safe_open(str(path), framework="pt") as f:
        blob = {**json.loads(f.metadata()["candor"]), "state": {k: f.get_tensor(k) for k in f.keys()}}
    cfg = blob["config"]
    model = LopardoClassifier(len(blob["itos"]), blob["n_classes"], cfg["d_e"], cfg["d_att"], cfg["d_out"],
                              cfg["n_heads"], cfg["max_len"])
    model.load_state_dict(blob["state"])
    model.eval()
    return LopardoModel(model, _vocab_from_itos(blob["itos"]), blob["meta"])


def trained_model(key: str | None) -> LopardoModel | None:
    """The model saved under ``key`` (memoized per process), or None if it has not been trained.

    Parameters
    ----------
    key : str or None
        From :func:`model_key` (the training job returns it).

    Returns
    -------
    LopardoModel or None
    """
    if not key:
        return None
    with _lock:
        if key in _models:
            return _models[key]
        path = _folder() / f"{key}.safetensors"
        if not path.is_file():
            return None
        _models[key] = _load(path)
        return _models[key]


def _accuracy(model, ids, y) -> float:
    with torch.no_grad():
        return float((model(ids).argmax(-1) == y).float().mean())


def train(spec: dict | None, progress: Callable[[int, int], None] | None = None) -> tuple[LopardoModel, bool]:
    """Train (or read from disk) the Lopardo et al. (2024) classifier on the dataset's labelled texts.

    The training loop is :func:`explainers.text.train_lopardo`'s (Adam, cross-entropy, seeded
    initialisation and shuffling, CPU), run here batch by batch so the job can report progress.
    Runs inside a background job; cancelling the job kills it before anything is saved.

    Parameters
    ----------
    spec : dict or None
        Dataset description (:func:`app.services.text_data.dataset`); None = built-in examples.
    progress : callable(done, total), optional
        Called after every batch.

    Returns
    -------
    (LopardoModel, bool)
        The model and whether it came from the on-disk cache.

    Raises
    ------
    CandorError
        If the dataset has no usable labels (the text model's labels, or 0..n-1) or a single class.

    References
    ----------
    Lopardo, Precioso, Garreau (2024), arXiv 2402.03485, docs/methods.md, "Lopardo et al. 2024".
    """
    spec = spec or BUILTIN
    key = model_key(spec)
    hit = trained_model(key)
    if hit is not None:
        return hit, True
    ds, names = dataset(spec), model_labels()
    if ds.labels is None:
        numbers = "/".join(str(i) for i in range(len(names)))
        why = f" ({ds.note})" if spec["id"] == "builtin" else ""
        raise CandorError(f"{ds.name}: the attention classifier needs labels{why}; choose a label column whose "
                          f"values are {'/'.join(names)} or {numbers}")
    texts, labels = list(ds.texts[:MAX_TRAIN_TEXTS]), np.asarray(ds.labels[:MAX_TRAIN_TEXTS])
    if len(set(labels.tolist())) < 2:
        raise CandorError(f"{ds.name}: every label is '{names[int(labels[0])]}'; training needs at least two "
                          "classes")
    gen = torch.Generator().manual_seed(SEED)
    order = torch.randperm(len(texts), generator=gen).numpy()
    n_test = int(round(HOLDOUT_FRACTION * len(texts))) if len(texts) >= HOLDOUT_MIN_TEXTS else 0
    test_idx, train_idx = order[:n_test], order[n_test:]
    train_texts = [texts[i] for i in train_idx]
    t0 = time.perf_counter()
    model, vocab, train_acc = train_lopardo(
        train_texts, labels[train_idx], n_heads=CONFIG["n_heads"], d_e=CONFIG["d_e"], d_att=CONFIG["d_att"],
        d_out=CONFIG["d_out"], epochs=EPOCHS, lr=LR, batch_size=BATCH_SIZE, max_len=CONFIG["max_len"], seed=SEED,
        progress=progress)
    test_acc = None
    if n_test:
        test_acc = _accuracy(model, vocab.encode([texts[i] for i in test_idx], CONFIG["max_len"]),
                             torch.as_tensor(labels[test_idx], dtype=torch.long))
    meta = dict(dataset=ds.name, n_train=len(train_idx), n_test=n_test, train_accuracy=train_acc,
                test_accuracy=test_acc, epochs=EPOCHS, seconds=round(time.perf_counter() - t0, 2), key=key,
                n_available=len(ds.texts), labels=list(names[:int(labels.max()) + 1]))
    trained = LopardoModel(model, vocab, meta)
    path = _folder() / f"{key}.safetensors"
    tmp = path.with_suffix(f".{id(trained)}.tmp")
    _save(trained, tmp)
    tmp.replace(path)
    with _lock:
        _models[key] = trained
    return trained, False
