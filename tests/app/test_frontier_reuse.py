"""The frontier reuses the MUSE fit it already has (issue 14).

The warm-up fits the default MUSE (10 rules) and then the frontier, whose MUSE point at budget 10 is the same
estimator with the same settings and seed: it is read from the cached fit, not fitted again. Checked against
the frontier fitted whole by :func:`explainers.muse.surrogate_frontier` (an independent computation).
"""
from __future__ import annotations

import pytest

from explainers.muse import TwoLevelDecisionSet, surrogate_frontier
from app.services import surrogates


def _same(a, b):
    """Points equal in everything but the measured fit time."""
    return (a.method, a.budget, a.n_rules, a.n_predicates, a.n_neighborhoods, a.agreement, a.agreement_low,
            a.agreement_high, a.rule_set.rules, a.rule_set.default_label) == \
           (b.method, b.budget, b.n_rules, b.n_predicates, b.n_neighborhoods, b.agreement, b.agreement_low,
            b.agreement_high, b.rule_set.rules, b.rule_set.default_label)


@pytest.fixture
def fits(sample_workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("CANDOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(surrogates, "FRONTIER_BUDGETS", (5, 10))  # two budgets keep the test cheap
    budgets = []
    real = TwoLevelDecisionSet.fit

    def counted(self, *args, **kwargs):
        if type(self) is TwoLevelDecisionSet:  # not the flat set, a subclass
            budgets.append(self.max_rules)
        return real(self, *args, **kwargs)
    monkeypatch.setattr(TwoLevelDecisionSet, "fit", counted)
    return budgets


def test_the_frontier_reads_the_default_muse_fit_instead_of_fitting_it_again(fits):
    progress = []
    muse_key, frontier_key = surrogates.fit_surrogates(surrogates.muse_params(),
                                                       progress=lambda done, total: progress.append((done, total)))
    assert fits == [10, 5]  # the default MUSE once; the frontier's other MUSE budget
    fits.clear()
    got = surrogates.frontier(frontier_key)
    X_train, y_train, X_eval, y_eval = surrogates._split()
    params = surrogates.default_frontier_params()
    whole = surrogate_frontier(X_train, y_train, X_eval, y_eval, budgets=surrogates.FRONTIER_BUDGETS, seed=0,
                               muse_params={k: tuple(v) if k == "lambdas" else v for k, v in params.items()})
    assert len(got.points) == len(whole.points) == 8
    assert all(_same(a, b) for a, b in zip(got.points, whole.points))
    assert (got.trivial_label, got.trivial_agreement, got.n_train, got.n_eval) == \
           (whole.trivial_label, whole.trivial_agreement, whole.n_train, whole.n_eval)
    ten = next(p for p in got.points if p.method == "muse" and p.budget == 10)
    assert ten.rule_set.rules == surrogates.muse_view(muse_key).rule_set.rules
    # 1 MUSE, then 1 MUSE and 4 CART/flat fits: the bar ends full
    assert progress[:2] == [(0, 6), (1, 6)] and progress[-1] == (6, 6)
    # a new user's refit of the same settings: all of it cached, so the frontier reported nothing and the bar
    # stayed at "1 of 13 surrogates fitted, about 2 s left" after the job had ended; it ends full
    fits.clear()
    progress = []
    surrogates.fit_surrogates(surrogates.muse_params(), progress=lambda done, total: progress.append((done, total)))
    assert fits == [] and progress[0] == (0, 6) and progress[-1] == (6, 6), progress

