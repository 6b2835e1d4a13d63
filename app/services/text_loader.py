"""Which text classifier the Text page explains, and loading it (issue 7: bring your own model).

Without ``CANDOR_TEXT_MODEL`` the page explains the bundled all-MiniLM-L6-v2 encoder with a
zero-shot sentiment head (:func:`explainers.text.load_minilm_sentiment`). With
``CANDOR_TEXT_MODEL=/path/to/folder`` it explains that folder's Hugging Face
``*ForSequenceClassification`` model (:func:`explainers.text.load_text_classifier`, local files only,
nothing downloaded): its layers, heads and labels replace MiniLM's everywhere on the page. Problems
with the folder become one :class:`~workspace.errors.CandorError` naming the folder and what is wrong.

torch and transformers are imported only when a model is loaded (:func:`_load_model`), which happens when
the Text page first asks for it (never in the warm-up of a tabular server).
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from workspace import settings
from workspace.errors import CandorError, first_line
from ._core import lazy

MODEL_ENV = "CANDOR_TEXT_MODEL"
"""Environment variable naming a local Hugging Face text classifier folder (``python -m app --text-model``)."""
DEFAULT_TAG = "minilm-zero-shot"
"""Cache tag of the bundled model (part of every cached result's key)."""
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".json", ".txt", ".model")


def configured_folder() -> Path | None:
    """The folder of ``Settings.text_model`` (``--text-model``, :data:`MODEL_ENV`), or None for the bundled model.

    Returns
    -------
    pathlib.Path or None
        Expanded (``~``) but not checked; :func:`load` says what is wrong with it.
    """
    return settings.current().text_model


def without_folder_path(text: str) -> str:
    """``text`` with the configured folder's path on the server replaced by the folder's name: pages and their
    errors name the model, never where it lies (SECURITY.md, issue 27)."""
    folder = configured_folder()
    if folder is None:
        return text
    for given in sorted({str(folder.resolve()), str(folder)}, key=len, reverse=True):
        text = text.replace(given, folder.name)
    return text


@dataclass(frozen=True)
class ModelInfo:
    """What the Text page says about the model it explains.

    Parameters
    ----------
    name : str
        ``TextClassifier.name``.
    n_layers, n_heads : int
    labels : tuple of str
        Class names in logit order.
    max_length : int
        Tokens, special tokens included.
    head : str
        How the logits are made (for the prediction chart).
    folder : str or None
        The user's folder; None for the bundled model.
    tag : str
        Identifies the weights in cache keys (:data:`DEFAULT_TAG`, or a hash of the folder's files).
    load_seconds : float
    """

    name: str
    n_layers: int
    n_heads: int
    labels: tuple
    max_length: int
    head: str
    folder: str | None
    tag: str
    load_seconds: float

    @property
    def description(self) -> str:
        """One line: name, layers x heads, labels, maximum length."""
        return (f"{self.name}: {self.n_layers} layers x {self.n_heads} heads, labels "
                f"{', '.join(self.labels)}, max length {self.max_length} tokens")


@dataclass(frozen=True)
class LoadedModel:
    """A loaded :class:`explainers.text.TextClassifier` and its :class:`ModelInfo`."""

    model: object
    info: ModelInfo


def folder_tag(folder: Path) -> str:
    """A short hash of the folder's path, ``config.json`` and the size and time of its model files.

    Parameters
    ----------
    folder : pathlib.Path

    Returns
    -------
    str
        ``"hf-"`` and 16 hex characters; changes when the weights or the config change.
    """
    h = hashlib.sha256(str(folder.resolve()).encode())
    h.update((folder / "config.json").read_bytes())
    for p in sorted(folder.iterdir()):
        if p.is_file() and p.suffix in _WEIGHT_SUFFIXES:
            st = p.stat()
            h.update(f"{p.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return "hf-" + h.hexdigest()[:16]


def _check_folder(folder: Path) -> None:
    if not folder.exists():
        raise CandorError(f"text model {folder}: no such folder")
    if not folder.is_dir():
        raise CandorError(f"text model {folder}: not a folder (expected a Hugging Face model folder with "
                          "config.json, weights and tokenizer files)")
    if not (folder / "config.json").is_file():
        raise CandorError(f"text model {folder}: no config.json in the folder (expected a Hugging Face "
                          "*ForSequenceClassification folder written by save_pretrained)")


def _check_architecture(folder: Path) -> None:
    """A folder saved from a bare encoder (``architectures: ["BertModel"]``) would get a random head."""
    try:
        archs = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("architectures") or []
    except (OSError, ValueError, AttributeError):
        return  # load_text_classifier says what is wrong with the file
    if archs and not any(str(a).endswith("ForSequenceClassification") for a in archs):
        raise CandorError(f"text model {folder}: config.json names {', '.join(map(str, archs))}, not a "
                          "*ForSequenceClassification model; its classification head would be random. Save a "
                          "fine-tuned classifier (AutoModelForSequenceClassification ... save_pretrained)")


def load(folder: Path | None) -> LoadedModel:
    """Load the bundled model (``folder=None``) or the user's folder.

    Parameters
    ----------
    folder : pathlib.Path or None

    Returns
    -------
    LoadedModel

    Raises
    ------
    CandorError
        Naming the folder and what is wrong: missing, no ``config.json``, a bare encoder without a
        classification head, unsupported architecture (no BERT/DistilBERT-style attention output
        projection), unreadable weights or tokenizer.
    """
    from transformers.utils import logging as hf_logging

    from explainers.text import load_minilm_sentiment, load_text_classifier

    hf_logging.disable_progress_bar()  # a "Loading weights" bar is noise in the server log and in check
    t0 = time.perf_counter()
    if folder is None:
        model = load_minilm_sentiment()
        return LoadedModel(model, _info(model, "zero-shot head: 20 x cosine to label prototypes", None,
                                        DEFAULT_TAG, t0))
    _check_folder(folder)
    _check_architecture(folder)
    try:
        model = load_text_classifier(folder)
    except TypeError as err:
        raise CandorError(f"text model {folder}: unsupported architecture ({first_line(err)}); the Text page "
                          "needs a BERT-family encoder (BERT, RoBERTa, ELECTRA, DistilBERT)") from None
    except Exception as err:  # noqa: BLE001 - transformers/safetensors raise many types; all mean "cannot load"
        raise CandorError(f"text model {folder}: not a loadable Hugging Face text classifier "
                          f"({first_line(err)})") from None
    if not model.labels:
        raise CandorError(f"text model {folder}: the model has no labels (config.id2label is empty)")
    return LoadedModel(model, _info(model, f"classification head of {folder.name}", str(folder),
                                    folder_tag(folder), t0))


def _info(model, head: str, folder: str | None, tag: str, t0: float) -> ModelInfo:
    return ModelInfo(name=model.name, n_layers=int(model.n_layers), n_heads=int(model.n_heads),
                     labels=tuple(model.labels), max_length=int(model.max_length), head=head, folder=folder,
                     tag=tag, load_seconds=round(time.perf_counter() - t0, 2))


@lru_cache(maxsize=8)
def _folder_labels(folder: str, tag: str) -> tuple:
    path = Path(folder)
    try:
        cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CandorError(f"text model {folder}: config.json is not readable JSON ({first_line(err)})") from None
    id2label = cfg.get("id2label") or {}
    n = int(cfg.get("num_labels") or len(id2label) or 2)
    # transformers' default when id2label is absent: LABEL_0, LABEL_1, ...
    return tuple(str(id2label.get(str(i), id2label.get(i, f"LABEL_{i}"))) for i in range(n))


def model_labels() -> tuple:
    """The class names of the configured model, without loading it (read from ``config.json``).

    Returns
    -------
    tuple of str
        ``("negative", "positive")`` for the bundled model (``explainers.text.DEFAULT_LABEL_DESCRIPTIONS``).

    Raises
    ------
    CandorError
        If the folder is missing or has no readable ``config.json``.
    """
    folder = configured_folder()
    if folder is None:
        from explainers.text import DEFAULT_LABEL_DESCRIPTIONS

        return tuple(DEFAULT_LABEL_DESCRIPTIONS)
    try:
        _check_folder(folder)
        return _folder_labels(str(folder), folder_tag(folder))
    except CandorError as err:
        raise CandorError(without_folder_path(str(err))) from None


_loaded: LoadedModel | None = None
_import_guard = threading.Lock()
"""Held while :func:`_load_model` imports torch/transformers and loads the model. A fork (a background job
starting) waits for it, so a job never inherits a module import lock held by a parent thread
(see ``_fresh_locks_after_fork`` in ``_core``); at most 60 s, then the fork goes ahead."""
_guard_taken = threading.local()


def _before_fork() -> None:
    _guard_taken.value = _import_guard.acquire(timeout=60)


def _after_fork_in_parent() -> None:
    if getattr(_guard_taken, "value", False):
        _guard_taken.value = False
        _import_guard.release()


def _after_fork_in_child() -> None:
    global _import_guard
    _guard_taken.value = False
    _import_guard = threading.Lock()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)


def import_guard() -> threading.Lock:
    """The lock held while torch is imported or a torch model loaded at run time (a fork waits for it).

    Other services that import torch in a request thread (the Attention page's transformer) take it too.
    """
    return _import_guard


def _load_model() -> LoadedModel:
    """Load the configured model (raises :class:`CandorError`); remembered for background jobs."""
    global _loaded
    with _import_guard:
        import torch

        import explainers.text  # noqa: F401  (imported under the guard, see above)

        torch.set_num_threads(1)
        loaded = load(configured_folder())
    _loaded = loaded
    return loaded


def _load_or_error():
    """The lazy value: the loaded model, or the :class:`CandorError` saying why it could not be loaded
    (kept, so that a broken folder is not re-read by every callback)."""
    try:
        return _load_model()
    except CandorError as err:
        return err


# not warmed: torch, transformers and the model load when the Text page first asks for them, never in
# a server whose pages do not need them (issue 14; a fork meanwhile waits on _import_guard)
_state = lazy("text_model", _load_or_error, needs_workspace=False)  # the check of a folder installs no table


def current_model() -> LoadedModel:
    """The loaded model and its info (raises the load's :class:`CandorError`)."""
    value = _state()
    if isinstance(value, CandorError):
        raise CandorError(without_folder_path(str(value)))
    return value


def text_model():
    """The text classifier the page explains.

    Returns
    -------
    explainers.text.TextClassifier

    Raises
    ------
    CandorError
        If the folder named by ``CANDOR_TEXT_MODEL`` cannot be loaded (the message names it).
    """
    return current_model().model


def model_info() -> ModelInfo:
    """Name, layers x heads, labels and maximum length of the model the page explains.

    Raises
    ------
    CandorError
        As :func:`text_model`.
    """
    return current_model().info


def loaded_info() -> ModelInfo | None:
    """The configured model's info if this process has already loaded it, else None; never loads.

    The Text page's layout asks (issue 14): with the model loaded, the layer and head pickers are filled in
    the page itself, and opening it costs one request instead of two.
    """
    folder = configured_folder()
    if _loaded is not None and _loaded.info.folder == (str(folder) if folder is not None else None):
        return _loaded.info
    return None


def job_loaded() -> LoadedModel:
    """The model inside a background job (a forked process).

    Returns the parent's copy when it had finished loading the configured model before the fork,
    else loads one; it never waits on a lock that a parent thread may have held at fork time.

    Returns
    -------
    LoadedModel

    Raises
    ------
    CandorError
        If the configured folder cannot be loaded.
    """
    folder = configured_folder()
    if _loaded is not None and _loaded.info.folder == (str(folder) if folder is not None else None):
        return _loaded
    return _load_model()

