"""A checked, opened store: :func:`open_store` refuses what does not match, :class:`Store` serves it.

Arrays are memory-mapped read-only (``numpy.load(mmap_mode="r", allow_pickle=False)``): every process
that opens the same store shares one copy through the operating system's page cache.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from workspace.errors import CandorError
from . import codec
from .format import MAX_ADDED_ROW_BYTES, METHODS
from .manifest import check_files, check_hashes, read_manifest
from .write import atomic_write, json_bytes

log = logging.getLogger(__name__)


def workspace_key(ws) -> dict:
    """What a store must agree with to serve a :class:`~workspace.workspace.Workspace`: target, explained
    class, rows and columns (a class switch in the navbar makes another workspace: served live)."""
    return {"target": str(ws.target), "positive_class": str(ws.positive_class), "n_rows": int(len(ws.X)),
            "columns": list(map(str, ws.X.columns))}


def _load(folder: Path, name: str, shape: tuple) -> np.ndarray:
    try:
        arr = np.load(folder / name, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise CandorError(f"store {folder}: {name} is not a plain .npy array ({exc})") from None
    if arr.dtype.hasobject or len(arr.shape) != len(shape) or any(s is not None and a != s
                                                                  for a, s in zip(arr.shape, shape)):
        raise CandorError(f"store {folder}: {name} has shape {arr.shape} and dtype {arr.dtype}, expected {shape}")
    return arr


class Store:
    """An opened store (made by :func:`open_store`, which checks it first).

    Parameters
    ----------
    folder : Path
    manifest : dict
        The checked manifest.
    """

    def __init__(self, folder: Path, manifest: dict) -> None:
        self.folder, self.manifest = Path(folder), manifest
        files = manifest["files"]
        self.rows = _load(self.folder, "rows.npy", (None,)) if "rows.npy" in files else np.zeros(0, dtype=np.int64)
        n = len(self.rows)
        self._arrays: dict[str, np.ndarray] = {}
        for name in files:
            if name.endswith(".npy") and name != "rows.npy":
                key = name[:-4]
                rows = None if key.startswith("global_") else n  # per stored row, or per global-view row
                two_d = key.endswith(("values", "_se"))
                self._arrays[key] = _load(self.folder, name, (rows, None) if two_d else (rows,))
        self._meta: dict[str, list] = {}
        if "row_meta.parquet" in files:
            frame = pd.read_parquet(self.folder / "row_meta.parquet")
            self._meta = {m: frame[m].tolist() for m in METHODS if m in frame.columns}
        self._read_only_warned = False

    # ---- what the services ask -------------------------------------------------------------------
    def applies_to(self, ws) -> bool:
        """Whether this store was built for ``ws`` (same target, class, rows and columns)."""
        return self.manifest.get("workspace") == workspace_key(ws)

    def info(self, key: str, default=None):
        """A value of the manifest's ``facts`` (e.g. ``shap_exact``, ``shap_sums_children``)."""
        return self.manifest.get("facts", {}).get(key, default)

    def _index(self, row: int) -> int | None:
        i = int(np.searchsorted(self.rows, row))
        return i if i < len(self.rows) and int(self.rows[i]) == row else None

    def explanation(self, method: str, row: int):
        """The stored :class:`~explainers.Explanation` of ``row`` by ``method`` ("shap", "lime"), or None."""
        i = self._index(row)
        if i is not None and method in self._meta:
            a = self._arrays
            return codec.join_explanation(a[f"{method}_values"][i], a[f"{method}_se"][i], a[f"{method}_base"][i],
                                          a[f"{method}_prediction"][i], a[f"{method}_feature_values"][i],
                                          self._meta[method][i])
        return self._added(method, row)

    def _added_path(self, method: str, row: int) -> Path:
        return self.folder / "added" / method / f"{int(row)}.json"

    def _added(self, method: str, row: int):
        path = self._added_path(method, row)
        try:
            if not path.is_file() or path.stat().st_size > MAX_ADDED_ROW_BYTES:
                return None
            d = json.loads(path.read_bytes())
            if d.get("model_sha256") != self.manifest["model"]["sha256"] or \
                    d.get("data_sha256") != self.manifest["data"]["sha256"] or d.get("row") != int(row):
                return None
            return codec.explanation_from_json(d["explanation"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("candor: ignoring %s (%s)", path, exc)
            return None

    def add(self, method: str, row: int, explanation) -> bool:
        """Add a row explained live (``added/<method>/<row>.json``, written atomically); False if read-only."""
        payload = {"row": int(row), "model_sha256": self.manifest["model"]["sha256"],
                   "data_sha256": self.manifest["data"]["sha256"],
                   "explanation": codec.explanation_to_json(explanation)}
        try:
            atomic_write(self._added_path(method, row), json_bytes(payload))
            return True
        except OSError as exc:
            if not self._read_only_warned:
                log.warning("candor: store %s is not writable (%s): rows explained live are not added", self.folder, exc)
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

    def json(self, name: str):
        """The stored JSON file ``name`` (checked when the store was opened), or None if not stored."""
        if name not in self.manifest["files"]:
            return None
        return json.loads((self.folder / name).read_bytes())

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
        with (size or SHA-256 other than the manifest's), over the size limit, or a malformed array.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CandorError(f"store {folder}: no such folder")
    manifest = read_manifest(folder)
    check_hashes(folder, manifest, model_sha256, data_sha256)
    check_files(folder, manifest, max_bytes)
    if not isinstance(manifest.get("workspace"), dict) or not isinstance(manifest["workspace"].get("columns"), list):
        raise CandorError(f"store {folder}: the manifest does not say which table it explains")
    return Store(folder, manifest)


def open_for(settings, ws) -> Store:
    """The store ``settings.store`` names, checked against the model and data ``settings`` name (``ws`` loaded
    from them) and against ``settings.max_store_mb``.

    Raises
    ------
    CandorError
        As :func:`open_store`.
    """
    from .hashes import source_hashes

    model_sha, data_sha = source_hashes(settings, ws)
    return open_store(settings.store, model_sha256=model_sha, data_sha256=data_sha,
                      max_bytes=int(settings.max_store_mb * 2**20))
