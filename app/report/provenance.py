"""Where a report's numbers came from: file hashes, the explainers' parameters and seeds, versions, the date."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from app import services
from app.services import selection
from app.services.tabular import fingerprint
from store.hashes import file_sha256, table_sha256
from store.provenance import library_versions

DRAWING = ("plotly", "dash", "skops", "torch")
"""Libraries the report names beyond a store's: what drew the figures, read the model."""


@dataclass(frozen=True)
class Provenance:
    """``files``: (role, file name, SHA-256 of its bytes) per known file; ``table_sha256``: SHA-256 of the
    explained table as loaded (:func:`store.hashes.table_sha256`: column names, values, target); ``model_fingerprint``: SHA-256 of the model's
    explained output on the first rows (:func:`app.services.tabular.fingerprint`); ``parameters``: (what,
    settings text) pairs; ``versions``: (library, version) pairs; ``created``: ISO 8601 UTC time."""

    files: tuple[tuple[str, str, str], ...]
    table_sha256: str
    model_fingerprint: str
    parameters: tuple[tuple[str, str], ...]
    versions: tuple[tuple[str, str], ...]
    created: str


def versions() -> tuple[tuple[str, str], ...]:
    """Python and the library versions a store records (:func:`store.provenance.library_versions`), plus
    :data:`DRAWING`."""
    found = {k: v for k, v in library_versions().items() if v}
    for name in DRAWING:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return tuple(found.items())


def known_files(files: dict | None) -> dict:
    """``files`` if given, else the model and data files of the current selection (the bundled sample's model
    file when no ``--model``; uploads and ``--model`` files by their paths)."""
    if files is not None:
        return files
    from workspace.workspace import SAMPLE_MODEL

    sel = selection.current()
    return {"model": Path(sel.model), "data": Path(sel.data)} if sel.model else {"model": SAMPLE_MODEL}


def provenance(files: dict | None, sections, surrogate, k: int, methods=()) -> Provenance:
    """The provenance of a report built from ``sections`` (:class:`app.report.content.RowSection`) and the global
    methods' views ``methods`` (:class:`app.services.methods.GlobalMethodView`)."""
    ws = services.workspace()
    known = []
    for role, path in known_files(files).items():
        if path is not None and Path(path).is_file():
            known.append((role, selection.shown_file_name(path), file_sha256(Path(path))))
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
    params += [(v.title, v.result.source) for v in methods if v.result is not None]
    if surrogate is not None:
        params.append(("rule surrogate", surrogate.source))
    params.append(("held-out split", ws.source))
    params.append(("results store", services.store_note()))
    return Provenance(tuple(known), table_sha256(ws.X, ws.y), fingerprint(ws), tuple(params), versions(),
                      datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"))
