"""Session fixtures: real data (scikit-learn's breast cancer), small fitted models, the bundled sample."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from sample_models.common import breast_cancer, split_indices
from tests.shared_data import shared_data_dir


@pytest.fixture(scope="session")
def bc():
    """(X, y, train_idx, test_idx) of the 569 x 30 breast cancer table (1 = malignant)."""
    X, y = breast_cancer()
    train, test = split_indices(y)
    return X, y, train, test


@pytest.fixture(scope="session")
def gb_model(bc):
    X, y, train, _ = bc
    return GradientBoostingClassifier(n_estimators=40, max_depth=2, random_state=0).fit(X.iloc[train], y.iloc[train])


@pytest.fixture(scope="session")
def scaled_logistic(bc):
    """A logistic regression on standardised features, and the standardised frame."""
    X, y, train, _ = bc
    Xs = pd.DataFrame(StandardScaler().fit_transform(X), columns=X.columns)
    return LogisticRegression(max_iter=2000, random_state=0).fit(Xs.iloc[train], y.iloc[train]), Xs


@pytest.fixture(scope="session")
def sample_workspace():
    """The bundled sample (built by ``python -m sample_models``), installed in the services."""
    from app import services
    from workspace.workspace import load_sample_workspace

    ws = load_sample_workspace()
    services.init(ws, warm=False)
    return ws


@pytest.fixture(scope="session")
def toy_transformer():
    """An untrained 2-layer, 2-head tabular transformer over 5 features (seeded)."""
    import torch

    from sample_models.tabular_transformer import TabularTransformer

    torch.manual_seed(0)
    return TabularTransformer(n_features=5, d_model=8, n_layers=2, n_heads=2).eval()


@pytest.fixture(scope="session")
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session")
def shared_data():
    """The real public data folder (``shared/data``); tests that need it skip, saying so, where it is absent."""
    folder = shared_data_dir()
    if folder is None:
        pytest.skip("shared/data not found (set CANDOR_SHARED_DATA to its folder)")
    return folder


@pytest.fixture(autouse=True)
def _own_launch_selection_file(tmp_path_factory, monkeypatch):
    """Each test gets its own launch selection file (``CANDOR_STATE_DIR``).

    ``selection.install`` writes the launch's file and every request syncs with it, so a test that
    switched the model (an upload, a class switch) would otherwise switch the in-process server of
    every later test too.
    """
    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def install():
    """Install a workspace in the services for one test (``install(ws)``), then put back whatever was there."""
    from app import services

    previous = services.state().workspace
    yield lambda ws: services.init(ws, warm=False)
    if previous is not None:
        services.init(previous, warm=False)
