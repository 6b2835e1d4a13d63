"""Upload page services: store the user's files server-side, list the data's columns, install the pair.

Files go to :func:`app.uploads.upload_dir` once; the browser keeps only the
stored name (a token). Models must be skops files (never unpickled). Installing
a pair replaces the workspace of every page in every process of the server
(:mod:`app.services.selection`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import CandorError
from ..loading import load_skops
from ..tables import read_table
from ..uploads import safe_name, store_upload, upload_dir
from .selection import Selection, as_uploaded, install


@dataclass(frozen=True)
class Stored:
    """One stored upload: ``token`` (its name in the upload folder), display name, size, data columns and notes."""

    token: str
    name: str
    size: int
    columns: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def receive(filename: str, contents: str, kind: str) -> Stored:
    """Store an upload from ``dcc.Upload`` (base64 ``contents``); read a data file's header and rows.

    Raises
    ------
    CandorError
        Wrong type, too large, unreadable table (the message names the file).
    """
    path = store_upload(filename, contents, kind=kind)
    notes: list[str] = []
    try:
        if kind == "model":
            load_skops(path)  # refuse a non-skops file, or one with untrusted types, now rather than at "Explain"
            return Stored(path.name, safe_name(filename), path.stat().st_size)
        df = read_table(path, notes)
    except CandorError as err:
        path.unlink(missing_ok=True)
        raise CandorError(as_uploaded(str(err), path.name)) from None
    return Stored(path.name, safe_name(filename), path.stat().st_size, tuple(map(str, df.columns)),
                  tuple(as_uploaded(n, path.name) for n in notes))


def resolve(token: str) -> Path:
    """The stored file behind a token from the browser; it must name a file directly inside the upload folder."""
    folder = upload_dir()
    path = (folder / safe_name(token)).resolve()
    if path.parent != folder or not path.is_file():
        raise CandorError("that upload is no longer on the server; upload the file again")
    return path


def activate(model_token: str, data_token: str, target: str) -> str:
    """Load the stored pair and make it what every page explains, in every worker; returns a one-line summary.

    Raises
    ------
    CandorError
        As :func:`app.loading.load_user_workspace` (names the file, column or dtype).
    """
    if not (model_token and data_token and target):
        raise CandorError("upload a model and a data file and choose the target column first")
    ws = install(Selection(model=str(resolve(model_token)), data=str(resolve(data_token)), target=target,
                           uploaded=True))
    what = f"class {ws.positive_class!r}" if ws.is_classifier else f"predicted {ws.target!r}"
    return (f"Now explaining {ws.name}: {len(ws.X)} rows x {ws.X.shape[1]} features, {ws.task}, {what} "
            f"({ws.output_label})." + "".join(f" {n}." for n in ws.notes))


def use_sample() -> str:
    """Explain the bundled sample again, in every worker; returns a one-line summary."""
    ws = install(Selection())
    return f"Now explaining {ws.name}."
