"""A checked, opened store: :func:`open_store` refuses what does not match, :class:`Store` serves it.

Nothing is read twice: every file is opened once at open (a regular file inside the store, no symbolic
link), hashed, and what is served comes from that check: JSON and ``row_meta.parquet`` are parsed from the
exact bytes hashed; arrays are memory-mapped read-only from the same open descriptor (every process that
opens the same store shares one copy through the page cache). A memory map shows later writes to the
same file, so a store is never rewritten in place: ``python -m app build`` writes a sibling folder and
renames it over ``--out`` (SECURITY.md). Rows added live (``added/``) are checked each time they are read.
"""
from __future__ import annotations

import json
import logging
import math
import os
import stat
from pathlib import Path

import numpy as np

from workspace.errors import CandorError
from workspace.safe_files import read_bounded
from . import codec
from .format import MAX_ADDED_ROW_BYTES
from .manifest import check_files, check_hashes, read_manifest
from .packed import pack_panels
from .row_meta import RowMeta, check_row_meta
from .structure import check_arrays, check_documents, parse_json
from .write import atomic_write, json_bytes

log = logging.getLogger(__name__)


def workspace_key(ws) -> dict:
    """What a store must agree with to serve a :class:`~workspace.workspace.Workspace`: target, explained
    class, rows and columns (a class switch in the navbar makes another workspace: served live)."""
    return {"target": str(ws.target), "positive_class": str(ws.positive_class), "n_rows": int(len(ws.X)),
            "columns": list(map(str, ws.X.columns))}


class Store:
    """An opened store (made by :func:`open_store`, which checks it first).

    Parameters
    ----------
    folder : Path
    manifest : dict
        The checked manifest.
    rows : ndarray
        (N,) int64, the stored rows, strictly increasing.
    arrays : dict of str to ndarray
        The other arrays by name without ``.npy``, dtypes and shapes checked (:mod:`store.structure`).
    meta : RowMeta or None
        Each stored row's ``row_meta.parquet`` entries, parsed and checked when asked (None: no stored rows).
    documents : dict of str to dict
        The JSON files, parsed from the bytes hashed at open.
    results : dict of str to object, optional
        The global methods' stored results by method name, decoded and checked at open
        (:func:`store.structure.check_documents`).
    """

    def __init__(self, folder: Path, manifest: dict, rows: np.ndarray, arrays: dict, meta: RowMeta | None,
                 documents: dict, results: dict | None = None) -> None:
        self.folder, self.manifest = Path(folder), manifest
        self.rows, self._arrays, self._meta, self._documents = rows, arrays, meta, documents
        self._results = dict(results or {})
        self.columns = list(manifest["workspace"]["columns"])
        self._read_only_warned = False

    # ---- what the services ask -------------------------------------------------------------------
    def applies_to(self, ws) -> bool:
        """Whether this store was built for ``ws`` (same target, class, rows and columns)."""
        return self.manifest.get("workspace") == workspace_key(ws)

    def mismatch(self, ws) -> str:
        """Why this store does not serve ``ws``, in one clause ("" if it does: :meth:`applies_to`).

        Columns named otherwise (same count, same target, class and rows) are a features file's display
        names (:mod:`workspace.feature_names`). They are not translated: the stored results carry the names
        and value formats of the features file read at build also as text (LIME's ``conditions``, SHAP's
        ``feature_labels``, rules), which no renaming makes sound; the store is refused instead.
        """
        built, now = self.manifest.get("workspace") or {}, workspace_key(ws)
        if built == now:
            return ""
        for key, what in (("target", "target"), ("positive_class", "explained class"), ("n_rows", "row count")):
            if built.get(key) != now[key]:
                return f"it was built for {what} {built.get(key)!r}, this workspace's is {now[key]!r}"
        old, new = [str(c) for c in built.get("columns") or ()], now["columns"]
        renamed = [(a, b) for a, b in zip(old, new) if a != b]
        if len(old) != len(new) or not renamed:
            return f"it was built for {len(old)} columns, this workspace has {len(new)}"
        features = getattr(ws, "features", None)
        by = f"the features file {features.source} is read now" if features is not None and features.source \
            else "no features file is read now"
        return (f"its columns are named as when it was built ({renamed[0][0]!r}, this workspace reads "
                f"{renamed[0][1]!r}; {len(renamed)} of {len(new)} named otherwise: {by}); a store keeps the names "
                "and value formats its results were written with (LIME's conditions, value labels): build it again "
                "(python -m app build) with the same features file in place")

    def info(self, key: str, default=None):
        """A value of the manifest's ``facts`` (e.g. ``shap_exact``, ``shap_sums_children``)."""
        return self.manifest.get("facts", {}).get(key, default)

    def _index(self, row: int) -> int | None:
        i = int(np.searchsorted(self.rows, row))
        return i if i < len(self.rows) and int(self.rows[i]) == row else None

    def explanation(self, method: str, row: int):
        """The stored :class:`~explainers.Explanation` of ``row`` by ``method`` (one of
        :data:`store.format.METHODS`), or None.

        Raises
        ------
        CandorError
            If its ``row_meta.parquet`` entry, parsed now (:class:`store.row_meta.RowMeta`), is not an explanation
            of this table's columns, or a row added live is malformed.
        """
        i = self._index(row)
        if i is not None and self._meta is not None and method in self._meta:
            a = self._arrays
            return codec.join_explanation(a[f"{method}_values"][i], a[f"{method}_se"][i], a[f"{method}_base"][i],
                                          a[f"{method}_prediction"][i], a[f"{method}_feature_values"][i],
                                          self._meta.entry(method, i))
        return self._added(method, row)

    def check_entries(self) -> None:
        """Parse and check every stored row's ``row_meta.parquet`` entry now, not when its row is asked
        (:meth:`store.row_meta.RowMeta.check_all`; the CLI commands that load a ``--store``,
        :func:`app.cli.model_flags.load_workspace`).

        Raises
        ------
        CandorError
            The first entry that is not an explanation of this table's columns.
        """
        if self._meta is not None:
            self._meta.check_all()

    def _added_dir(self, method: str, create: bool) -> Path | None:
        """``added/<method>``, each level a real folder inside the store (never a symbolic link), or None."""
        path = self.folder
        for part in ("added", method):
            path = path / part
            if create and not os.path.lexists(path):
                path.mkdir(mode=0o755, exist_ok=True)
            try:
                st = os.lstat(path)
            except OSError:
                return None
            if not stat.S_ISDIR(st.st_mode):
                raise CandorError(f"store {self.folder}: {path.relative_to(self.folder)} is a symbolic link or not a "
                                  "folder; rows explained live are added only inside the store")
        return path

    def _added(self, method: str, row: int):
        """A row added live, if it is one of this model's and data's, well formed; else None (recomputed).

        Anything wrong with the file (unreadable, too large, not JSON, nested too deep, not an explanation
        of this table's columns, a value not finite) is logged and the row is computed again and rewritten.
        """
        try:
            folder = self._added_dir(method, create=False)
        except CandorError as err:
            log.warning("candor: %s", err)
            return None
        path = folder / f"{int(row)}.json" if folder is not None else None
        if path is None or not os.path.lexists(path):
            return None
        try:
            d = json.loads(read_bounded(path, MAX_ADDED_ROW_BYTES, f"store {self.folder}: added/{method}:",
                                        within=self.folder))
            if not isinstance(d, dict) or d.get("model_sha256") != self.manifest["model"]["sha256"] or \
                    d.get("data_sha256") != self.manifest["data"]["sha256"] or d.get("row") != int(row):
                raise ValueError("not a row added for this model, data and row")
            e = codec.explanation_from_json(d["explanation"])
            if list(e.feature_names) != self.columns or len(e.values) != len(self.columns) or \
                    len(e.feature_values) != len(self.columns):
                raise ValueError("not one value per column of this table")
            numbers = np.array([*e.values, *e.params.get("standard_error", ()), e.base_value, e.prediction], dtype=float)
            with np.errstate(over="ignore", invalid="ignore"):
                gap = float(np.sum(e.values)) + e.base_value - e.prediction  # what the page shows
            if not (np.all(np.isfinite(numbers)) and math.isfinite(gap)):
                raise ValueError("a value, or their sum, is not finite")
            return e
        except Exception as exc:  # noqa: BLE001  whatever is wrong, the row is recomputed and the file rewritten
            log.warning("candor: ignoring %s, recomputing it (%s: %s)", path, type(exc).__name__, str(exc)[:200])
            return None

    def add(self, method: str, row: int, explanation) -> bool:
        """Add a row explained live (``added/<method>/<row>.json``, written atomically); False if not written.

        The folders are made (or found) as real folders inside the store, never through a symbolic link.
        """
        payload = {"row": int(row), "model_sha256": self.manifest["model"]["sha256"],
                   "data_sha256": self.manifest["data"]["sha256"],
                   "explanation": codec.explanation_to_json(explanation)}
        try:
            atomic_write(self._added_dir(method, create=True) / f"{int(row)}.json", json_bytes(payload))
            return True
        except (OSError, CandorError) as exc:
            if not self._read_only_warned:
                log.warning("candor: rows explained live are not added to store %s (%s)", self.folder, exc)
                self._read_only_warned = True
            return False

    def global_importance(self):
        """The global SHAP view (:class:`~explainers.GlobalImportance`) and its row → position map, or None."""
        meta = self.manifest.get("global")
        if not meta or "global_values" not in self._arrays:
            return None
        a = self._arrays
        g = codec.global_from_parts(meta, a["global_values"], a["global_feature_values"], a["global_se"])
        return g, {int(r): i for i, r in enumerate(a["global_rows"])}

    def reproduction(self, method: str) -> dict | None:
        """What recomputing ``method``'s stored values needs (the manifest's ``reproduce`` section), or None.

        For ``"shap"``: ``output_space``, ``units``, ``target``, ``algorithm``, ``seed`` and
        ``background_rows``, the positions in the table of the background rows (int64 array, memory-mapped);
        for ``"lime"``: its settings and ``training_rows``, the rows its sampling statistics come from.
        None for a store built before issue 23 (format version 1 without them).
        """
        section = dict((self.manifest.get("reproduce") or {}).get(method) or {})
        if not section:
            return None
        for key in ("background_rows", "training_rows"):
            if key in section:
                section[key] = self._arrays.get(str(section[key]).removesuffix(".npy"))
                if section[key] is None:
                    return None
        return section

    def result(self, method: str):
        """A global method's stored result (``<method>.json``, :data:`store.format.DOCUMENTS`), or None if this
        store does not hold it (built before the method existed, or without it): computed live then."""
        return self._results.get(method)

    def json(self, name: str):
        """The stored JSON file ``name``, parsed at open from the bytes hashed then, or None if not stored."""
        return self._documents.get(name)

    def array(self, key: str) -> np.ndarray | None:
        """A stored array by its name without ``.npy`` (memory-mapped, read-only), or None."""
        return self._arrays.get(key)


def open_store(folder: str | Path, *, model_sha256: str, data_sha256: str, max_bytes: int) -> Store:
    """Open the store in ``folder`` after checking it against the model and data it is to serve.

    Parameters
    ----------
    folder : path
    model_sha256, data_sha256 : str
        SHA-256 of the model file and of the data (:mod:`store.hashes`).
    max_bytes : int
        Largest total size of the store's files (``CANDOR_MAX_STORE_MB``), checked before reading them.

    Raises
    ------
    CandorError
        One line: not a store, another version, another model or data, a file missing or tampered
        with (size or SHA-256 other than the manifest's), a symbolic link or not a regular file, over the
        size limit, or any part not of the format's structure (:mod:`store.structure`).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CandorError(f"store {folder}: no such folder")
    manifest = read_manifest(folder)
    check_hashes(folder, manifest, model_sha256, data_sha256)
    if not isinstance(manifest.get("workspace"), dict) or not isinstance(manifest["workspace"].get("columns"), list):
        raise CandorError(f"store {folder}: the manifest does not say which table it explains")
    loaded = check_files(folder, manifest, max_bytes)
    rows, arrays = check_arrays(folder, manifest, loaded)
    meta = check_row_meta(folder, loaded["row_meta.parquet"], rows, manifest["workspace"]["columns"], max_bytes) \
        if len(rows) else None
    json_names = [name for name in loaded if name.endswith(".json")]
    documents = {name: parse_json(folder, name, loaded.pop(name)) for name in json_names}  # bytes let go as parsed
    pack_panels(documents)  # the row panels' texts compressed: most of what a store's documents hold
    results = check_documents(folder, documents, manifest["workspace"]["columns"])
    return Store(folder, manifest, rows, arrays, meta, documents, results)


def open_for(settings, ws) -> Store:
    """The store ``settings.store`` names, checked against the model and data ``settings`` name (``ws`` loaded
    from them) and against ``settings.max_store_mb``.

    Raises
    ------
    CandorError
        As :func:`open_store`; or a store for these files that does not serve ``ws`` (another target,
        class or row count, or columns named otherwise by a features file: :meth:`Store.mismatch`), which
        would otherwise be skipped without a word and every result computed live.
    """
    from .hashes import source_hashes

    model_sha, data_sha = source_hashes(settings, ws)
    opened = open_store(settings.store, model_sha256=model_sha, data_sha256=data_sha,
                        max_bytes=int(settings.max_store_mb * 2**20))
    reason = opened.mismatch(ws)
    if reason:
        raise CandorError(f"store {settings.store} does not serve this workspace: {reason}")
    return opened
