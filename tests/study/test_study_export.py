"""CSV and Parquet exports equal the database, value for value; CSV cells are injection-safe."""

from __future__ import annotations

import csv

import pytest

from study import export, store
from study.db import open_database
from study.models import TABLES
from study.simulate import run_participant


@pytest.fixture
def filled(engine, study):
    store.register_study(engine, study)
    for i in range(4):
        run_participant(engine, study, seed=i, stratum="low" if i % 2 else "high", stop_after=None if i else 3)
    p, _ = store.enrol(engine, study, stratum="low")
    nasty = store.TrialContext(model_prediction="benign", truth="benign", explanation_id="=HYPERLINK(\"x\")",
                               explanation_parent_id="", operators=["-top_k", "'q", "@r"], fidelity=-0.125,
                               fidelity_metric="+r2\r\nline", complexity={"k": [1, -2.5], "\tx": None})
    store.record_trial(engine, study, p, trial_index=0, phase="initial", response="benign", context=nasty,
                       rt_ms=float("inf"), confidence=1e-300)
    return engine


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_equals_database(filled, tmp_path, fmt):
    write = export.export_csv if fmt == "csv" else export.export_parquet
    read = export.read_csv if fmt == "csv" else export.read_parquet
    paths = write(filled, tmp_path)
    assert [p.name for p in paths] == [f"{t.name}.{fmt}" for t in TABLES]
    for table, path in zip(TABLES, paths):
        db_rows = export.table_rows(filled, table)
        assert db_rows, table.name
        assert read(path, table) == db_rows


def test_export_restores_into_a_fresh_database(filled, tmp_path):
    export.export_csv(filled, tmp_path / "csv")
    fresh = open_database(f"sqlite:///{tmp_path / 'restored.sqlite3'}")
    try:
        for table in TABLES:
            export.import_rows(fresh, table, export.read_csv(tmp_path / "csv" / f"{table.name}.csv", table))
        for table in TABLES:
            assert export.table_rows(fresh, table) == export.table_rows(filled, table)
    finally:
        fresh.dispose()


def test_export_of_one_study_only(filled, tmp_path, study):
    export.export_parquet(filled, tmp_path, study_id="no-such-study")
    for table in TABLES:
        assert export.read_parquet(tmp_path / f"{table.name}.parquet", table) == []
    export.export_csv(filled, tmp_path, study_id=study.id, tables=["participants"])
    assert len(export.read_csv(tmp_path / "participants.csv", "participants")) == 5


def test_csv_cells_cannot_start_a_formula(filled, tmp_path):
    export.export_csv(filled, tmp_path)
    with (tmp_path / "trial_log.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    nasty = rows[-1]
    assert nasty["explanation_id"] == "'=HYPERLINK(\"x\")"
    assert nasty["explanation_parent_id"] == "'"  # empty string, not NULL
    assert nasty["fidelity_metric"] == "'+r2\r\nline"
    assert nasty["operators"] == "[\"-top_k\",\"'q\",\"@r\"]"
    assert nasty["fidelity"] == "-0.125"  # typed numbers are not prefixed
    assert nasty["rt_ms"] == "inf" and nasty["confidence"] == "1e-300"
    assert rows[0]["explanation_parent_id"] == ""  # NULL
    for row in rows:
        for name, cell in row.items():
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), (name, cell)


@pytest.mark.parametrize("value,cell", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("'already", "''already"), ("", "'"), ("plain", "plain"), ("a=b", "a=b"),
])
def test_escape_round_trip(value, cell):
    assert export.escape_text(value) == cell
    assert export.unescape_text(cell) == value
