"""The surrogate results cache holds JSON, not pickles, and gives back the same rule sets (issue 14)."""
from __future__ import annotations

import sqlite3

import numpy as np


def test_a_muse_fit_is_cached_as_json_and_read_back_unchanged(sample_workspace, tmp_path, monkeypatch):
    from app.services import surrogates

    monkeypatch.setenv("CANDOR_CACHE_DIR", str(tmp_path))
    params = surrogates.muse_params(max_rules=3, max_width=1, max_neighborhoods=1)
    key = surrogates.fit_muse(params)
    folder = tmp_path / "results-json"
    with sqlite3.connect(folder / "cache.db") as db:  # diskcache's index: how each value is stored
        modes = {row[0] for row in db.execute("SELECT mode FROM Cache")}
    assert modes and 4 not in modes  # diskcache mode 4 = pickled value; JSONDisk writes bytes (mode 2 or 3)
    raw = surrogates._results().get(key)
    assert isinstance(raw, dict) and set(raw) >= {"rule_set", "heldout", "detail"}
    view = surrogates.muse_view(key)
    X_train, y_train, X_eval, y_eval = surrogates._split()
    # the oracle: the decoded rules, applied again, give the stored per-rule held-out agreement
    agree, support = surrogates.rule_agreement(view.rule_set, X_eval, y_eval)
    np.testing.assert_array_equal(agree, view.rule_agreement)
    np.testing.assert_array_equal(support, view.rule_heldout_support)
    assert view.rule_set.to_dict() == raw["rule_set"] and view.detail.to_dict() == raw["detail"]
    assert surrogates.evaluate_rule_set(view.rule_set, X_eval, y_eval).agreement == view.heldout.agreement
