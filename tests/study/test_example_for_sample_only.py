"""The bundled example study is written for the bundled sample: a user's own binary model with the same class
names must not be refused at start because the example's declared truths do not fit *their* model (after
the example became listed on a fresh install, every user server with study mode refused to start)."""
import dataclasses

import pytest
from sklearn.dummy import DummyClassifier

from app.serve.study_check import check_study_files, check_truth
from study import runtime
from study.schema import load_study
from workspace.errors import CandorError


def test_a_user_model_with_the_sample_classes_starts_and_the_sample_is_still_checked(sample_workspace):
    ws = sample_workspace
    assert "reliance-breast-cancer" in runtime.list_studies() and runtime.is_example("reliance-breast-cancer")
    mine = DummyClassifier(strategy="most_frequent").fit(ws.X.iloc[ws.train_idx], ws.y[ws.train_idx])
    user = dataclasses.replace(ws, model=mine, adapter=None, metadata={}, name="mine.csv")
    example = load_study(runtime.study_path("reliance-breast-cancer"))
    with pytest.raises(CandorError, match="declares model_correct"):
        check_truth(example, user)  # the example does not describe this model ...
    check_study_files(user)  # ... so it is not checked against it at start (served, it is refused)
    check_study_files(ws)  # the sample itself: the example's truths hold
