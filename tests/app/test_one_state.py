"""One shape of Workspace and one state object for the services (issue 24).

FAILED before: the bundled sample had ``adapter=None`` and a bare classifier, so 13 ``adapter is None`` branches
sat in the services, the workspace and the explainers; ``app/check.py`` and ``app/report/cli.py`` imported
``services._core`` and ``check.py`` reached ``settings._installed``; the services' state was module globals with no
public way to install or put back what was there (``ServiceState``, ``install``, ``overridden`` did not exist).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from app import services
from explainers.model_adapter import ModelAdapter, OneVsRest

ROOT = Path(__file__).resolve().parents[2]


def _sources(*packages: str):
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path, path.read_text(encoding="utf-8")


def test_no_branch_on_a_missing_adapter():
    found = [f"{p.relative_to(ROOT)}:{i}" for p, text in _sources("app", "explainers", "workspace")
             for i, line in enumerate(text.splitlines(), 1) if re.search(r"adapter is (not )?None", line)]
    assert found == []


def test_the_sample_goes_through_the_adapter_and_view_of_a_users_files(sample_workspace):
    ws = sample_workspace
    assert isinstance(ws.adapter, ModelAdapter) and isinstance(ws.model, OneVsRest) and ws.model.adapter is ws.adapter
    assert ws.model.index == 1 and ws.classes == ws.adapter.class_names and ws.task == "binary"
    assert ws.pair is not None and ws.pair.model is ws.adapter
    # the explained output is the model's own probability of the positive class, to the last bit
    np.testing.assert_array_equal(ws.output(ws.X.iloc[:50]), ws.adapter.model.predict_proba(ws.X.iloc[:50])[:, 1])


def _imports_core(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = {a.name for a in node.names}
            if module.endswith("services._core") or (module.endswith("services") and "_core" in names):
                return True
        elif isinstance(node, ast.Attribute) and node.attr == "_core" and \
                isinstance(node.value, ast.Name) and node.value.id == "services":
            return True
    return False


def test_nothing_outside_the_services_imports_their_core():
    outside = [str(p.relative_to(ROOT)) for p, _ in _sources("app", "benchmarks")
               if "services" not in p.relative_to(ROOT).parts[:2] and _imports_core(p)]
    assert outside == []


def test_no_module_reaches_the_installed_settings_privately():
    found = [str(p.relative_to(ROOT)) for p, text in _sources("app", "study", "store", "accounts", "workspace")
             if "_installed" in text and p.name != "settings.py"]
    assert found == []


def test_overridden_puts_back_the_state_there_was_with_what_it_had_computed(sample_workspace):
    calls = []
    getter = services.lazy("test_one_state_value", lambda: calls.append(1) or len(calls))
    try:
        before = services.state()
        # registered after the state was made (page modules imported by earlier tests may have joined others too)
        assert "test_one_state_value" in services.join_late()
        assert getter() == 1 and services.is_ready("test_one_state_value")
        other = services.ServiceState(sample_workspace)
        with services.overridden(other) as installed:
            assert installed is other and services.state() is other
            assert not services.is_ready("test_one_state_value")  # nothing computed in the new state
            assert getter() == 2
        assert services.state() is before and getter() == 1 and calls == [1, 1]  # the first value, not recomputed
    finally:
        from app.services import _core

        _core._factories.pop("test_one_state_value", None)


def test_row_caches_belong_to_the_state_they_were_filled_in(sample_workspace):
    calls = []

    @services.row_cache(maxsize=8)
    def doubled(x):
        calls.append(x)
        return 2 * x

    assert doubled(3) == 6 and doubled(3) == 6 and calls == [3]
    with services.overridden(services.ServiceState(sample_workspace)):
        assert doubled(3) == 6 and calls == [3, 3]  # another state: its own, empty cache
    assert doubled(3) == 6 and calls == [3, 3]  # back: the first state's entry


def test_a_server_gives_the_installed_adapter_its_call_limits(sample_workspace):
    from explainers.model_adapter import CallLimits

    limits = CallLimits(seconds=7.0)
    state = services.ServiceState(sample_workspace, call_limits=limits)
    assert state.workspace.adapter.limits == limits and state.workspace.model.adapter is state.workspace.adapter
    assert sample_workspace.adapter.limits == CallLimits()  # the workspace given is left as it was
    assert state.replaced().workspace.adapter.limits == limits


def test_a_state_without_a_workspace_says_so():
    with services.overridden(services.ServiceState()):
        with pytest.raises(RuntimeError, match="has not been called"):
            services.workspace()
