"""Text page datasets: built-in examples, uploaded CSV and CoNLL-U files, the head-analysis job.

Uploads are written once to ``TEXT_DIR/uploads`` under a random id recorded in that folder's index
(:mod:`workspace.uploads`: size limit, quota, retention); the browser keeps only the id, the file name and
column names, never the file. An id from the browser is looked up in the index (a CSV id only as a
CSV of texts, a CoNLL-U id only as CoNLL-U), never joined into a path.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

from store.codec import head_analysis_from_dict
from workspace import uploads as _store
from workspace.errors import CandorError
from . import text as _text
from .text import CACHE_VERSION, EXAMPLES, job_loaded, result_cache
from .text_loader import model_labels

CSV_LIMIT_BYTES = 2_000_000
CONLLU_LIMIT_BYTES = 5_000_000
MAX_LISTED = 500
MAX_ANALYSIS_TEXTS = 1000
BUILTIN = {"id": "builtin", "name": "built-in examples", "text_column": "text", "label_column": "label"}
_TEXT_NAMES = ("text", "sentence", "review", "content", "body", "comment", "document")
_LABEL_NAMES = ("label", "labels", "sentiment", "target", "class", "y")


def _uploads() -> Path:
    folder = _text.text_dir() / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


_SUFFIXES = {"text-csv": (".csv", ".txt"), "conllu": (".conllu", ".conll", ".txt")}


def _save(contents: str, filename: str, kind: str, limit: int) -> _store.Record:
    suffix = "." + str(filename).rsplit(".", 1)[-1].lower() if "." in str(filename) else ""
    if suffix not in _SUFFIXES[kind]:  # said, not dropped: the upload box accepts any file so that it can say so
        want = " or ".join(_SUFFIXES[kind])
        raise CandorError(f"{filename}: a {suffix or 'file without an extension'} is not "
                          f"{'a CSV of texts' if kind == 'text-csv' else 'a CoNLL-U file'}; upload a {want} file")
    if not isinstance(contents, str) or "," not in contents:
        raise CandorError(f"{filename}: the upload could not be decoded (not a data URL)")
    data = _store.decode(contents, filename, max(limit, _store.max_upload_bytes()))
    if len(data) > limit:
        raise CandorError(f"{filename} is {len(data) / 1e6:.1f} MB; the limit is {limit / 1e6:.0f} MB")
    if not data.strip():
        raise CandorError(f"{filename} is empty")
    if b"\x00" in data[:65536]:
        raise CandorError(f"{filename} is not a text file (it holds binary data)")
    return _store.save(filename, data, kind=kind, suffixes=(), limit=limit, folder=_uploads())


def _lookup(upload_id, kind: str) -> _store.Record:
    """The stored upload behind an id from the browser (through the index; never joined into a path)."""
    return _store.lookup(upload_id, (kind,), _uploads())


def _read_csv(dataset_id, name: str):
    import pandas as pd

    try:
        path = _lookup(dataset_id, "text-csv").path
    except CandorError:
        raise CandorError(f"{name or 'that file'} is no longer on the server; upload it again") from None
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, encoding_errors="replace")
    except (ValueError, pd.errors.ParserError) as err:
        raise CandorError(f"{name}: not a readable CSV ({str(err).splitlines()[0]})") from err


def _guess(columns: list[str], names: tuple[str, ...]) -> str | None:
    lower = {c.lower().strip(): c for c in columns}
    return next((lower[n] for n in names if n in lower), None)


def save_csv_upload(contents: str, filename: str) -> dict:
    """Store an uploaded CSV of texts (optional labels) and describe it.

    Parameters
    ----------
    contents : str
        ``dcc.Upload`` data URL (base64).
    filename : str

    Returns
    -------
    dict
        ``id``, ``name``, ``columns``, ``text_column`` (a column named like ``text``, else the
        column with the longest values), ``label_column`` (``label``-like or None), ``n_rows``.

    Raises
    ------
    CandorError
        Naming the file when it is too large, empty, not a CSV or has no rows.
    """
    rec = _save(contents, filename, "text-csv", CSV_LIMIT_BYTES)
    digest = rec.id
    try:
        frame = _read_csv(digest, filename)
    except CandorError:
        _store.remove(digest, _uploads())
        raise
    if frame.empty or not len(frame.columns):
        _store.remove(digest, _uploads())
        raise CandorError(f"{filename}: no rows under the header")
    columns = [str(c) for c in frame.columns]
    text_col = _guess(columns, _TEXT_NAMES) or max(columns, key=lambda c: frame[c].str.len().mean())
    label_col = _guess([c for c in columns if c != text_col], _LABEL_NAMES)
    return dict(id=digest, name=filename, columns=columns, text_column=text_col, label_column=label_col,
                n_rows=int(len(frame)))


def save_conllu_upload(contents: str, filename: str) -> dict:
    """Store an uploaded CoNLL-U file (gold dependency trees for syntactic roles).

    Returns
    -------
    dict
        ``id``, ``name``, ``n_sentences`` (those the head analysis reads: at most :data:`MAX_ANALYSIS_TEXTS`)
        and ``n_total`` (every sentence of the file), so the page can say "first 1,000 of 2,001 sentences".

    Raises
    ------
    CandorError
        Naming the file and line when it is not valid CoNLL-U.
    """
    rec = _save(contents, filename, "conllu", CONLLU_LIMIT_BYTES)
    try:
        trees = read_trees(rec.id, filename)
    except CandorError:
        _store.remove(rec.id, _uploads())
        raise
    from explainers.text import read_conllu

    n_total = len(trees) if len(trees) < MAX_ANALYSIS_TEXTS else len(read_conllu(_lookup(rec.id, "conllu").path))
    return dict(id=rec.id, name=filename, n_sentences=len(trees), n_total=n_total)


def read_trees(digest: str, name: str) -> list:
    """The sentences of a stored CoNLL-U upload.

    Parameters
    ----------
    digest : str
        Upload id from :func:`save_conllu_upload`.
    name : str
        File name, for messages.

    Returns
    -------
    list of explainers.text.ConlluSentence
        At most :data:`MAX_ANALYSIS_TEXTS`, in file order.

    Raises
    ------
    CandorError
        Naming the file and line when it is not valid CoNLL-U or is gone.
    """
    from explainers.text import read_conllu

    try:
        path = _lookup(digest, "conllu").path
    except CandorError:
        raise CandorError(f"{name or 'that file'} is no longer on the server; upload it again") from None
    try:
        trees = read_conllu(path, max_sentences=MAX_ANALYSIS_TEXTS)
    except (ValueError, UnicodeDecodeError) as err:
        raise CandorError(f"{name}: {str(err).replace(f'{path}:', 'line ')}") from err
    if not trees:
        raise CandorError(f"{name}: no sentence found (CoNLL-U needs 10 tab-separated columns per word)")
    return trees


@dataclass(frozen=True)
class TextDataset:
    """Texts to pick from and to run the head analysis on.

    Parameters
    ----------
    name : str
    texts : tuple of str
    labels : tuple of int or None
        Indices into the model's labels (:func:`app.services.text_loader.model_labels`); None when
        there is no usable label column.
    note : str
        Which columns were used and why labels were (not) used.
    """

    name: str
    texts: tuple
    labels: tuple | None
    note: str


def _labels(values: list[str], column: str, name: str, model_labels: tuple) -> tuple[tuple | None, str]:
    """Label values as indices into ``model_labels`` (names, case-insensitive, or 0..n-1)."""
    index = {lab.strip().lower(): i for i, lab in enumerate(model_labels)}
    vals = [v.strip().lower() for v in values]
    if set(vals) <= set(index):
        return tuple(index[v] for v in vals), f"labels from column '{column}'"
    numbers = [str(i) for i in range(len(model_labels))]
    if set(vals) <= set(numbers):
        legend = ", ".join(f"{i} = {lab}" for i, lab in enumerate(model_labels))
        return tuple(int(v) for v in vals), f"labels from column '{column}' ({legend})"
    seen = ", ".join(repr(v) for v in sorted(set(vals))[:5])
    return None, (f"{name}: column '{column}' has values ({seen}) other than {'/'.join(model_labels)} or "
                  f"{'/'.join(numbers)}, so accuracy is not computed")


def _builtin(model_labels: tuple) -> TextDataset:
    texts = tuple(t for t, _ in EXAMPLES)
    note = f"{len(EXAMPLES)} sentences written by the Candor authors, labels theirs"
    labels, _ = _labels([lab for _, lab in EXAMPLES], "label", "built-in examples", model_labels)
    if labels is None:
        note += (f" (negative/positive, which are not this model's labels {', '.join(model_labels)}: accuracy "
                 "is not computed; upload a CSV labelled with the model's labels)")
    return TextDataset("built-in examples", texts, labels, note)


@lru_cache(maxsize=16)
def _dataset(dataset_id: str, name: str, text_column: str, label_column: str | None,
             model_labels: tuple) -> TextDataset:
    if dataset_id == "builtin":
        return _builtin(model_labels)
    frame = _read_csv(dataset_id, name)
    if text_column not in frame.columns:
        raise CandorError(f"{name}: no column '{text_column}'; columns are {', '.join(map(str, frame.columns))}")
    keep = frame[text_column].str.strip() != ""
    texts = tuple(frame.loc[keep, text_column].tolist())
    if not texts:
        raise CandorError(f"{name}: column '{text_column}' has no non-empty text")
    note = f"{len(texts):,} texts from column '{text_column}'"
    if (~keep).any():
        note += f" ({int((~keep).sum())} empty rows skipped)"
    labels = None
    if label_column:
        if label_column not in frame.columns:
            raise CandorError(f"{name}: no column '{label_column}'; columns are {', '.join(map(str, frame.columns))}")
        labels, label_note = _labels(frame.loc[keep, label_column].tolist(), label_column, name, model_labels)
        note += "; " + label_note
    return TextDataset(name, texts, labels, note)


def dataset(spec: dict | None) -> TextDataset:
    """The dataset a page store describes (``BUILTIN`` or an uploaded CSV's description).

    Parameters
    ----------
    spec : dict or None
        ``id``, ``name``, ``text_column``, ``label_column``; None means the built-in examples.

    Returns
    -------
    TextDataset

    Raises
    ------
    CandorError
        Naming the file and column when a column is missing or empty, or the text model's folder
        when its labels cannot be read. Labels are read as the text model's
        (:func:`app.services.text_loader.model_labels`).
    """
    spec = spec or BUILTIN
    fields = [spec.get(k) if isinstance(spec, dict) else None for k in ("id", "name", "text_column", "label_column")]
    if not isinstance(fields[0], str) or not all(f is None or isinstance(f, str) for f in fields):
        raise CandorError("that dataset is no longer on the server; upload it again")
    return _dataset(fields[0], fields[1] or "", fields[2] or "text", fields[3], model_labels())


def dataset_options(spec: dict | None) -> list[dict]:
    """Dropdown options for the first :data:`MAX_LISTED` texts.

    Parameters
    ----------
    spec : dict or None
        As :func:`dataset`.

    Returns
    -------
    list of dict
        ``{"label": "i: first 90 characters", "value": i}``.
    """
    texts = dataset(spec).texts[:MAX_LISTED]
    return [{"label": f"{i}: {t[:90]}{'…' if len(t) > 90 else ''}", "value": i} for i, t in enumerate(texts)]


def dataset_text(spec: dict | None, index: int) -> str:
    """Text number ``index`` of the dataset.

    Parameters
    ----------
    spec : dict or None
        As :func:`dataset`.
    index : int

    Returns
    -------
    str

    Raises
    ------
    CandorError
        If there is no such text.
    """
    texts = dataset(spec).texts
    if index is None or not 0 <= int(index) < len(texts):
        raise CandorError(f"text {index} does not exist; texts are numbered 0 to {len(texts) - 1}")
    return texts[int(index)]


@dataclass(frozen=True)
class HeadAnalysisView:
    """The head-analysis job's result, with what it ran on.

    Parameters
    ----------
    analysis : explainers.text.HeadAnalysis
    dataset : str
        Name and what was used (e.g. "first 1000 of 2000 texts").
    accuracy : dict or None
        :func:`explainers.text.evaluate_accuracy` on the labelled texts.
    syntactic : bool
        True when gold trees from a CoNLL-U file were used.
    """

    analysis: object
    dataset: str
    accuracy: dict | None
    syntactic: bool

    def to_dict(self) -> dict:
        """JSON of the view (the results cache holds it): the analysis as its ``to_dict()``."""
        return {"analysis": self.analysis.to_dict(), "dataset": self.dataset, "accuracy": self.accuracy,
                "syntactic": self.syntactic}

    @classmethod
    def from_dict(cls, d: dict) -> HeadAnalysisView:
        """The inverse of :meth:`to_dict` (the analysis through :func:`store.codec.head_analysis_from_dict`)."""
        return cls(head_analysis_from_dict(d["analysis"]), d["dataset"], d["accuracy"], d["syntactic"])


def head_analysis(spec: dict | None, conllu: dict | None = None,
                  progress: Callable[[int, int], None] | None = None) -> tuple[HeadAnalysisView, bool]:
    """Run (or read from the cache) Voita roles, Michel importance and the pruning curve.

    Runs inside a background job. With ``conllu`` its word forms are the input and its gold heads
    give syntactic roles; otherwise the texts of ``spec`` (at most :data:`MAX_ANALYSIS_TEXTS`).

    Parameters
    ----------
    spec : dict or None
        Dataset description (see :func:`dataset`).
    conllu : dict or None
        ``{"id", "name"}`` of a CoNLL-U upload.
    progress : callable(done, total), optional

    Returns
    -------
    (HeadAnalysisView, bool)
        The result and whether it came from the cache.
    """
    from explainers.attention import analyze_heads
    from explainers.text import evaluate_accuracy

    spec = spec or BUILTIN
    loaded = job_loaded()
    if conllu is not None and not isinstance(conllu, dict):
        raise CandorError("that CoNLL-U upload is no longer on the server; upload it again")
    source = (f"conllu:{conllu['id']}" if conllu else
              f"{spec['id']}:{spec.get('text_column')}:{spec.get('label_column')}")
    key = f"{CACHE_VERSION}|heads-v2|{loaded.info.tag}|{source}|max={MAX_ANALYSIS_TEXTS}|seeds=0"
    cache = result_cache()
    hit = cache.get(key)
    if hit is not None:
        return HeadAnalysisView.from_dict(hit), True
    model = loaded.model
    kw = dict(batch_size=16, random_seeds=(0,), progress=progress)
    if conllu:
        trees = read_trees(conllu.get("id"), str(conllu.get("name", "")))
        result = analyze_heads(model, trees=trees, **kw)
        view = HeadAnalysisView(result, f"{conllu['name']}: {len(trees)} sentences (CoNLL-U word forms, gold heads)",
                                None, True)
    else:
        ds = dataset(spec)
        texts = list(ds.texts[:MAX_ANALYSIS_TEXTS])
        used = f"first {len(texts):,} of {len(ds.texts):,}" if len(ds.texts) > len(texts) else f"all {len(texts):,}"
        result = analyze_heads(model, texts=texts, **kw)
        acc = None
        if ds.labels is not None:
            acc = evaluate_accuracy(model, texts, np.array(ds.labels[:len(texts)]))
        view = HeadAnalysisView(result, f"{ds.name}: {used} texts; {ds.note}", acc, False)
    cache.set(key, view.to_dict())
    return view, False
