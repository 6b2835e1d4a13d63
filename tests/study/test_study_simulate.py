"""Issue 16: ``python -m app study simulate`` runs simulated participants through the server's own
participant flow and database, and prints the reliance table and one JSON line; the bundled example
(a real scikit-learn dataset, the model wrong on a stated share of trials, descriptive vs persuasive)
validates with no warning.

Oracles: scikit-learn's ``load_breast_cancer`` target and the bundled model's own ``predict`` for the
logged truth and advice; the reliance figures recomputed from the raw trial log with pandas."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import skops.io as sio
from sklearn.datasets import load_breast_cancer
from sqlalchemy import create_engine

from study.cli import main as study_cli
from study.schema import load_study
from workspace.workspace import SAMPLE_MODEL

N = 6


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    import contextlib
    import io

    from app.cli.study_simulate import BUNDLED_EXAMPLE, main

    url = f"sqlite:///{tmp_path_factory.mktemp('sim') / 'sim.sqlite3'}"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["--participants", str(N), "--seed", "7", "--database", url])
    eng = create_engine(url)
    with eng.connect() as conn:
        trials = pd.read_sql("SELECT * FROM trial_log", conn)
        people = pd.read_sql("SELECT * FROM participants", conn)
    eng.dispose()
    return rc, out.getvalue(), trials, people, load_study(BUNDLED_EXAMPLE)


def test_bundled_example_validates_without_warning(capsys):
    from app.cli.study_simulate import BUNDLED_EXAMPLE

    assert study_cli(["validate", str(BUNDLED_EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "warning" not in out and "model wrong on 4 of 12 stimuli (33%)" in out
    study = load_study(BUNDLED_EXAMPLE)
    assert [c.explanation for c in study.conditions] == ["descriptive", "persuasive"]


def test_simulate_goes_through_the_flow_and_prints_the_analysis(run):
    rc, out, trials, people, study = run
    assert rc == 0
    assert len(people) == N and set(people["status"]) == {"completed"}
    assert set(people["condition"]) == {"descriptive", "persuasive"}
    dec = trials[trials["phase"].isin(["initial", "final"])]
    assert len(dec) == N * 12 * 2 and len(trials[trials["phase"] == "attention"]) == N
    assert dec["rt_ms"].notna().all() and dec.loc[dec["phase"] == "final", "confidence"].notna().all()
    # logged truth and advice are the data's and the model's, not the file's
    data = load_breast_cancer(as_frame=True)
    model = sio.load(SAMPLE_MODEL, trusted=sio.get_untrusted_types(file=SAMPLE_MODEL))
    rows = {s.id: s.row for s in study.stimuli}
    names = {0: "benign", 1: "malignant"}
    for item, g in dec.groupby("item_id"):
        r = rows[item]
        assert set(g["truth"]) == {names[1 - int(data.target.iloc[r])]}
        assert set(g["model_prediction"]) == {names[int(model.predict(data.data.iloc[[r]])[0])]}
    # the JSON line: the reliance figures recomputed from the raw log, without the participants the
    # study's pre-declared rule excludes (any failed attention check: an answer other than 'blue')
    got = json.loads(out.strip().splitlines()[-1])
    failed = set(trials.loc[(trials["phase"] == "attention") & (trials["response"] != "blue"), "participant_id"])
    dec = dec[~dec["participant_id"].isin(failed)]
    wide = dec.pivot_table(index=["participant_id", "trial_index"], columns="phase", values="response",
                           aggfunc="first").join(
        dec[dec["phase"] == "final"].set_index(["participant_id", "trial_index"])[
            ["condition", "truth", "model_prediction"]])
    for cond, g in wide.groupby("condition"):
        follow = g["final"] == g["model_prediction"]
        wrong = g["model_prediction"] != g["truth"]
        moved = g["initial"] != g["model_prediction"]
        want = {"switch_fraction": (follow & moved).sum() / moved.sum(), "over_reliance": follow[wrong].mean(),
                "under_reliance": (~follow[~wrong]).mean(), "accuracy": (g["final"] == g["truth"]).mean()}
        for m, v in want.items():
            est, lo, hi = got[cond][m]
            assert est == pytest.approx(v, abs=1e-4) and 0 <= lo <= est <= hi <= 1, (cond, m)
    assert "switch_fraction" in out and "95% Wilson" in out
    assert "mixed model, over-reliance persuasive vs descriptive: odds ratio" in out
