"""A Surrogate link with features of interest and budgets shows its own fit (issue 25), called as plain functions on
the bundled sample: opening it starts "Fit MUSE"'s job for an analyst, reads the fit from the cache once it is
there (for a viewer too), and a line says whenever the surrogate or frontier shown is not of the controls'
settings, naming them and the role that can fit them."""
from __future__ import annotations

import pytest
from dash import no_update

from app import services
from app.callbacks import surrogate
from app.serve.callback_roles import required_role
from app.services import surrogates

FOI = ["worst radius", "mean texture"]
LINK = (FOI, 5, 3, 4, surrogates.DEFAULT_LAMBDAS)
"""The controls as ``/surrogate?foi=worst radius&foi=mean texture&max_rules=5`` sets them (other budgets default)."""
DEFAULTS = (None, 10, 3, 4, surrogates.DEFAULT_LAMBDAS)
NAMED = "features of interest mean texture, worst radius; 5 rules"


def _line(component) -> str | None:
    return None if component is None else component.children


@pytest.fixture()
def fresh_cache(sample_workspace, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CANDOR_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    return sample_workspace


def test_a_link_with_features_of_interest_and_budgets_shows_its_own_fit(fresh_cache, monkeypatch):
    default_key, _, _ = surrogate.load_default_surrogate("/surrogate", None, None, *DEFAULTS)
    link_key, link_frontier = surrogates.result_keys(surrogates.muse_params(FOI, 5, 3, 4, None))
    assert default_key != link_key
    # the page opened with the defaults computes the default frontier, as before
    assert surrogate.open_page("/surrogate", *DEFAULTS) == (1, no_update, no_update)

    # nothing cached for the link: an analyst's page starts "Fit MUSE"'s job on the link's settings
    assert surrogate.open_page("/surrogate", *LINK) == (no_update, link_key, no_update)
    # until it ends, the page shows the default MUSE and says so in one line
    assert surrogate.load_default_surrogate("/surrogate", None, None, *LINK)[0] == default_key
    assert _line(surrogate.show_settings_note(default_key, None, False, *LINK)) == (
        f"The surrogate shown is the default fit, not of the settings above ({NAMED}): Fit MUSE fits them.")
    assert _line(surrogate.show_settings_note(default_key, None, True, *LINK)).endswith(": they are being fitted.")
    # a viewer may not fit: the default fit, and the role that can
    monkeypatch.setattr(surrogate, "has_role", lambda role: False)
    assert surrogate.open_page("/surrogate", *LINK) == (1, no_update, no_update)
    assert _line(surrogate.show_settings_note(default_key, None, False, *LINK)) == (
        f"The surrogate shown is the default fit, not of the settings above ({NAMED}): "
        "fitting them needs the analyst role.")
    monkeypatch.undo()

    # the job the link started: MUSE at 5 rules over the two features, and its frontier
    key, frontier_key, error = surrogate.fit_surrogates(lambda _: None, None, *LINK, link_key)
    assert error is None and (key, frontier_key) == (link_key, link_frontier)
    view = services.muse_view(key)
    assert {p.feature for d in view.rule_set.neighborhoods for p in d} <= set(FOI)
    assert view.heldout.size <= 5 and "budgets: 5 rules" in view.source and "descriptors over mean texture, " \
        "worst radius" in view.source

    # opened again, by anyone: both read from the cache, no job, and no line
    monkeypatch.setattr(surrogate, "has_role", lambda role: False)
    assert surrogate.open_page("/surrogate", *LINK) == (no_update, no_update, link_frontier)
    assert surrogate.load_default_surrogate("/surrogate", None, None, *LINK)[0] == link_key
    assert surrogate.show_settings_note(link_key, link_frontier, False, *LINK) is None
    assert surrogate.show_settings_note(f"{link_frontier}|cart|5", link_frontier, False, *LINK) is None
    # a control changed after: the line names what differs from what is shown
    six = (FOI, 6, 3, 4, surrogates.DEFAULT_LAMBDAS)
    assert _line(surrogate.show_settings_note(link_key, link_frontier, False, *six)) == (
        "The surrogate shown is another fit, not of the settings above (features of interest mean texture, "
        "worst radius; 6 rules): fitting them needs the analyst role.")
    assert _line(surrogate.show_settings_note(link_key, link_frontier, False, *DEFAULTS)) == (
        "The surrogate and frontier shown are another fit, not of the settings above (the defaults): fitting them "
        "needs the analyst role.")
    assert _line(surrogate.show_settings_note(link_key, None, False, FOI, 5, 3, 4, "1, 2")).startswith(
        "The view shows another fit: the settings above cannot be fitted (λ weights: give 5 comma-separated")


def test_only_the_default_frontier_is_a_viewers_job():
    """The page starts the default frontier's job through its go store (a viewer may); the link's fit is "Fit
    MUSE"'s job (an analyst's), whatever starts it."""
    assert required_role("surrogate-frontier-key.data", {"changedPropIds": ["surrogate-frontier-go.data"]},
                         background=True) == "viewer"
    fit = "..surrogate-key.data...surrogate-frontier-key.data...surrogate-error.children.."
    assert required_role(fit, {"changedPropIds": ["surrogate-link-fit.data"]}, background=True) == "analyst"
