"""``python -m app build``: compute every tabular view's explanations once and write a store (:mod:`store`).

The store is filled by the services' own functions (one home: no second SHAP path): the global SHAP
view (``tabular._shap_all``); each held-out row's result of every method the table of methods stores per row
(``app/services/methods.py::TABLE``: SHAP and LIME, each entry's ``live_rows``, run in chunks by
:func:`store.engine.run_chunks`, resumable, on Dask with ``--dask``); each global method's result (its entry's
``result``), the Persuasive page's global curve and the Surrogate page's default MUSE fit and frontier. Each
method's settings and what recomputing it needs come from its entry too.
``python -m app --store STORE`` then serves them without recomputing (``app.services.built_store``).

Every input problem prints one line, ``candor: error: ...``, and exits with status 2.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import hashlib
import importlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from store.codec import global_meta
from store.format import DOCUMENTS, FORMAT_VERSION, METHODS, NOT_STORED, WHOLE_TABLE_MAX
from store.hashes import source_hashes
from store.read import workspace_key
from store.provenance import library_versions
from store.write import StoreWriter, partial_folder
from store.write import check_out_folder as _check_out, remove_path as _remove, swap_in as _swap_in
from workspace.errors import CandorError
from workspace.settings import Settings
from . import stored_rows
from .build_panels import PART as PANELS_PART, finish_with_panels
from .build_rows import RowTask, beside_rows, build_budgets, set_budgets
from .model_flags import add_model_arguments

BUILD_DIR = ".build"
"""The partial store's folder for the engine's chunks while a build runs (kept on failure, so a rerun with
the same :func:`chunk_key` resumes; ``key.json`` there names that key, and chunks of another key are deleted)."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m app build",
                                description="Compute every tabular view's explanations once into a store.")
    add_model_arguments(p)  # the same loading flags as python -m app
    p.add_argument("--out", required=True, help="the store's folder (written beside it as .NAME.partial, then "
                                                "renamed over it: an old store there is replaced whole)")
    p.add_argument("--rows", default=None,
                   help="'table' (every row of the table), 'held-out' (every held-out row) or N (the first N held-out "
                        f"rows); default the whole table of at most {WHOLE_TABLE_MAX:,} rows, else every held-out row")
    p.add_argument("--chunk-rows", type=int, default=256, help="rows per chunk of the per-row work (default 256)")
    p.add_argument("--skip", default="", help=f"comma-separated parts not to build (served live): {', '.join(PARTS)}")
    p.add_argument("--dask", default=None,
                   help="run the per-row work on Dask: 'local', 'local:N', or a scheduler's tls:// address with "
                        "--dask-tls-cert/-key/-ca (any other address needs --trust-cluster)")
    p.add_argument("--dask-tls-cert", default=None, help="this client's certificate (PEM) for a tls:// scheduler")
    p.add_argument("--dask-tls-key", default=None, help="its private key (PEM), unless the certificate file holds it")
    p.add_argument("--dask-tls-ca", default=None,
                   help="the CA (PEM) that signed the scheduler's and the workers' certificates")
    p.add_argument("--trust-cluster", action="store_true",
                   help="use a scheduler without TLS: it and its workers can run code here and read the model and data")
    return p


def _explainer_settings() -> dict:
    """Every setting the stored explanations depend on (the manifest's ``explainers``; part of the chunk key)."""
    from ..services import methods, surrogates

    persuasive_service = importlib.import_module("app.services.persuasive")
    cohorts_service = importlib.import_module("app.services.cohorts")
    return {
        **{m.name: m.settings() for m in methods.TABLE},
        "persuasive": {"global_rows": persuasive_service.GLOBAL_ROWS, "max_k": persuasive_service.MAX_K,
                       "measures": list(persuasive_service.GLOBAL_MEASURES)},
        "surrogates": {"budgets": surrogates.DEFAULT_BUDGETS, "lambdas": surrogates.DEFAULT_LAMBDAS,
                       "frontier_budgets": list(surrogates.FRONTIER_BUDGETS), "seed": 0},
        "cohorts": {"story_rows": cohorts_service.STORY_ROWS, "story_measures": list(cohorts_service.STORY_MEASURES)},
    }


def chunk_key(model_sha: str, data_sha: str, ws, rows: np.ndarray, chunk_rows: int) -> dict:
    """What the per-row chunks of a build depend on: a chunk saved under another key is never reused.

    Model and data SHA-256, the workspace (target, explained class, rows, columns), the rows stored (their
    SHA-256), the chunk size, the explainers' settings and the library versions.
    """
    return {"model_sha256": model_sha, "data_sha256": data_sha, "workspace": workspace_key(ws),
            "rows_sha256": hashlib.sha256(np.ascontiguousarray(rows, dtype=np.int64).tobytes()).hexdigest(),
            "n_rows": int(len(rows)), "chunk_rows": int(chunk_rows), "explainers": _explainer_settings(),
            "libraries": library_versions()}


def _chunk_dir(partial: Path, key: dict, say) -> Path:
    """``partial/.build``, holding chunks of ``key`` only: chunks saved under another key are deleted first."""
    from store.write import atomic_write

    build_dir = partial / BUILD_DIR
    key_file, text = build_dir / "key.json", json.dumps(key, sort_keys=True)
    try:
        same = key_file.is_file() and not key_file.is_symlink() and key_file.read_text() == text
    except (OSError, UnicodeDecodeError):
        same = False
    if not same and os.path.lexists(build_dir):
        say("discarding the chunks of a build with other model, data, rows or settings", 0, 1)
        _remove(build_dir)
    atomic_write(key_file, text.encode())
    return build_dir


PARTS = (*DOCUMENTS.values(), "persuasive", "surrogates", "cohorts", PANELS_PART)
"""Parts a build may skip (``--skip``): each global method stored as a document (the table of methods), the
Persuasive curve, the surrogates, the Cohorts page's story measures and the Persuasive and Attention pages' row
panels (:mod:`.build_panels`); the rows and the global SHAP view are always built."""


def _without_clock_budgets(fn):
    """Run ``fn`` (the build) with every budget the live server sets in seconds turned into its count cap, then put
    them back: LIME stops by its tolerance or sample cap (:func:`app.services.tabular.reproducible_lime`),
    model-agnostic global SHAP covers its largest row count (``AGNOSTIC_ROWS``) and the Persuasive global curve
    every candidate row. Live, these depend on how fast the machine is at the time; a build is not waited on page by
    page, and two builds of one store must agree."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        saved = build_budgets()
        try:
            importlib.import_module("app.services.tabular").reproducible_lime()
            set_budgets({**build_budgets(), **dict.fromkeys(("agnostic_budget_s", "global_budget_s", "story_budget_s"),
                                                            float("inf"))})
            with threadpool_limits(1):
                return fn(*args, **kwargs)
        finally:
            set_budgets(saved)
    return run


def _write_global(writer: StoreWriter, say, timings: dict):
    """Compute and write the global SHAP view (``tabular._shap_all``); returns it."""
    from ..services import tabular

    t = time.perf_counter()
    say("global SHAP", 0, 1)
    g, where = tabular._shap_all()
    rows_g = np.array(sorted(where, key=where.get), dtype=np.int64)
    writer.array("global_values.npy", g.values)
    writer.array("global_feature_values.npy", np.asarray(g.feature_values, dtype=float))
    writer.array("global_se.npy", np.zeros_like(g.values) if g.standard_error is None else g.standard_error)
    writer.array("global_rows.npy", rows_g)
    timings["global_shap_s"] = time.perf_counter() - t
    return g


def _write_rows(writer: StoreWriter, rows: np.ndarray, arrays: dict) -> None:
    """Write the stored rows and each per-row method's arrays (:func:`store.engine.run_chunks`' result)."""
    writer.array("rows.npy", rows)
    if len(rows):
        writer.array("prediction.npy", arrays["prediction"])
        for method in METHODS:
            for part in ("values", "se", "base", "prediction", "feature_values"):
                writer.array(f"{method}_{part}.npy", arrays[f"{method}_{part}"].astype(float))
        writer.table("row_meta.parquet", pd.DataFrame({"row": rows, **{m: arrays[f"{m}_meta"].astype(str)
                                                                       for m in METHODS}}))


def _write_reproduce(writer: StoreWriter) -> dict:
    """Each method's ``reproduce`` entry (the table of methods), its row files written: SHAP's background and LIME's
    training rows, so that anyone can recompute a stored value."""
    from ..services import methods

    reproduce = {}
    for m in methods.TABLE:
        if m.reproduce is not None:
            reproduce[m.name], positions = m.reproduce()
            for name, array in positions.items():
                writer.array(name, array)
    return reproduce


def _write_parts(writer: StoreWriter, skip: tuple[str, ...], say, timings: dict, skipped: dict) -> None:
    """Write the JSON parts: each global method's document (the table of methods), the Persuasive page's global
    curve and the Surrogate page's default fits; a part in ``skip``, or that does not apply, goes in ``skipped``."""
    from ..services import methods, surrogates

    persuasive_service = importlib.import_module("app.services.persuasive")
    cohorts_service = importlib.import_module("app.services.cohorts")
    documents = [(m.name, f"{m.name}.json", m.title, lambda m=m: m.result().to_dict())
                 for m in methods.global_methods() if m.facts.stored == "document"]
    for part, name, what, make in (*documents,
                                   ("persuasive", "persuasive_global.json", "the Persuasive page's global curve",
                                    lambda: persuasive_service.global_curve_to_json(
                                        persuasive_service.persuasive_global())),
                                   ("surrogates", "muse_default.json", "MUSE at default budgets",
                                    lambda: surrogates._results().get(surrogates.default_muse_key())),
                                   ("surrogates", "frontier_default.json", "the surrogate frontier",
                                    lambda: surrogates._results().get(surrogates._default_frontier())),
                                   ("cohorts", cohorts_service.STORED_STORY, "the Cohorts page's story measures",
                                    lambda: cohorts_service.story_to_json(cohorts_service._story()))):
        if part in skip:
            skipped[name] = f"not built (--skip {part})"
            continue
        t = time.perf_counter()
        say(what, 0, 1)
        try:
            writer.json(name, make())
        except CandorError as err:  # a page that does not apply to this model (a regressor's surrogate)
            skipped[name] = str(err)
        timings[name.replace(".json", "_s")] = time.perf_counter() - t


@_without_clock_budgets
def build(settings: Settings, out: Path, *, max_rows: int | str | None = None, chunk_rows: int = 256, client=None,
          progress=None, skip: tuple[str, ...] = ()) -> dict:
    """Compute and write the store of the workspace ``settings`` name; returns its manifest.

    Parameters
    ----------
    settings : Settings
        The model and data (``--model``, ``--data``, ``--target``, ...; none: the bundled sample).
    out : Path
        The store's folder: written as :func:`partial_folder` beside it, then renamed over it (a store
        there is replaced whole; a folder that is not a store is refused).
    max_rows : int, "table" or "held-out", optional
        Store every row of the table (``"table"``), every held-out row (``"held-out"``) or only the first
        ``max_rows`` held-out rows (``ws.test_idx`` order: the default row and the Persuasive curve's rows come
        first); None: the whole table of at most :data:`~store.format.WHOLE_TABLE_MAX` rows, else every
        held-out row (:func:`.stored_rows.chosen`). Other rows are explained when chosen.
    chunk_rows : int
        Rows per chunk for :func:`store.engine.run_chunks`.
    client : dask.distributed.Client, optional
        Run the per-row chunks there.
    progress : callable ``(what, done, total)``, optional
    skip : tuple of str
        Parts of :data:`PARTS` not to build (served live, the manifest says so).

    Raises
    ------
    CandorError
        If the files cannot be loaded or an explainer fails (one line).
    """
    from store.engine import run_chunks

    from .. import services
    from ..services import methods, tabular
    from ..services.selection import Selection
    from ..serve.startup import defer_torch

    defer_torch()
    out = Path(out)
    _check_out(out)
    partial = partial_folder(out)
    t0 = time.perf_counter()
    selection = Selection.from_settings(settings)
    ws = selection.load()
    model_sha, data_sha = source_hashes(settings, ws)
    services.init(ws, warm=False, opened_store=None)  # computed live, never read from another store
    say = progress or (lambda what, done, total: None)
    writer = StoreWriter(partial)
    timings, skipped = {}, {}

    rows, which = stored_rows.chosen(ws, max_rows)
    task = RowTask(rows, dataclasses.asdict(selection), build_budgets())
    rows_what = f"rows ({', '.join(m.title for m in methods.stored_per_row())})"
    build_dir = _chunk_dir(partial, chunk_key(model_sha, data_sha, ws, rows, chunk_rows), say)

    def compute_rows():
        t = time.perf_counter()
        arrays = run_chunks(task, len(rows), chunk_rows=chunk_rows, out_dir=build_dir,
                            client=client, progress=lambda done, total: say(rows_what, done, total))
        _write_rows(writer, rows, arrays)
        timings["rows_s"] = time.perf_counter() - t

    def the_rest():
        reproduce = _write_reproduce(writer)
        _write_parts(writer, skip, say, timings, skipped)
        return reproduce

    # on Dask, what needs no row is computed here meanwhile (build_rows.beside_rows)
    g, _, reproduce = beside_rows(compute_rows, lambda: _write_global(writer, say, timings), the_rest,
                                  parallel=client is not None)

    shap = tabular._shap()
    manifest = {
        "format": "candor-store", "format_version": FORMAT_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "model": {"path": str(settings.model or "bundled sample"), "sha256": model_sha},
        "data": {"path": str(settings.data or "bundled sample (table SHA-256: columns, values, target)"),
                 "sha256": data_sha},
        "workspace": workspace_key(ws), "source": ws.source,
        "facts": {"shap_algorithm": shap.algorithm, "shap_exact": bool(shap.exact),
                  "shap_sums_children": bool(shap.sums_children)},
        "global": global_meta(g), "reproduce": reproduce,
        "explainers": {**(settings_used := _explainer_settings()),
                       "shap": {**settings_used["shap"], "source": g.source}},
        "rows": {"stored": int(len(rows)), "which": which, "table": int(len(ws.X)), "held_out": int(len(ws.test_idx)),
                 "chunk_rows": chunk_rows,
                 "engine": "dask" if client is not None else "single process"},
        "libraries": library_versions(), "not_stored": stored_rows.not_stored(which, NOT_STORED), "skipped": skipped,
        "timings_s": {k: round(v, 3) for k, v in {**timings, "total_s": time.perf_counter() - t0}.items()},
    }
    finish_with_panels(writer, partial, ws, (model_sha, data_sha), manifest, skip, say, t0,
                       None if client is None else (client, dataclasses.asdict(selection)))
    shutil.rmtree(partial / BUILD_DIR, ignore_errors=True)  # the chunks are in the store's arrays now
    _swap_in(partial, out)
    return {**manifest, "files": writer.files}


def main(argv: list[str]) -> int:
    """``python -m app build ...``; returns the exit status (2 on any input problem, one line)."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.text_model = None
    if args.chunk_rows < 1:
        parser.exit(2, "candor: error: --chunk-rows must be 1 or more\n")
    try:
        rows = None if args.rows is None else stored_rows.parse(args.rows)
    except argparse.ArgumentTypeError as err:
        parser.exit(2, f"candor: error: --rows {err}\n")
    skip = tuple(s.strip() for s in args.skip.split(",") if s.strip())
    unknown = sorted(set(skip) - set(PARTS))
    if unknown:
        parser.exit(2, f"candor: error: --skip {', '.join(unknown)}: parts are {', '.join(PARTS)}\n")
    try:
        settings = Settings.from_args(args)
        if settings.model and settings.trust_pickle:
            print("candor: warning: --trust-model-code lets the model file run code", file=sys.stderr)
        client = None
        if args.dask:
            from store.cluster import ClusterTrust, client_from_address

            trust = ClusterTrust(args.dask_tls_cert, args.dask_tls_key, args.dask_tls_ca, args.trust_cluster)
            if args.trust_cluster and not trust.tls_given():
                print("candor: warning: --trust-cluster lets the Dask scheduler and its workers run code here and "
                      "read the model and data", file=sys.stderr)
            client = client_from_address(args.dask, trust=trust)
        elif args.trust_cluster or args.dask_tls_cert or args.dask_tls_key or args.dask_tls_ca:
            raise CandorError("--trust-cluster and --dask-tls-* go with --dask")

        def progress(what, done, total):
            print(f"candor: build: {what} {done}/{total}", file=sys.stderr, flush=True)

        try:
            manifest = build(settings, Path(args.out), max_rows=rows, chunk_rows=args.chunk_rows, client=client,
                             progress=progress, skip=skip)
        finally:
            if client is not None:
                client.close()
    except CandorError as err:
        print(f"candor: error: {err}", file=sys.stderr)
        return 2
    size = sum(f["bytes"] for f in manifest["files"].values())
    print(f"candor: store written to {args.out}: {len(manifest['files'])} files, {size / 2**20:,.2f} MiB, "
          f"{manifest['rows']['stored']} rows, {manifest['timings_s']['total_s']:.1f} s", file=sys.stderr)
    return 0
