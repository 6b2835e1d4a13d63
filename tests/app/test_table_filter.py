"""The Model & data table filtered by value (Dash's filter row, read on the server): the rows kept against pandas on
the bundled sample and a real table, the page size bounds kept, and one-line refusals."""
import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from app import services
from app.callbacks.overview import render_table_page
from app.serve.callback_inputs import problem
from app.shell import ids
from workspace.errors import CandorError
from workspace.workspace import load_user_workspace


def test_the_sample_filtered_by_number_and_by_split(sample_workspace, install):
    install(sample_workspace)
    X = sample_workspace.X
    wanted = np.flatnonzero(X["mean radius"].to_numpy() > 15)  # c0 is "mean radius"
    records, columns, page_count, _, note = render_table_page(0, 12, 1, "{c0} s> 15")  # as Chromium's filter row sends
    assert columns[4]["name"] == "mean radius" and columns[4]["type"] == "numeric"
    assert [r["id"] for r in records] == wanted[:12].tolist() and page_count == -(-len(wanted) // 12)
    assert note == f"{len(wanted):,} of 569 rows match the filter · Feature columns 1–20 of 30"
    held = np.intersect1d(np.flatnonzero(X["mean radius"].to_numpy() <= 12), sample_workspace.test_idx)
    assert services.filtered_rows('{c0} le 12 && {_split} scontains "held"').tolist() == held.tolist()
    records, _, pages, _, _ = render_table_page(99, 100, 1, "{c0} > 15")  # a page past the end: the last one
    assert pages == -(-len(wanted) // 100) and [r["id"] for r in records] == wanted[100 * (pages - 1):].tolist()
    records, columns, pages, _, note = render_table_page(0, 12, 1, "{c0} > 1000")
    assert records == [] and pages == 1 and columns  # the filter row stays, so the filter can be cleared
    assert note.startswith("0 of 569 rows match the filter")
    with pytest.raises(CandorError, match=r"^a page of the table holds 1 to 100 rows, not 500$"):
        services.data_page(0, 500, 1, "{c0} > 15")


@pytest.fixture(scope="module")
def student(shared_data, tmp_path_factory):
    """UCI Student Performance: a mother's job (text), absences and age, a pipeline predicting pass (G3 >= 10)."""
    frame = pd.read_csv(shared_data / "student_performance" / "student-por.csv", sep=";")
    frame = frame[["Mjob", "absences", "age"]].assign(passed=np.where(frame.G3 >= 10, "pass", "fail"))
    folder = tmp_path_factory.mktemp("student-table")
    model = Pipeline([("prep", ColumnTransformer([("job", OneHotEncoder(), ["Mjob"])], remainder="passthrough")),
                      ("lr", LogisticRegression(max_iter=1000))]).fit(frame[["Mjob", "absences", "age"]], frame.passed)
    sio.dump(model, folder / "m.skops")
    frame.to_csv(folder / "student.csv", index=False)
    return load_user_workspace(folder / "m.skops", folder / "student.csv", "passed"), frame


def test_a_real_table_filtered_by_text_and_refused_in_one_line(student, install):
    ws, frame = student
    install(ws)
    teacher = np.flatnonzero(frame.Mjob.to_numpy() == "teacher")
    assert services.filtered_rows('{c0} = "teacher"').tolist() == teacher.tolist()
    assert services.filtered_rows('{c0} icontains "TEACH"').tolist() == teacher.tolist()
    both = np.flatnonzero((frame.Mjob.to_numpy() != "teacher") & (frame.absences.to_numpy() >= 10))
    assert services.filtered_rows("{c0} != teacher && {c1} >= 10").tolist() == both.tolist()
    assert services.filtered_rows("{_truth} = fail").tolist() == np.flatnonzero(frame.passed == "fail").tolist()
    for query, line in [("{c0} > 3", "Mjob holds text: filter it with =, != or contains, not >"),
                        ("{c1} > abc", "absences holds numbers: > takes a number, got 'abc'"),
                        ("{c9} = 1", "the table has no column 'c9' to filter"),
                        ("{c1} ~ 3", "cannot filter by '{c1} ~ 3': type a value, or an operator"),
                        ("x" * 3000, "a table filter is text of at most 2,000 characters")]:
        with pytest.raises(CandorError, match="^" + line.replace("{", r"\{").replace("}", r"\}")
                           .replace("(", r"\(").replace(")", r"\)")):
            services.filtered_rows(query)


def test_a_forged_filter_is_refused_before_the_callback_runs():
    declared = {"id": ids.DATA_TABLE, "property": "filter_query"}
    assert problem(declared, "x" * 3000) == "a table filter of 3,000 characters (at most 2,000)"
    assert problem(declared, ["{c0} > 1"]) == "not text (list)" and problem(declared, "{c0} > 1") is None
