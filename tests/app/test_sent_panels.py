"""A row page's panels are sent only when they differ from what the browser shows (app/views/sent.py, issue 25).

The oracle is the panels themselves: two answers for the same edit are equal panel by panel (Plotly's JSON), so
the second must send none of them; an edit that changes the prediction changes the SHAP figure, which must be sent.
"""
import json

import pytest
from dash import no_update
from plotly.io.json import to_json_plotly

from app.callbacks import descriptive, persuasive
from app.views import sent


def _edit(row, name, value):
    return {"row": row, "edits": {name: value}}


def _persuasive(row, whatif, digests):
    return persuasive.render_row(row, 3, "exact", None, None, 1, whatif, digests)


@pytest.mark.parametrize("page", ["descriptive", "persuasive"])
def test_the_same_answer_twice_sends_no_panel_the_second_time(sample_workspace, page):
    ws, row = sample_workspace, 7
    whatif = _edit(row, "worst area", float(ws.X["worst area"].quantile(0.9)))
    call = (lambda d: descriptive.render_row(row, "children", 1, whatif, d)) if page == "descriptive" else \
        (lambda d: _persuasive(row, whatif, d))
    panels = 4 if page == "descriptive" else 8
    first = call(None)
    assert all(v is not no_update for v in first[:panels])  # nothing known: every panel sent
    digests = first[-1]
    assert sorted(digests, key=int) == [str(i) for i in range(panels)]
    second = call(json.loads(json.dumps(digests)))  # as the browser's store sends it back
    assert all(v is no_update for v in second[:panels])
    assert second[-1] == digests


def test_a_panel_that_changed_is_sent_and_one_that_did_not_is_not(sample_workspace):
    ws, row = sample_workspace, 7
    low, high = (float(ws.X["worst concave points"].quantile(q)) for q in (0.05, 0.95))
    a = _persuasive(row, _edit(row, "worst concave points", low), None)
    b = _persuasive(row, _edit(row, "worst concave points", high), a[-1])
    fresh = _persuasive(row, _edit(row, "worst concave points", high), None)  # b's panels, all sent
    for i in range(8):
        same = to_json_plotly(a[i]) == to_json_plotly(fresh[i])
        assert (b[i] is no_update) == same, i
        if not same:
            assert to_json_plotly(b[i]) == to_json_plotly(fresh[i])
    assert b[5] is not no_update  # the full SHAP bar: another row's attributions


@pytest.mark.parametrize("forged", ["x", ["a"], {"0": 5}, {str(i): "0" * 16 for i in range(100)}, {"0": "f" * 65}])
def test_a_store_the_module_did_not_write_sends_every_panel(forged):
    values, digests = sent.only_changed(["a", {"b": 1}, no_update], forged)
    assert values[:2] == ["a", {"b": 1}] and values[2] is no_update
    assert digests == {"0": sent.digest("a"), "1": sent.digest({"b": 1})}


def test_a_panel_left_alone_keeps_its_digest():
    values, digests = sent.only_changed([no_update, "x"], {"0": "abc", "1": sent.digest("x")})
    assert values == [no_update, no_update] and digests == {"0": "abc", "1": sent.digest("x")}
