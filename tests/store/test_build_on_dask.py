"""A build on a local Dask cluster writes the store a build in one process writes (issue 23: the Adult store's time).

On Dask the build computes what needs no row (the global SHAP view, the global methods, the Persuasive curve, the
surrogates) in its own process while the workers compute the rows (app/cli/build_rows.py::beside_rows), and the
workers draw the row panels (app/cli/build_panels.py::PanelTask). Oracle: the same build in one process, one thing
after another (the path unchanged by that work), compared file by file: every array byte for byte, every document
and row's metadata equal but for the seconds LIME reports (wall clock) and the panels' ``drawn_by`` being the same.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from workspace.settings import Settings

pytest.importorskip("distributed")
ROWS = 7


def _build(folder, client=None):
    from app.cli.build import build

    settings = Settings(warm=False, cache_dir=folder / "cache", state_dir=folder / "state")
    return build(settings, folder / "store", max_rows=ROWS, chunk_rows=3, client=client)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """``(manifest in one process, manifest on Dask, their folders, what the workers held afterwards)``."""
    from app import services
    from app.cli import build_panels
    from store.cluster import client_from_address

    previous = services.state().workspace
    here, there = tmp_path_factory.mktemp("one-process"), tmp_path_factory.mktemp("dask")
    one = _build(here)
    piece = getattr(build_panels, "PIECE_ROWS", None)
    build_panels.PIECE_ROWS = 2  # four pieces of the 7 rows' panels, for both workers
    try:
        with client_from_address("local:2") as client:
            on_dask = _build(there, client)
            held = client.run(lambda: (getattr(build_panels, "_worker_store", ()),
                                       os.environ.get("MALLOC_TRIM_THRESHOLD_")))
    finally:
        build_panels.PIECE_ROWS = piece
    services.use_built_store(None)
    if previous is not None:
        services.init(previous, warm=False)
    yield one, on_dask, here / "store", there / "store", held


def _without_seconds(meta: str) -> dict:
    d = json.loads(meta)
    d.get("params", {}).pop("seconds", None)
    return d


def test_a_dask_build_writes_the_one_process_store(both):
    one, on_dask, here, there, _ = both
    assert on_dask["rows"]["engine"] == "dask" and one["rows"]["engine"] == "single process"
    assert set(one["files"]) == set(on_dask["files"])
    assert {"persuasive_rows.json", "persuasive_global.json", "muse_default.json", "frontier_default.json",
            "permutation_importance.json", "shap_values.npy", "lime_values.npy"} <= set(one["files"])
    for name in sorted(one["files"]):
        if name.endswith(".npy"):
            assert (here / name).read_bytes() == (there / name).read_bytes(), name
        elif name.endswith(".json"):
            assert json.loads((here / name).read_text()) == json.loads((there / name).read_text()), name
    a, b = pd.read_parquet(here / "row_meta.parquet"), pd.read_parquet(there / "row_meta.parquet")
    assert a["row"].tolist() == b["row"].tolist() and a["shap"].tolist() == b["shap"].tolist()
    assert [_without_seconds(m) for m in a["lime"]] == [_without_seconds(m) for m in b["lime"]]
    panels = json.loads((there / "persuasive_rows.json").read_text())["rows"]
    assert len(panels) == ROWS and all('"type":"bar"' in p.replace(" ", "") for p in panels.values())
    for key in ("format_version", "workspace", "facts", "global", "reproduce", "explainers", "skipped"):
        assert one[key] == on_dask[key], key
    assert np.load(there / "rows.npy").tolist() == np.load(here / "rows.npy").tolist()


def test_the_workers_drew_the_panels_and_run_with_glibcs_own_malloc_trimming(both):
    """The panels were drawn on the workers (a worker that drew some installed the store being built), and Dask's
    MALLOC_TRIM_THRESHOLD_ (65536: every array past 128 KiB mapped and unmapped again) is not set there."""
    *_, there, held = both
    assert len(held) == 2
    installed = [i for i, _ in held.values() if i]
    assert installed and all(i[0] == str(there.parent / f".{there.name}.partial") for i in installed)
    assert [trim for _, trim in held.values()] == [None, None]


def test_a_local_cluster_s_workers_do_not_inherit_the_trim_setting_an_earlier_nanny_left(monkeypatch):
    """A Dask nanny sets ``MALLOC_TRIM_THRESHOLD_`` in the environment of the process that runs it ("poisoning the
    process running the Nanny", distributed.nanny), so a second cluster started in one process (a notebook, this
    suite after tests/security's clusters) gave its workers the setting LOCAL_WORKERS leaves out."""
    from store.cluster import client_from_address

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as a default-config nanny leaves it
    with client_from_address("local:1") as client:
        seen = list(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values())
    assert seen == [None]


def test_a_local_cluster_s_housekeeping_wakes_at_most_once_a_second():
    """Dask's event-loop tick (20 ms), memory checks (100 ms) and system monitor (500 ms) woke an idle ``local:2``
    cluster's three processes often enough to take 6.5-7 % of a core (store/cluster.py::LOCAL_WORKERS)."""
    from store.cluster import client_from_address

    def intervals(callbacks) -> dict:
        return {k: callbacks[k].callback_time for k in ("tick", "monitor", "memory_monitor") if k in callbacks}

    with client_from_address("local:1") as client:
        worker = list(client.run(lambda dask_worker: intervals(dask_worker.periodic_callbacks)).values())
        nannies = [intervals(n.periodic_callbacks) for n in client.cluster.workers.values()]
        scheduler = intervals(client.cluster.scheduler.periodic_callbacks)
    assert worker == nannies == [{"tick": 1000, "monitor": 5000, "memory_monitor": 1000}]
    assert scheduler == {"tick": 1000, "monitor": 5000}
