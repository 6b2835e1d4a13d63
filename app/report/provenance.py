"""Where a report's numbers came from: file hashes, the explainers' parameters and seeds, versions, the date."""
from __future__ import annotations

import hashlib
import platform
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import numpy as np

from app import services
from app.services.tabular import fingerprint

LIBRARIES = ("numpy", "pandas", "scikit-learn", "shap", "lime", "plotly", "dash", "skops", "torch")
CHUNK = 1 << 20


@dataclass(frozen=True)
class Provenance:
    """``files``: (role, file name, SHA-256 of its bytes) per known file; ``table_sha256``: SHA-256 of the
    explained table as loaded (column names and float values); ``model_fingerprint``: SHA-256 of the model's
    explained output on the first rows (:func:`app.services.tabular.fingerprint`); ``parameters``: (what,
    settings text) pairs; ``versions``: (library, version) pairs; ``created``: ISO 8601 UTC time."""

    files: tuple[tuple[str, str, str], ...]
    table_sha256: str
    model_fingerprint: str
    parameters: tuple[tuple[str, str], ...]
    versions: tuple[tuple[str, str], ...]
    created: str


def file_sha256(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB chunks (the file was already size-checked when loaded)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def table_sha256(X) -> str:
    """SHA-256 of a table's column names and float64 values (NaN kept): the same table gives the same hash."""
    h = hashlib.sha256("\x1f".join(map(str, X.columns)).encode("utf-8"))
    h.update(np.ascontiguousarray(X.to_numpy(dtype=float)).tobytes())
    return h.hexdigest()


def versions() -> tuple[tuple[str, str], ...]:
    """Python and the installed versions of :data:`LIBRARIES` (absent ones left out)."""
    found = [("python", platform.python_version())]
    for name in LIBRARIES:
        try:
            found.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            pass
    return tuple(found)


def provenance(files: dict | None, sections, surrogate, k: int) -> Provenance:
    """The provenance of a report built from ``sections`` (:class:`app.report.content.RowSection`)."""
    ws = services.workspace()
    known = []
    for role, path in (files or {}).items():
        if path is not None and Path(path).is_file():
            known.append((role, Path(path).name, file_sha256(Path(path))))
    shap = sections[0].shap
    params = [("SHAP (every row)", f"{shap.source}; " + ", ".join(
        f"{key} {shap.params[key]}" for key in ("algorithm", "background_size", "seed", "space", "players")
        if key in shap.params))]
    view = sections[0].persuasive
    if view is not None:
        params.append(("persuasive story", f"top-{k} of SHAP, values {view.settings['rounding']}, grouping "
                                           f"{'on' if view.settings['grouping'] else 'off'}; guardrail: top "
                                           f"{view.settings['top_guard']} shown, sensitive share at most "
                                           f"{view.settings['max_share']:.0%}"))
    if surrogate is not None:
        params.append(("rule surrogate", surrogate.source))
    params.append(("held-out split", ws.source))
    return Provenance(tuple(known), table_sha256(ws.X), fingerprint(ws), tuple(params), versions(),
                      datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"))
