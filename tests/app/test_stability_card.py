"""Descriptive page, rank stability card: service against shap run directly, the job and its card."""
import json
from itertools import combinations

import numpy as np
import pytest

from app.callbacks import stability as cb
from app.services import stability as svc
from app.views.stability import stability_controls
from tests.shapley_oracle import brute_force_boosted_shapley


def _text(component) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json(), ensure_ascii=False)


@pytest.fixture(scope="module")
def run(sample_workspace):
    """The job for row 5 as the page runs it (progress recorded), and the view the service caches."""
    seen = []
    view = svc.stability_view(5, 5, progress=lambda done, total: seen.append((done, total)))
    return view, seen


def test_shap_stability_equals_pairs_of_tree_shap_run_directly_on_resampled_backgrounds(sample_workspace, run):
    """Oracle: brute-force Shapley values of the margin, tree by tree, on the 100 training rows drawn with seeds 0..9, top-5 sets enumerated by pairs."""
    view, _ = run
    ws = sample_workspace
    x = ws.X.iloc[[5]]
    phis = []
    for s in range(10):
        bg = ws.X.iloc[ws.train_idx].sample(n=100, random_state=s)
        # brute force tree by tree with scikit-learn's own predict (shap's log-odds output misses by 0.2 on one
        # (row, background row) pair of seed 3: not an oracle)
        phis.append(brute_force_boosted_shapley(ws.adapter.model, x.to_numpy()[0], bg.to_numpy()))
    phis = np.array(phis)
    np.testing.assert_allclose(view.shap.values, phis, atol=1e-9)
    tops = [frozenset(np.argsort(-np.abs(p), kind="stable")[:5].tolist()) for p in phis]
    pairs = list(combinations(range(10), 2))
    assert view.shap.topk_overlap == pytest.approx(np.mean([len(tops[i] & tops[j]) / 5 for i, j in pairs]), abs=1e-12)
    assert view.shap.jaccard == pytest.approx(np.mean([len(tops[i] & tops[j]) / len(tops[i] | tops[j])
                                                       for i, j in pairs]), abs=1e-12)
    freq = np.array([sum(j in t for t in tops) / 10 for j in range(30)])
    np.testing.assert_allclose(view.shap.topk_frequency, freq, atol=0)


def test_lime_reruns_share_no_neighborhood_and_use_the_shown_size(sample_workspace, run):
    from app import services

    view, seen = run
    shown = services.lime_row(5)
    seeds = view.lime.seeds
    used = [set(range(s, s + shown.params["repeats"] + 1)) for s in seeds]  # fits and the held-out draw
    assert all(not (a & b) for a, b in combinations(used, 2)) and len(seeds) == 10
    assert f"of {shown.params['num_samples']} samples per rerun" in view.lime.varied
    assert seen == [(i, 20) for i in range(1, 21)]


def test_card_says_plainly_whether_each_top_k_set_is_stable(run):
    view, _ = run
    text = _text(cb.stability_card(view))
    for st in (view.shap, view.lime):
        assert st.verdict() in text
        assert ("Unstable" in st.verdict()) == (st.topk_overlap < 0.8)
    assert "Row 5: are the top 5 features stable" in text and "Top-5 overlap" in text


def test_a_bad_row_gives_a_message_and_viewers_see_the_role_needed(sample_workspace):
    out = _text(cb.run_stability(lambda _: None, 1, 10_000))
    assert "row 10000 does not exist" in out
    viewer = _text(stability_controls(False))
    assert "needs the analyst role" in viewer and '"disabled": true' in viewer


def test_job_progress_counts_each_methods_reruns_as_the_method_line_does(run, monkeypatch):
    """A new user read "SHAP: 4 of 20 reruns" and "LIME: 13 of 20" beside "each method rerun 10 times"."""
    import re

    view, seen = run

    def replay(row, k=5, progress=None):  # the service's recorded progress calls, replayed through the job
        for done, total in seen:
            progress(done, total)
        return view

    monkeypatch.setattr(cb.stability, "stability_view", replay)
    told = []
    card = _text(cb.run_stability(told.append, 1, 5))
    n_shap, n_lime = view.shap.n_reruns, view.lime.n_reruns
    assert f"each method rerun {n_shap} times" in card and n_shap == n_lime == 10
    counts = [re.match(r"(SHAP|LIME): (\d+) of (\d+) reruns", label).groups() for _, label in told]
    assert counts == ([("SHAP", str(i), str(n_shap)) for i in range(1, n_shap + 1)]
                      + [("LIME", str(i), str(n_lime)) for i in range(1, n_lime + 1)])
    assert [value for value, _ in told] == [round(100 * i / 20) for i in range(1, 21)]  # the bar: the whole job


def test_a_new_row_resets_the_card_only_after_a_stability_run(sample_workspace):
    """The previous row's card no longer applies once the row changes; while no job has run on the page the card
    still shows its hint, and the row's one response leaves it (and the progress bar) alone."""
    from dash import no_update

    from app.callbacks import descriptive
    from app.views.stability import stability_hint

    row = int(sample_workspace.test_idx[0])
    untouched = descriptive.render_row(row, "children", None)
    after_run = descriptive.render_row(row, "children", 1)
    card = slice(5, 8)  # the stability card, progress value and label (the what-if editor's outputs follow)
    assert untouched[card] == (no_update,) * 3
    assert after_run[card][1:] == (0, "") and str(after_run[card][0]) == str(stability_hint())
    assert untouched[4] == after_run[4] == {"row": row, "text": untouched[4]["text"]} and untouched[4]["text"]
