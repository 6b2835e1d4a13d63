"""Duplicate column names are reported once each, sorted (counted in one pass, issue 27: ``header.count`` per name
was 10,000² steps on a 10,000-column CSV). Oracle: COMPAS's own header (``decile_score`` and ``priors_count`` twice)
and a wide header whose repeated names are known."""
from __future__ import annotations

from tests.shared_data import compas_csv
from workspace.tables import read_table


def test_compas_duplicates_are_named():
    path = compas_csv()
    header = path.read_text().split("\n", 1)[0].split(",")
    want = sorted({h for h in header if header.count(h) > 1})
    assert want == ["decile_score", "priors_count"]
    notes: list[str] = []
    df = read_table(path, notes)
    assert f"{path.name}: duplicate column names; the later copies are renamed 'decile_score' -> 'decile_score.1', " \
           "'priors_count' -> 'priors_count.1'" in notes
    assert {"decile_score.1", "priors_count.1"} <= set(df.columns)


def test_a_wide_header_names_each_repeat_once(tmp_path):
    names = [f"c{j}" for j in range(3000)] + ["c7", "c2999", "c7", "c10"]
    (tmp_path / "w.csv").write_text(",".join(names) + "\n" + ",".join("1" for _ in names) + "\n")
    notes: list[str] = []
    read_table(tmp_path / "w.csv", notes)
    assert notes == ["w.csv: duplicate column names; the later copies are renamed 'c10' -> 'c10.1', "
                     "'c2999' -> 'c2999.1', 'c7' -> 'c7.1'"]
