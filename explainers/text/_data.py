"""Reading labelled text and CoNLL-U files; measuring a classifier's accuracy.

Nothing here downloads data: callers pass paths (tests and benchmarks use
``../shared/data``; the app's default run needs none of it).
"""
from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

__all__ = ["ConlluSentence", "read_conllu", "read_labelled_sentences", "evaluate_accuracy"]


@dataclass(frozen=True)
class ConlluSentence:
    """One sentence of a CoNLL-U file (multi-word ranges and empty nodes skipped).

    Parameters
    ----------
    sent_id : str
    words : tuple of str
        FORM column, in order.
    heads : tuple of int
        0-based index of each word's governor, -1 for the root.
    deprels : tuple of str
        Universal relation without subtype (``"obl:tmod"`` -> ``"obl"``).
    upos : tuple of str
    """

    sent_id: str
    words: tuple
    heads: tuple
    deprels: tuple
    upos: tuple


def read_conllu(path: str | Path, max_sentences: int | None = None) -> list[ConlluSentence]:
    """Read gold dependency trees from a CoNLL-U file.

    Parameters
    ----------
    path : str or Path
    max_sentences : int, optional
        Stop after this many sentences (file order).

    Returns
    -------
    list of ConlluSentence

    Raises
    ------
    ValueError
        On a token line without 10 tab-separated columns or a non-integer HEAD.
    """
    out: list[ConlluSentence] = []
    rows: list[list[str]] = []
    sent_id = ""

    def flush():
        nonlocal rows, sent_id
        if rows:
            out.append(ConlluSentence(
                sent_id=sent_id or str(len(out)), words=tuple(r[1] for r in rows),
                heads=tuple(int(r[6]) - 1 for r in rows),
                deprels=tuple(r[7].split(":")[0] for r in rows), upos=tuple(r[3] for r in rows)))
        rows, sent_id = [], ""

    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line:
                flush()
                if max_sentences is not None and len(out) >= max_sentences:
                    return out
            elif line.startswith("#"):
                if line.startswith("# sent_id"):
                    sent_id = line.split("=", 1)[1].strip()
            else:
                cols = line.split("\t")
                if len(cols) != 10:
                    raise ValueError(f"{path}:{lineno}: expected 10 columns, got {len(cols)}")
                if "-" in cols[0] or "." in cols[0]:
                    continue
                if not cols[6].isdigit():
                    raise ValueError(f"{path}:{lineno}: HEAD {cols[6]!r} is not an integer")
                rows.append(cols)
    flush()
    return out[:max_sentences] if max_sentences is not None else out


def read_labelled_sentences(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Read a tab-separated ``text<TAB>label`` file (UCI sentiment sentences).

    A header line whose label is not an integer is skipped; quotes are not
    interpreted (``csv.QUOTE_NONE``); only ``\\n`` ends a line (U+0085 kept).

    Returns
    -------
    texts : list of str
    labels : ndarray of int, shape (n_texts,)
    """
    texts, labels = [], []
    with open(path, encoding="utf-8", newline="\n") as fh:
        for row in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) < 2 or not row[-1].strip().lstrip("-").isdigit():
                continue
            texts.append(row[0].strip())
            labels.append(int(row[-1]))
    return texts, np.array(labels, dtype=int)


def evaluate_accuracy(model, texts: Sequence[str], labels: Sequence[int], batch_size: int = 64) -> dict:
    """Accuracy of a :class:`TextClassifier` on labelled text.

    Parameters
    ----------
    model : TextClassifier
    texts : sequence of str
    labels : sequence of int
        Class indices in ``model.labels`` order.
    batch_size : int, default=64

    Returns
    -------
    dict
        ``accuracy``, ``n``, ``predicted_share`` (share predicted as each
        label), ``balanced_accuracy``.

    Raises
    ------
    ValueError
        If ``texts`` and ``labels`` differ in length or are empty.
    """
    labels = np.asarray(labels, dtype=int)
    if len(texts) != labels.size or labels.size == 0:
        raise ValueError(f"got {len(texts)} texts and {labels.size} labels")
    preds = []
    for i in range(0, len(texts), batch_size):
        b = model.tokenizer(list(texts[i:i + batch_size]), padding=True, truncation=True,
                            max_length=model.max_length, return_tensors="pt")
        with torch.no_grad():
            preds.append(model(b["input_ids"], b["attention_mask"])[0].argmax(-1).numpy())
    pred = np.concatenate(preds)
    recalls = [float((pred[labels == c] == c).mean()) for c in np.unique(labels)]
    return dict(accuracy=float((pred == labels).mean()), n=int(labels.size),
                balanced_accuracy=float(np.mean(recalls)),
                predicted_share={lab: float((pred == i).mean()) for i, lab in enumerate(model.labels)})
