"""A torch sidecar's ``module:Class`` is checked against the module's source before anything is imported (issue 27).

``{"class": "this:Zen"}`` used to import ``this`` (printing the Zen of Python) before saying it has no
class ``Zen``: naming a module ran it. Now the module is found on the path without being run, the
class looked up in its source with :mod:`ast`, and a standard-library or installed-package module
(other than ``torch.nn``) is imported only with ``--trust-model-code``.
"""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import torch

from workspace.errors import CandorError
from workspace.torch_files import load_torch_model

from .torch_modules import TabularMLP


def _model(folder, spec: str, kwargs: dict | None = None, module: torch.nn.Module | None = None):
    """A state dict ``m.pt`` (a 3-feature TabularMLP's unless ``module``) and its sidecar naming ``spec``."""
    torch.manual_seed(0)
    torch.save((module or TabularMLP(3, 2)).state_dict(), folder / "m.pt")
    sidecar = {"class": spec, "kwargs": kwargs or {"n_features": 3, "n_outputs": 2}, "classes": ["a", "b"]}
    (folder / "m.pt.json").write_text(json.dumps(sidecar))
    return folder / "m.pt"


@pytest.fixture
def no_this(monkeypatch):
    """``this`` not imported yet (importing it prints the Zen of Python once per process)."""
    monkeypatch.delitem(sys.modules, "this", raising=False)


@pytest.mark.parametrize("trust", [False, True])
def test_a_missing_class_is_named_without_running_its_module(tmp_path, capsys, no_this, trust):
    with pytest.raises(CandorError, match=r"^m\.pt: module 'this' has no class 'Zen' \(checked in this\.py, which "
                                          r"was not imported\)$"):
        load_torch_model(_model(tmp_path, "this:Zen"), trust_code=trust)
    assert capsys.readouterr().out == "" and "this" not in sys.modules


def test_a_standard_library_module_needs_the_trust_flag(tmp_path, capsys, no_this):
    with pytest.raises(CandorError) as err:
        load_torch_model(_model(tmp_path, "this:s"))  # ``s`` exists: a string
    assert "module 'this' is in the Python installation or its installed packages" in str(err.value)
    assert "--trust-model-code" in str(err.value)
    assert capsys.readouterr().out == "" and "this" not in sys.modules


def test_an_installed_package_needs_the_trust_flag(tmp_path):
    with pytest.raises(CandorError, match="module 'sklearn' is in the Python installation or its installed packages"):
        load_torch_model(_model(tmp_path, "sklearn.neural_network:MLPClassifier"))


def test_a_builtin_module_is_not_a_source_file(tmp_path):
    with pytest.raises(CandorError, match=r"module 'sys' is not a Python source file \(built-in\)"):
        load_torch_model(_model(tmp_path, "sys:Nope"))


def test_the_operators_package_is_not_run_for_a_class_it_lacks(tmp_path, capsys, monkeypatch):
    code = tmp_path / "code"
    (code / "zenpkg").mkdir(parents=True)
    (code / "zenpkg" / "__init__.py").write_text("print('package ran')\n")
    (code / "zenpkg" / "nets.py").write_text("print('module ran')\nfrom tests.byo.torch_modules import TabularMLP\n"
                                             "class Wrapped(TabularMLP):\n    pass\n")
    monkeypatch.syspath_prepend(str(code))
    for name in ("zenpkg", "zenpkg.nets"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(CandorError, match="module 'zenpkg.nets' has no class 'Missing'"):
        load_torch_model(_model(tmp_path, "zenpkg.nets:Missing"))
    assert capsys.readouterr().out == "" and "zenpkg" not in sys.modules
    model = load_torch_model(_model(tmp_path, "zenpkg.nets:Wrapped"))  # the operator's own code: imported, run
    assert capsys.readouterr().out == "package ran\nmodule ran\n"
    assert model.predict_proba(np.zeros((2, 3))).shape == (2, 2)


@pytest.mark.parametrize("spec, kwargs, module", [
    ("tests.byo.torch_modules:TabularMLP", None, None),
    ("torch.nn:Linear", {"in_features": 3, "out_features": 2}, torch.nn.Linear(3, 2)),  # torch's own, allowed
])
def test_a_valid_sidecar_still_loads(tmp_path, spec, kwargs, module):
    model = load_torch_model(_model(tmp_path, spec, kwargs, module))
    proba = model.predict_proba(np.zeros((4, 3)))
    assert proba.shape == (4, 2) and np.allclose(proba.sum(axis=1), 1)
