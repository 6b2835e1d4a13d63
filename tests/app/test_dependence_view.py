"""The Dependence page on the bundled sample (issue 25): its service, callback, URL state and report section.

Oracles: the PDP against a brute-force average of the installed model's explained output over the same held-out
rows (set the column to each grid value, call the model, average); the scatter's SHAP values against the global
view's; the link's parameter against the URL reader.
"""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def sample(sample_workspace):
    from app import services

    with services.overridden(services.ServiceState(sample_workspace)):
        yield sample_workspace


def test_the_service_equals_a_brute_force_pdp_and_the_global_shap_view(sample):
    from app import services

    ws = sample
    v = services.dependence.dependence("mean texture")
    X = ws.X.iloc[ws.test_idx].iloc[v.partial.rows]
    assert len(v.partial.rows) == len(ws.test_idx)  # 143 held-out rows: all of them
    brute = []
    for value in v.partial.grid:
        edited = X.copy()
        edited["mean texture"] = value
        brute.append(ws.output(edited).mean())
    np.testing.assert_allclose(v.partial.average, brute, atol=1e-12)
    g = services.global_importance()
    j = g.feature_names.index("mean texture")
    np.testing.assert_array_equal(v.shap.shap_values, g.values[v.shap.rows, j])
    assert v.shap.color_feature in g.feature_names and v.shap.color_feature != "mean texture"
    assert services.dependence.default_feature() == g.feature_names[int(np.argmax(g.importance))]


def test_the_callback_draws_both_figures_with_text_alternatives_and_refuses_an_unknown_feature(sample):
    from app.callbacks.dependence import render_dependence
    from app.views.components import choice_value

    shap_fig, pdp_fig, notes, stop = render_dependence(choice_value("worst area"))
    assert stop is True and len(shap_fig.data) >= 1 and len(pdp_fig.data) == 3  # ICE, band, PDP
    assert "worst area" in shap_fig.layout.meta["alt"] and "ICE curves" in pdp_fig.layout.meta["alt"]
    text = str(notes)
    assert "of the 143 ICE curves" in text and "95 % CI" in text and "bootstrap resamples" in text
    assert "SHAP values exact (standard error 0)" in text  # the sample's Tree SHAP
    _, _, refusal, _ = render_dependence("no such column")
    assert "no feature 'no such column' to show" in str(refusal.children) and "\n" not in str(refusal.children)


def test_the_feature_travels_in_the_url(sample):
    from app.shell import ids, url_state
    from app.views.components import choice_options

    dropdown = type("D", (), {"options": choice_options(["mean radius", "worst area"])})()
    values, problems = url_state.read("/dependence", {"feature": "worst area"}, {ids.DEPENDENCE_FEATURE: dropdown})
    assert values == {"feature": "worst area"} and problems == []
    _, problems = url_state.read("/dependence", {"feature": "nope"}, {ids.DEPENDENCE_FEATURE: dropdown})
    assert problems and problems[0].startswith("feature=nope: not one of")


def test_the_report_shows_the_top_features(sample, tmp_path):
    from app.report.content import report_content
    from app.report.render import expected_figures, render_html
    from workspace import settings

    with settings.overridden(cache_dir=tmp_path):
        content = report_content([int(sample.test_idx[0])])
        html = render_html(content)
    assert len(content.dependence) == 3 and "Dependence of the 3 features with the largest mean |SHAP|" in html
    assert html.count("hides its curves") == 3 and f'data-figures-expected="{expected_figures(content)}"' in html


def test_sampled_shap_values_state_their_standard_errors():
    from types import SimpleNamespace

    from app.services.dependence import _shap_error

    se = np.zeros((4, 2))
    se[:, 1] = [0.01, 0.02, 0.03, 0.5]
    g = SimpleNamespace(standard_error=se, feature_names=("a", "b"))
    assert _shap_error(g, "b", np.arange(4)) == "; sampled SHAP values: median standard error 0.025, largest 0.5"
    assert _shap_error(SimpleNamespace(standard_error=None), "a", np.arange(4)).endswith("exact (standard error 0)")


def test_the_methods_table_result_computes_only_the_partial_dependences(sample_workspace, monkeypatch):
    """Issue 27: ``check``'s pdp line built the Dependence page's whole view of each top feature, whose colour search
    reads every other column 51 times (50 bootstrap resamples; 10,000 columns on the wide pair), for views it never
    draws; now only the partial dependences, each computed once."""
    from app import services
    from app.services import dependence

    with services.overridden(services.ServiceState(sample_workspace)):
        searched, computed = [], []
        monkeypatch.setattr(dependence.ex, "shap_dependence", lambda *a, **k: searched.append(a[0]))
        explain = dependence._explainer().explain
        monkeypatch.setattr(dependence._explainer(), "explain", lambda f: computed.append(f) or explain(f))
        top = dependence.partial_dependences()
        assert searched == [] and computed == [p.feature for p in top.partials] and len(computed) == 3
        assert dependence._partial(computed[0]) is top.partials[0] and len(computed) == 3  # cached, not recomputed
