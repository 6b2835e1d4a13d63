"""A store of every row of the table (issue 27: 20 viewers over any row of the table, app/cli/stored_rows.py).

A scaled logistic regression on 6 breast-cancer columns and the table's first 80 rows is saved as a user's files and
built with the default ``--rows``: a table of at most 1,000 rows is stored whole. Oracles: the table's own size and
split (80 rows, fewer held out), the manifest, and a server of the store that answers a training row's Descriptive
view and Persuasive panels with the live SHAP and LIME paths refused. The sample's own sizes (569 rows, 143 held
out) check which rows a server prepares ahead.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from workspace.errors import CandorError

COLUMNS = ["mean radius", "mean texture", "mean smoothness", "worst area", "worst concavity", "worst symmetry"]
N_ROWS = 80


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``(manifest, workspace, store folder, settings)``; the services are put back afterwards."""
    import skops.io as sio
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from workspace.settings import Settings

    from tests.store.building import built_sample_store

    folder = tmp_path_factory.mktemp("whole-table")
    data = load_breast_cancer(as_frame=True).frame[[*COLUMNS, "target"]].iloc[:N_ROWS]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(data[COLUMNS], data["target"])
    sio.dump(model, folder / "lr.skops")
    data.to_csv(folder / "table.csv", index=False)
    settings = Settings(model=folder / "lr.skops", data=folder / "table.csv", target="target", warm=False,
                        cache_dir=folder / "cache", state_dir=folder / "state")
    with built_sample_store(folder, settings, chunk_rows=32, skip=("persuasive", "surrogates", "permutation_importance",
                                                                   "partial_dependence")) as (manifest, ws, store):
        yield manifest, ws, store, dataclasses.replace(settings, store=store)


def test_a_small_table_is_stored_whole_by_default_and_the_manifest_says_so(built):
    manifest, ws, folder, _ = built
    assert len(ws.X) == N_ROWS and len(ws.test_idx) < N_ROWS
    assert np.load(folder / "rows.npy", allow_pickle=False).tolist() == list(range(N_ROWS))
    rows = manifest["rows"]
    assert (rows["stored"], rows["which"], rows["table"], rows["held_out"]) == (N_ROWS, "table", N_ROWS,
                                                                                 len(ws.test_idx))
    assert not [line for line in manifest["not_stored"] if line.startswith("rows ")]
    assert len(json.loads((folder / "persuasive_rows.json").read_text())["rows"]) == N_ROWS  # every row drawn


def test_every_row_of_a_whole_table_store_is_served_without_computing(built, monkeypatch):
    from app import services
    from app.services import tabular
    from app.views import stored_panels
    from store.read import open_for

    _, ws, _, settings = built
    services.use_built_store(open_for(settings, ws))
    services.init(ws, warm=False)

    def refuse(*_):
        raise CandorError("computed live")

    monkeypatch.setattr(tabular, "_live_shap_row", refuse)
    monkeypatch.setattr(tabular, "_live_lime_row", refuse)
    assert services.prepared_rows() == list(range(N_ROWS))
    train_row = int(ws.train_idx[0])
    view = services.local_view(train_row)
    assert view.shap.feature_names == view.lime.feature_names and len(view.shap.values) == len(COLUMNS)
    panels = stored_panels.stored("persuasive", train_row, stored_panels.controls("persuasive"))
    assert panels is not None and "computed live" not in json.dumps(panels)


class _WholeTable:
    """Stands in for an opened store of every row of ``ws``'s table (what :func:`prepared_rows` reads of it)."""

    def __init__(self, ws):
        self.rows, self.folder = np.arange(len(ws.X), dtype=np.int64), Path("whole-table")

    def applies_to(self, ws) -> bool:
        return True


def test_which_rows_a_server_prepares_ahead(sample_workspace, monkeypatch):
    """Every row of a whole table of at most 1,000 rows (the sample's 569); beyond, the held-out rows "Random row"
    picks from (the sample's 143), as for a store of the held-out rows."""
    from app import services
    from app.services import row_pool

    ws = sample_workspace
    with services.overridden(services.ServiceState(ws, opened_store=_WholeTable(ws))):
        assert services.prepared_rows() == list(range(569))
        monkeypatch.setattr(row_pool, "WHOLE_TABLE_MAX", 568)
        assert services.prepared_rows() == sorted(int(r) for r in ws.test_idx) and len(ws.test_idx) == 143


def test_stored_rows_option_and_default_rule(sample_workspace, monkeypatch):
    from app.cli import stored_rows

    ws = sample_workspace
    held = sorted(int(r) for r in ws.test_idx)
    rows, which = stored_rows.chosen(ws, None)
    assert which == "table" and rows.tolist() == list(range(569))
    assert stored_rows.chosen(ws, "table")[0].tolist() == list(range(569))
    assert [stored_rows.chosen(ws, "held-out")[0].tolist(), stored_rows.chosen(ws, "held-out")[1]] == [held, "held-out"]
    first = stored_rows.chosen(ws, 5)
    assert first[0].tolist() == sorted(int(r) for r in ws.test_idx[:5]) and first[1] == "first 5 held-out"
    assert stored_rows.chosen(ws, 500)[1] == "held-out"
    monkeypatch.setattr(stored_rows, "WHOLE_TABLE_MAX", 568)
    assert stored_rows.chosen(ws, None)[1] == "held-out"
    assert [stored_rows.parse(t) for t in ("table", "held-out", "0", "12")] == ["table", "held-out", 0, 12]
    for bad in ("all", "-1", "1.5", "", "١٢"):
        with pytest.raises(argparse.ArgumentTypeError, match="takes 'table', 'held-out' or a number"):
            stored_rows.parse(bad)


def test_a_bad_rows_value_is_one_line_and_status_2(tmp_path, capsys):
    from app.cli import build as build_cli

    with pytest.raises(SystemExit) as stop:
        build_cli.main(["--out", str(tmp_path / "s"), "--rows", "all"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == ("candor: error: --rows takes 'table', 'held-out' or a number of held-out rows, "
                                       "got 'all'\n")
