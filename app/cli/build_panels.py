"""The build's last step: the Persuasive and Attention pages' row panels of the stored rows (issue 27).

They are drawn with the finished store installed, as a server of that store would draw them live
(:mod:`app.views.stored_panels`), then written beside the rest; the build writes the manifest again, listing them.
On Dask workers that see the store's folder (``--dask local:N``: processes of this machine) the rows are shared out
to them (:class:`PanelTask`), each worker drawing with the store installed in it as here: on Adult 228 ms a row,
114 s for its 500 rows in the build's one process before.
"""
from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

from store.engine import chunk_bounds, each_chunk
from store.hashes import file_sha256
from store.read import open_store
from store.write import StoreWriter
from workspace.errors import CandorError

PART = "row_panels"
"""The ``--skip`` name of this step."""
FILES = ("persuasive_rows.json", "attention_rows.json")
"""Its files (``app.views.stored_panels.FILES``, imported only when drawing: it imports Dash)."""
PIECE_ROWS = 20
"""Rows a Dask worker draws per task (about 5 s on Adult): small enough that the workers finish together."""
_worker_store: tuple = ()
"""In a Dask worker: the store :class:`PanelTask` installed, ``(folder, manifest SHA-256)``."""


@dataclasses.dataclass
class PanelTask:
    """``task(start, stop)`` for :func:`store.engine.each_chunk`: ``page``'s drawn panels of ``rows[start:stop]``
    (:func:`app.views.stored_panels.draw_rows`), drawn in a Dask worker with the store being built installed.

    The worker loads ``selection``'s workspace if it has none (:func:`.build_rows.worker_workspace`), takes the
    build's stopping rules (``budgets``, :func:`.build_rows.build_budgets`), and opens
    ``folder`` as the build opened it (``hashes``: model and data SHA-256) once per manifest (``manifest_sha256``).
    """

    page: str
    rows: list
    selection: dict
    budgets: dict
    folder: str
    hashes: tuple
    manifest_sha256: str

    def __call__(self, start: int, stop: int) -> dict[str, str]:
        global _worker_store
        from .. import services
        from ..views import stored_panels
        from .build_rows import worker_workspace

        worker_workspace(self.selection, self.budgets)
        if services.built_store() is None or _worker_store != (self.folder, self.manifest_sha256):
            services.use_built_store(open_store(self.folder, model_sha256=self.hashes[0],
                                                data_sha256=self.hashes[1], max_bytes=2**62))
            services.init(services.workspace(), warm=False)
            _worker_store = (self.folder, self.manifest_sha256)
        with threadpool_limits(1):
            return stored_panels.draw_rows(self.page, self.rows[start:stop])


def _probe(folder: str) -> tuple[int, str | None]:
    """A worker's process id and the SHA-256 of the manifest it sees in ``folder`` (None: none there)."""
    path = Path(folder) / "manifest.json"
    return os.getpid(), file_sha256(path) if path.is_file() else None


def _workers_see(client, folder: Path) -> str | None:
    """The SHA-256 of ``folder``'s manifest if every worker of ``client`` is another process that sees it as
    written here (a ``--dask local:N`` cluster; a remote one, or worker threads of this process: None)."""
    sha = file_sha256(folder / "manifest.json")
    try:
        seen = client.run(_probe, str(folder))
    except Exception:  # noqa: BLE001 (a worker lost meanwhile: draw here)
        return None
    mine = os.getpid()
    return sha if seen and all(pid != mine and theirs == sha for pid, theirs in seen.values()) else None


def _on_workers(client, selection: dict, folder: Path, hashes: tuple[str, str], manifest_sha: str):
    """A ``drawn_rows`` for :func:`app.views.stored_panels.draw_stored` that shares the rows out to ``client``'s
    workers in pieces of :data:`PIECE_ROWS`, each a :class:`PanelTask` (``selection``: the build's, as a dict)."""
    from .build_rows import build_budgets

    budgets = build_budgets()

    def drawn_rows(page: str, rows: list, progress=None) -> dict[str, str]:
        task = PanelTask(page, list(rows), selection, budgets, str(folder), tuple(hashes), manifest_sha)
        drawn, done = {}, 0
        for (start, stop), found in each_chunk(task, chunk_bounds(len(rows), PIECE_ROWS), client):
            drawn.update(found)
            done += stop - start
            if progress is not None:
                progress(done, len(rows))
        return drawn

    return drawn_rows


def finish_with_panels(writer: StoreWriter, partial: Path, ws, hashes: tuple[str, str], manifest: dict,
                       skip: tuple[str, ...], say, started: float, workers: tuple | None = None) -> None:
    """Write the manifest, then, unless ``skip`` names :data:`PART`, the row panels (:func:`write_row_panels`, on
    ``workers``: ``(Dask client, the build's selection as a dict)`` or None) and the manifest again, listing them,
    with the build's total seconds since ``started`` (``time.perf_counter``)."""
    if PART in skip:
        manifest["skipped"].update({name: f"not built (--skip {PART})" for name in FILES})
    writer.finish(manifest)  # a store that opens: the row panels are drawn from it, as a server would draw them
    if PART not in skip:
        write_row_panels(writer, partial, ws, hashes, manifest, say, workers)
        manifest["timings_s"]["total_s"] = round(time.perf_counter() - started, 3)
        writer.finish(manifest)


def write_row_panels(writer: StoreWriter, partial: Path, ws, hashes: tuple[str, str], manifest: dict, say,
                     workers: tuple | None = None) -> None:
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
    workers : (distributed.Client, dict), optional
        The build's Dask client and selection (``dataclasses.asdict``): the rows are drawn there if every worker
        sees ``partial`` (:func:`_workers_see`), else here.
    """
    from .. import services
    from ..views import stored_panels

    opened = open_store(partial, model_sha256=hashes[0], data_sha256=hashes[1], max_bytes=2**62)
    services.use_built_store(opened)
    services.init(ws, warm=False)
    drawn_rows = stored_panels.draw_rows
    if workers is not None and (manifest_sha := _workers_see(workers[0], partial)) is not None:
        drawn_rows = _on_workers(workers[0], workers[1], partial, hashes, manifest_sha)
    try:
        for page, name in stored_panels.FILES.items():
            t = time.perf_counter()
            what = f"the {page.capitalize()} page's row panels"
            try:
                writer.json(name, stored_panels.draw_stored(page, lambda done, total: say(what, done, total),
                                                            drawn_rows))
            except CandorError as err:  # no attention model: nothing to draw
                manifest["skipped"][name] = str(err)
            manifest["timings_s"][name.replace(".json", "_s")] = round(time.perf_counter() - t, 3)
    finally:
        services.use_built_store(None)
        services.init(ws, warm=False)
