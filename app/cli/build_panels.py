"""The build's last step: the Persuasive and Attention pages' row panels of the stored rows (issue 27).

They are drawn with the finished store installed, as a server of that store would draw them live
(:mod:`app.views.stored_panels`), then written beside the rest; the build writes the manifest again, listing them.
"""
from __future__ import annotations

import time
from pathlib import Path

from store.read import open_store
from store.write import StoreWriter
from workspace.errors import CandorError

PART = "row_panels"
"""The ``--skip`` name of this step."""
FILES = ("persuasive_rows.json", "attention_rows.json")
"""Its files (``app.views.stored_panels.FILES``, imported only when drawing: it imports Dash)."""


def finish_with_panels(writer: StoreWriter, partial: Path, ws, hashes: tuple[str, str], manifest: dict,
                       skip: tuple[str, ...], say, started: float) -> None:
    """Write the manifest, then, unless ``skip`` names :data:`PART`, the row panels (:func:`write_row_panels`) and
    the manifest again, listing them, with the build's total seconds since ``started`` (``time.perf_counter``)."""
    if PART in skip:
        manifest["skipped"].update({name: f"not built (--skip {PART})" for name in FILES})
    writer.finish(manifest)  # a store that opens: the row panels are drawn from it, as a server would draw them
    if PART not in skip:
        write_row_panels(writer, partial, ws, hashes, manifest, say)
        manifest["timings_s"]["total_s"] = round(time.perf_counter() - started, 3)
        writer.finish(manifest)


def write_row_panels(writer: StoreWriter, partial: Path, ws, hashes: tuple[str, str], manifest: dict, say) -> None:
    """Draw each page's panels (:func:`app.views.stored_panels.draw_stored`) from the store ``writer`` finished in
    ``partial`` and write them (``manifest``'s ``skipped`` and ``timings_s`` updated; written again by
    :func:`finish_with_panels`).

    Parameters
    ----------
    writer : StoreWriter
        The build's writer; its manifest is already written (the store opens).
    partial : Path
        The store's folder.
    ws : Workspace
        The workspace it was built for.
    hashes : (str, str)
        SHA-256 of the model and the data (:func:`store.hashes.source_hashes`).
    manifest : dict
        What ``writer.finish`` wrote.
    say : callable ``(what, done, total)``
    """
    from .. import services
    from ..views import stored_panels

    opened = open_store(partial, model_sha256=hashes[0], data_sha256=hashes[1], max_bytes=2**62)
    services.use_built_store(opened)
    services.init(ws, warm=False)
    try:
        for page, name in stored_panels.FILES.items():
            t = time.perf_counter()
            what = f"the {page.capitalize()} page's row panels"
            try:
                writer.json(name, stored_panels.draw_stored(page, lambda done, total: say(what, done, total)))
            except CandorError as err:  # no attention model: nothing to draw
                manifest["skipped"][name] = str(err)
            manifest["timings_s"][name.replace(".json", "_s")] = round(time.perf_counter() - t, 3)
    finally:
        services.use_built_store(None)
        services.init(ws, warm=False)
