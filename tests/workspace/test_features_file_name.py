"""A features file named after the data's stem (``wine.features.yaml`` beside ``wine.csv``) is the likely
wrong guess of the documented ``<data file>.features.yaml``: it is not read, and a warning at start names
both (new user's finding, 2026-12-01: before, it was ignored without a word)."""
from __future__ import annotations

import logging

import pytest

from workspace.workspace import load_user_workspace

from .conftest import features_case

COLUMNS = ["mean radius", "mean texture"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory, bc):
    return features_case(tmp_path_factory.mktemp("features-name"), bc, COLUMNS, "data.features.yaml",
                         "mean radius: Radius\n")


def test_a_features_file_named_by_the_data_stem_is_named_in_a_warning_not_read(folder, caplog):
    with caplog.at_level(logging.WARNING, logger="workspace.workspace"):
        ws = load_user_workspace(folder / "model.skops", folder / "data.csv", "diagnosis", torch_options=None)
    line = ("found data.features.yaml beside data.csv but did not read it: Candor reads data.csv.features.yaml "
            "(rename it, or give it with --features-file)")
    assert ws.features is None and list(ws.X.columns) == COLUMNS
    assert [r.getMessage() for r in caplog.records] == [f"candor: {line}"]
    assert f"data.csv: {line}" in ws.notes


def test_the_documented_name_is_read_and_nothing_is_said_about_the_other(folder, caplog, tmp_path):
    import shutil

    for name in ("model.skops", "data.csv", "data.features.yaml"):
        shutil.copy(folder / name, tmp_path / name)
    (tmp_path / "data.csv.features.yaml").write_text("mean texture: Texture\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="workspace.workspace"):
        ws = load_user_workspace(tmp_path / "model.skops", tmp_path / "data.csv", "diagnosis", torch_options=None)
    assert list(ws.X.columns) == ["mean radius", "Texture"]
    assert not [r for r in caplog.records if "features" in r.getMessage()]
