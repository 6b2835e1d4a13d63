"""The Surrogate page's callbacks do nothing, quietly, when there is nothing to show (Dash's PreventUpdate).

Before, both raised NameError (PreventUpdate was never imported): a click on the frontier's background or an
empty selection answered with a server error instead of leaving the page as it was.
"""
import pytest
from dash.exceptions import PreventUpdate

from app.callbacks import surrogate
from app.views import surrogate as surrogate_view


@pytest.mark.parametrize("click, key", [(None, "k"), ({"points": [{"x": 1}]}, "k"), ({"points": [{"customdata": ["muse", 5]}]}, None)])
def test_a_click_without_a_frontier_point_changes_nothing(click, key):
    with pytest.raises(PreventUpdate):
        surrogate.show_clicked_point(click, key)


def test_no_chosen_surrogate_changes_nothing():
    with pytest.raises(PreventUpdate):
        surrogate_view.render_surrogate(None)


def test_a_frontier_point_names_its_fit():
    assert surrogate.show_clicked_point({"points": [{"customdata": ["muse", 5, "x"]}]}, "F") == "F|muse|5"
