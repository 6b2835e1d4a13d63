"""Every test here runs on both summing paths of the leaf games: numpy (batches below
``COMPILED_MIN_ROWS``, one row at a time in a server that has not loaded numba) and compiled (numba, larger
batches, or any once numba is loaded)."""
import pytest

from explainers.tree_shap import _interventional


@pytest.fixture(autouse=True, params=["numpy", "compiled"])
def summing_path(request, monkeypatch):
    monkeypatch.setattr(_interventional, "COMPILED_MIN_ROWS", 0 if request.param == "compiled" else 10**9)
    monkeypatch.setattr(_interventional, "COMPILED_WHEN_LOADED", request.param == "compiled")
    return request.param
