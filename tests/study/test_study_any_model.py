"""Issue 26: a study runs on any model the server loads, and its participants read the values the analyst reads.

A Titanic-like pipeline (one-hot categories, a numeric age with a unit from the features file) is loaded as the
server loads it (``load_user_workspace``); the participant page's feature table shows the categories' levels
("female", "C") and the features file's names and units ("Age" "29.0 years"), never the integer codes the model's
encoded table holds, exactly as the Local page's row values (``services.local_view(row).labels``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import skops.io as sio
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from app import services
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import STUDY, app_once, serve_study, submit

STUDY_TEXT = """
id: trust-pilot
title: Titanic
consent_version: "1"
consent_text: Consent.
instructions: Predict.
model: {id: titanic, kind: tabular, outputs: ["no", "yes"]}
stimuli: {rows: [0, 1, 2, 3]}
conditions:
  - {id: prediction, explanation: prediction}
  - {id: descriptive, explanation: descriptive}
randomisation: {seed: 1}
tasks: [decision_with_advice]
questionnaires: []
"""


def titanic_pair(folder):
    """A one-hot pipeline over sex, deck, embarked and age; its table and features file written to ``folder``."""
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"sex": rng.choice(["female", "male"], n), "deck": rng.choice(list("ABCDEFG"), n),
                          "embarked": rng.choice(["C", "Q", "S"], n), "age": rng.integers(1, 80, n).astype(float)})
    frame.loc[:3, ["sex", "deck", "embarked", "age"]] = [["female", "C", "S", 29.0], ["male", "G", "Q", 54.0],
                                                          ["female", "A", "C", 8.0], ["male", "E", "S", 41.0]]
    logit = 1.5 * (frame.sex == "female") - 0.02 * frame.age + rng.normal(0, 0.5, n)
    frame["survived"] = np.where(logit > 0, "yes", "no")
    cats = ["sex", "deck", "embarked"]
    model = Pipeline([("prep", ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cats)],
                                                 remainder="passthrough")),
                      ("clf", LogisticRegression(max_iter=500))]).fit(frame.drop(columns="survived"), frame.survived)
    sio.dump(model, folder / "titanic.skops")
    frame.to_csv(folder / "titanic.csv", index=False)
    (folder / "titanic.csv.features.yaml").write_text("age: {name: Age, unit: years}\nsex: Sex\n", encoding="utf-8")
    return folder / "titanic.skops", folder / "titanic.csv", frame


def _cells(component) -> list[str]:
    """The texts of the participant page's feature table, in order."""
    out = []

    def walk(c):
        if isinstance(c, (list, tuple)):
            for x in c:
                walk(x)
            return
        if getattr(c, "className", None) == "study-features":
            for tr in c.children.children:
                out.append(tuple(td.children for td in tr.children))
            return
        ch = getattr(c, "children", None)
        if ch is not None and not isinstance(ch, str):
            walk(ch)
    walk(component)
    return out


def test_categorical_model_shows_levels_and_units_on_the_participant_page(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app.views.study import render
    from workspace.workspace import load_user_workspace

    model, data, frame = titanic_pair(tmp_path)
    app_once()  # the app over the sample, as every study test; then the user's pair, as --model/--data/--target
    before = services.workspace()
    ws = load_user_workspace(model, data, "survived")
    services.init(ws, warm=False)
    try:
        serve_study(db_url, tmp_path, monkeypatch, text=STUDY_TEXT)
        token, err = submit(None, "consent", None, {"consent": ["yes"]})
        assert err == "" and token
        assert submit(token, 0, "instructions") == (token, "")
        cells = dict(_cells(render(STUDY, token)))
        row = next(r for r in range(4) if dict(zip(cells, cells.values())) ==
                   dict(zip(ws.X.columns, services.row_values(r))))  # the trial's row, as the analyst reads it
        raw = frame.iloc[row]
        assert cells["Sex"] == raw.sex and cells["deck"] == raw.deck and cells["embarked"] == raw.embarked
        number, unit = cells["Age"].split(" ")
        assert (float(number), unit) == (raw.age, "years")
        assert set(cells) == {"Sex", "deck", "embarked", "Age"}
        assert tuple(cells.values()) == services.local_view(row).labels  # the Local page's row values
        assert not any(v.isdigit() for k, v in cells.items() if k != "Age")  # no category code shown
    finally:
        services.init(before, warm=False)


VALIDATE_TEXT = STUDY_TEXT.replace('outputs: ["no", "yes"]', 'outputs: [died, survived]')


def _coded_pair(folder):
    """The Titanic-like pipeline fitted on a 0/1 target: its classes are named only by ``--classes died,survived``."""
    model, data, frame = titanic_pair(folder)
    frame = frame.assign(survived=(frame.survived == "yes").astype(int))
    pipe = sio.load(model, trusted=sio.get_untrusted_types(file=model))
    pipe.fit(frame.drop(columns="survived"), frame.survived)
    sio.dump(pipe, folder / "coded.skops")
    frame.to_csv(folder / "coded.csv", index=False)
    study = folder / "titanic.yaml"
    study.write_text(VALIDATE_TEXT, encoding="utf-8")
    return folder / "coded.skops", folder / "coded.csv", study


def test_validate_takes_the_servers_flags_and_accepts_classes(tmp_path, capsys):
    from app.__main__ import main

    model, data, study = _coded_pair(tmp_path)
    flags = ["--model", str(model), "--data", str(data), "--target", "survived"]
    assert main(["study", "validate", str(study), *flags, "--classes", "died,survived"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith(f"{study}: valid (model wrong on ") and "of 4 stimuli" in out[-1]
    # without --classes the model's classes are 0 and 1: the file's outputs are refused, as the server refuses them
    assert main(["study", "validate", str(study), *flags]) == 2
    assert "died" in capsys.readouterr().out


def test_power_and_validate_name_the_same_flags_as_the_server(capsys):
    from app.__main__ import _parser, main

    server = {a.dest for a in _parser()._actions} - {"help", "host", "port", "text_model"}
    for command in ("validate", "power", "prereg"):
        assert main(["study", command, "--help"]) == 0
        text = capsys.readouterr().out
        missing = {d for d in server if "--" + d.replace("_", "-") not in text and d != "trust_pickle"}
        assert not missing, (command, missing)
    assert main(["study", "--help"]) == 0
    listed = capsys.readouterr().out
    assert all(c in listed for c in ("validate", "power", "prereg", "simulate"))


def test_simulate_writes_into_the_servers_database_and_says_where(tmp_path, monkeypatch, capsys):
    from sqlalchemy import create_engine, text

    from app.__main__ import main

    db = tmp_path / "server.sqlite3"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db}")  # the server's setting (workspace.settings)
    assert main(["study", "simulate", "--participants", "2", "--seed", "3"]) == 0
    err = capsys.readouterr().err
    assert f"responses stored in sqlite:///{db}" in err
    eng = create_engine(f"sqlite:///{db}")
    with eng.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM participants")) == 2
    eng.dispose()
    # a second run into the same database would mix simulated participants with the ones it holds: refused
    assert main(["study", "simulate", "--participants", "2", "--seed", "4"]) == 2
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith(f"candor: error: sqlite:///{db} already holds 2 participants of study")
