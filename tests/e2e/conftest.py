"""Shared e2e fixtures: one `python -m app` server per session for the bundled sample and one for a real table
(UCI Adult), one headless Chromium per module."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.browser import chromium_driver
from tests.e2e.serving import ROOT, running_app

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

ADULT_ROWS = 1200
ADULT_CATEGORICAL = ["workclass", "marital-status", "occupation", "sex"]
ADULT_NUMERIC = ["age", "education-num", "hours-per-week", "capital-gain"]


SERVED_GROUPS = {"server": "served-sample", "adult_server": "served-adult"}
"""Each session server's tests are marked as one pytest-xdist group (``scripts/test`` runs ``--dist loadgroup``). On
pytest 9.2 with pytest-xdist 3.8 the marks group nothing (xdist writes the group into ``item._nodeid``, which pytest 9
no longer reads), so each worker starts the session servers its tests use and pays their first computations. Grouping
them for real (the group written into the id pytest 9 reads) put every test of the sample's server on one worker:
the clean-clone suite took 21.2 min against 17.3 (stop 40). Left as it is, on purpose."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups into the test ids
def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        served = [group for fixture, group in SERVED_GROUPS.items() if fixture in item.fixturenames]
        if here in item.path.parents and served:
            item.add_marker(pytest.mark.xdist_group(served[0]))  # no test uses both servers


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """Base URL of the app served by ``python -m app`` (the bundled sample), background jobs enabled."""
    studies = tmp_path_factory.mktemp("candor-studies")  # study mode too, so its pages are checked (axe)
    shutil.copy(ROOT / "tests" / "study" / "data" / "small_study.yaml", studies / "trust-pilot.yaml")
    env = {"CANDOR_TEXT_DIR": str(tmp_path_factory.mktemp("candor-text")),
           "CANDOR_CACHE_DIR": str(tmp_path_factory.mktemp("candor-background")),
           "CANDOR_STUDY_DIR": str(studies), "DATABASE_URL": f"sqlite:///{studies / 'study.db'}"}
    with running_app([], env, tmp_path_factory.mktemp("server") / "server.log") as base:
        yield base


@dataclass(frozen=True)
class AdultServed:
    """The Adult app's base URL, the table it serves (``frame``, with ``income``), the model, and the positions of
    the rows it holds out and trains on, split here as the app documents its split (a stratified random 25 %,
    seed 0), so that tests compute the pages' figures on their own."""

    base: str
    frame: pd.DataFrame
    model: object
    held_out: np.ndarray
    train: np.ndarray

    def rows(self, which: str = "held_out") -> tuple[pd.DataFrame, np.ndarray]:
        """The raw features of the held-out (or training) rows and whether each is ``>50K``."""
        part = self.frame.iloc[getattr(self, which)]
        return part.drop(columns="income"), (part.income == ">50K").to_numpy()

    def p(self, X: pd.DataFrame) -> np.ndarray:
        """The model's P(>50K) of raw rows."""
        return self.model.predict_proba(X)[:, list(self.model.classes_).index(">50K")]


@pytest.fixture(scope="session")
def adult_server(tmp_path_factory):
    """``python -m app --model adult.skops --data adult.csv --target income`` (1,200 rows of shared/data's Adult,
    eight features, a one-hot Pipeline of gradient-boosted trees), with its own cache folder: one server for every
    real-table test of the session."""
    import numpy as np
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    from tests.byo.conftest import write_pair
    from tests.shared_data import adult_data

    frame = adult_data().sample(n=ADULT_ROWS, random_state=0).reset_index(drop=True)
    frame = frame[ADULT_CATEGORICAL + ADULT_NUMERIC + ["income"]]
    model = Pipeline([("prep", ColumnTransformer([("c", OneHotEncoder(handle_unknown="ignore"), ADULT_CATEGORICAL)],
                                                 remainder="passthrough")),
                      ("gb", GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0))])
    model.fit(frame.drop(columns="income"), frame.income)
    train, held_out = train_test_split(np.arange(len(frame)), test_size=0.25, random_state=0, stratify=frame.income)
    tmp = tmp_path_factory.mktemp("adult")
    m, d = write_pair(tmp, model, frame, name="adult")
    env = {"CANDOR_CACHE_DIR": str(tmp / "cache"), "CANDOR_TEXT_DIR": str(tmp / "text")}
    with running_app(["--model", str(m), "--data", str(d), "--target", "income"], env, tmp / "server.log",
                     timeout=180) as base:
        yield AdultServed(base, frame, model, np.sort(held_out), np.sort(train))


@pytest.fixture(scope="module")
def browser():
    with chromium_driver(width=1400, height=1000) as driver:
        yield driver
