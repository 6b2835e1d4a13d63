"""A store that does not serve the workspace is never skipped silently (new user's finding, 2026-12-01).

A features file renames the columns a store holds: a store built without it is refused at start in one
line naming the file (before, it was skipped and every result computed live: 89 s to ready, not 7 s).
A store that stops applying later (a class switch) is logged, and a report's provenance says whether a
store was read. The store is a :class:`store.read.Store` built from a manifest alone (no arrays): only
its workspace key matters here.
"""
from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from workspace.errors import CandorError
from workspace.feature_names import FeatureFormat, FeatureNames

RAW = ["alcohol", "malic_acid", "proline"]


def _store(folder: Path, columns=RAW, positive_class="class_2"):
    from store.read import Store

    manifest = {"workspace": {"target": "cultivar", "positive_class": positive_class, "n_rows": 4,
                              "columns": list(columns)}, "model": {"sha256": "a" * 64}, "data": {"sha256": "b" * 64}}
    return Store(folder, manifest, np.zeros(0, dtype=np.int64), {}, {}, {})


def _ws(columns=RAW, positive_class="class_2", features=None):
    return SimpleNamespace(target="cultivar", positive_class=positive_class, features=features,
                           X=pd.DataFrame(np.ones((4, len(columns))), columns=list(columns)))


def _open_for(monkeypatch, opened, ws):
    """:func:`store.read.open_for` with the hash and file checks passed (``opened`` is what they open)."""
    import store.hashes
    import store.read

    monkeypatch.setattr(store.hashes, "source_hashes", lambda settings, ws: ("a" * 64, "b" * 64))
    monkeypatch.setattr(store.read, "open_store", lambda folder, **kw: opened)
    return store.read.open_for(SimpleNamespace(store=opened.folder, max_store_mb=1.0), ws)


def test_a_store_built_without_the_features_file_is_refused_at_start_naming_the_file(monkeypatch, tmp_path):
    shown = FeatureNames({"alcohol": FeatureFormat("Alcohol"), "proline": FeatureFormat("Proline")},
                         "wine.csv.features.yaml")
    ws = _ws(["Alcohol", "malic_acid", "Proline"], features=shown)
    with pytest.raises(CandorError) as err:
        _open_for(monkeypatch, _store(tmp_path), ws)
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith(f"store {tmp_path} does not serve this workspace: its columns are named as when it was "
                           "built ('alcohol', this workspace reads 'Alcohol'; 2 of 3 named otherwise: the features "
                           "file wine.csv.features.yaml is read now)")
    # and the other way round: built with the features file, served without it
    with pytest.raises(CandorError, match=r"'Alcohol', this workspace reads 'alcohol'; 2 of 3 named otherwise: "
                                          r"no features file is read now\)"):
        _open_for(monkeypatch, _store(tmp_path, ["Alcohol", "malic_acid", "Proline"]), _ws())


def test_a_store_for_another_class_is_refused_at_start_and_the_matching_one_is_served(monkeypatch, tmp_path):
    with pytest.raises(CandorError, match=r"does not serve this workspace: it was built for explained class "
                                          r"'class_2', this workspace's is 'class_0'$"):
        _open_for(monkeypatch, _store(tmp_path), _ws(positive_class="class_0"))
    same = _store(tmp_path)
    assert _open_for(monkeypatch, same, _ws()) is same


def test_a_class_switch_is_logged_and_provenance_says_whether_a_store_was_read(tmp_path, caplog):
    from app.services import _core

    previous, opened = _core._ws, _store(tmp_path)
    try:
        _core.use_built_store(opened)
        _core.init(_ws(), warm=False)
        assert _core.built_store() is opened
        assert _core.store_note() == f"read from store {tmp_path} (rows without a stored result computed live)"
        with caplog.at_level(logging.WARNING, logger="candor.warmup"):
            _core.init(_ws(positive_class="class_0"), warm=False)  # the navbar's class switch installs this
        assert _core.built_store() is None
        reason = "it was built for explained class 'class_2', this workspace's is 'class_0'"
        assert [r.getMessage() for r in caplog.records if "store" in r.getMessage()] == [
            f"candor: store {tmp_path} is not read for this workspace, its results are computed live: {reason}"]
        assert _core.store_note() == f"computed live: store {tmp_path} not read ({reason})"
        _core.use_built_store(None)
        _core.init(_ws(), warm=False)
        assert _core.store_note() == "computed live (no store given)"
    finally:
        _core.use_built_store(None)
        _core._ws = None
        if previous is not None:
            _core.init(previous, warm=False)


def test_the_report_provenance_names_the_store_it_read(sample_workspace, tmp_path):
    from app.report.provenance import provenance
    from app.services import _core
    from store.read import workspace_key

    section = SimpleNamespace(shap=SimpleNamespace(source="SHAP", params={}), persuasive=None)
    opened = _store(tmp_path)
    opened.manifest["workspace"] = workspace_key(sample_workspace)
    try:
        _core.use_built_store(opened)
        with _core.installed(sample_workspace):
            params = dict(provenance({}, [section], None, 3).parameters)
        assert params["results store"] == f"read from store {tmp_path} (rows without a stored result computed live)"
        _core.use_built_store(None)
        with _core.installed(sample_workspace):
            params = dict(provenance({}, [section], None, 3).parameters)
        assert params["results store"] == "computed live (no store given)"
    finally:
        _core.use_built_store(None)
        _core.init(sample_workspace, warm=False)
