"""Upload page services: store the user's files server-side, list the data's columns, install the pair.

Files go to :func:`workspace.uploads.upload_dir` once; the browser keeps only the stored file's id
(a token), which is looked up in the folder's index (:func:`workspace.uploads.lookup`), never joined
into a path. Models must be skops files (never unpickled). Installing a pair replaces the
workspace of every page in every process of the server (:mod:`app.services.selection`); the
pair in use is never deleted by the upload quota or the retention rule.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from workspace import limits, uploads
from ..serve.request_user import require_role
from workspace.errors import CandorError
from workspace.feature_names import load_features
from workspace.model_safety import load_skops
from workspace.tables import read_table, table_shape
from workspace.uploads import safe_name, store_upload
from . import selection
from .selection import Selection, as_uploaded, install


@dataclass(frozen=True)
class Stored:
    """One stored upload: ``token`` (its id in the upload folder's index), display name, size, data columns and notes."""

    token: str
    name: str
    size: int
    columns: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def _selected_paths() -> list[str]:
    """Files the selection of this process and of the launch's selection file name (the pair in use, and its
    features file)."""
    chosen = [selection.current()]
    try:
        chosen.append(Selection(**json.loads(selection.state_file().read_text())))
    except FileNotFoundError:
        pass
    return [p for s in chosen for p in (s.model, s.data, s.features) if p]


uploads.in_use_hooks.append(_selected_paths)


def receive(filename: str, contents: str, kind: str) -> Stored:
    """Store an upload from ``dcc.Upload`` (base64 ``contents``); read a data file's header and rows.

    ``kind`` is "model" (a skops file, its types checked), "data" (a table, read) or "features" (a features file,
    :mod:`workspace.feature_names`: at most 256 KiB, refused before it is decoded, then its keys and values checked).

    Raises
    ------
    CandorError
        Wrong type, too large (bytes, cells or memory), unreadable table or features file, quota full (the message
        names the file).
    """
    require_role("analyst", "uploading a file")
    path = store_upload(filename, contents, kind=kind)
    notes: list[str] = []
    try:
        if kind == "model":
            load_skops(path)  # refuse a non-skops file, or one with untrusted types, now rather than at "Explain"
            return Stored(path.name, safe_name(filename), path.stat().st_size)
        if kind == "features":  # its keys and values now; its features against the table's columns at "Explain"
            described = load_features(path)
            return Stored(path.name, safe_name(filename), path.stat().st_size,
                          notes=(f"{len(described.formats):,} feature(s) named or formatted",))
        df = read_table(path, notes)
    except CandorError as err:
        uploads.remove(path.name)
        raise CandorError(as_uploaded(str(err), path.name)) from None
    except MemoryError:
        uploads.remove(path.name)
        raise CandorError(f"{safe_name(filename)}: reading the table needs more memory than this server allows "
                          "(CANDOR_MAX_MEMORY_MB)") from None
    return Stored(path.name, safe_name(filename), path.stat().st_size, tuple(map(str, df.columns)),
                  tuple(as_uploaded(n, path.name) for n in notes))


def resolve(token, kind: str) -> Path:
    """The stored file behind a token from the browser, through the upload index (never joined into a path).

    Raises
    ------
    CandorError
        "that upload is no longer on the server" for an unknown token, or one of another kind.
    """
    return uploads.lookup(token, (kind,)).path


def check_explanation_cost(rows: int, features: int, name: str) -> None:
    """Refuse a pair whose model calls would exceed ``CANDOR_MAX_CELLS`` model-input cells.

    Loading predicts every row once (``rows x features`` input cells); explaining one row asks the
    model for LIME's perturbed rows or SHAP's background rows at once (``max(LIME_SAMPLES,
    BACKGROUND_SIZE) x features``). Larger calls are split into batches by the model adapter.

    Raises
    ------
    CandorError
        Naming the numbers, the limit and the variable that raises it.
    """
    limits.check_cells(rows, features, name)
    from .tabular import BACKGROUND_SIZE, LIME_SAMPLES

    per_row = max(LIME_SAMPLES, BACKGROUND_SIZE)
    limits.check_cells(per_row, features, f"{name}: explaining one row (LIME/SHAP model input)")


def activate(model_token: str, data_token: str, target: str, features_token: str | None = None) -> str:
    """Load the stored pair and make it what every page explains, in every worker; returns a one-line summary.

    ``features_token``: an uploaded features file (display names and value formats, as ``--features-file``), or
    None.

    Raises
    ------
    CandorError
        As :func:`workspace.workspace.load_user_workspace` (names the file, column or dtype), or when the table or the
        cost of explaining it is over the limits (:mod:`workspace.limits`).
    """
    if not (model_token and data_token and target):
        raise CandorError("upload a model and a data file and choose the target column first")
    model, data = resolve(model_token, "model"), resolve(data_token, "data")
    features = resolve(features_token, "features") if features_token else None
    rows, columns = table_shape(data)
    check_explanation_cost(rows, max(columns - 1, 1), as_uploaded(data.name, data.name))
    try:
        ws = install(Selection(model=str(model), data=str(data), target=target, uploaded=True,
                               features=str(features) if features is not None else None))
    except MemoryError:
        raise CandorError(f"{as_uploaded(data.name, data.name)}: loading this pair needs more memory than this "
                          "server allows (CANDOR_MAX_MEMORY_MB)") from None
    what = f"class {ws.positive_class!r}" if ws.is_classifier else f"predicted {ws.target!r}"
    return (f"Now explaining {ws.name}: {len(ws.X):,} rows x {ws.X.shape[1]:,} features, {ws.task}, {what} "
            f"({ws.output_label})." + "".join(f" {n}." for n in ws.notes))


def use_sample() -> str:
    """Explain the bundled sample again, in every worker; returns a one-line summary."""
    ws = install(Selection())
    return f"Now explaining {ws.name}."
