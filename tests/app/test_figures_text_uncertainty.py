"""The Text page's attribution strips show standard errors and flag unresolved ranks (issue 13).

Oracle: a hand-checked row. |values| 0.5, 0.45, 0.1 with standard errors 0.01, 0.1, 0.01: the second
word's error (0.1) exceeds its gap to the first (0.05), so only it gets ≈; the others' errors are
below their nearest gaps (0.05 and 0.35).
"""
import numpy as np

from app.views import figures_text as ft


def test_text_strips_show_standard_errors_and_flag_only_the_unresolved_word():
    fig = ft.aggregates_view(["good", "film", "overall"], [("attention", np.array([0.2, 0.3, 0.5]))],
                             [("LIME", np.array([0.5, -0.45, 0.1]), np.array([0.01, 0.1, 0.01]))])
    strip = fig.data[1]
    assert [t.startswith("≈") for t in strip.text[0]] == [False, True, False]
    # the hover's number and its error, written in Python (never d3's 1.2e+3)
    assert list(strip.customdata[0]) == ["0.5000 ± 0.0100", "-0.4500 ± 0.1000", "0.1000 ± 0.0100"]
    assert "%{customdata}" in strip.hovertemplate and "≈" in fig.layout.title.text
    plain = ft.aggregates_view(["a", "b"], [], [("IG", np.array([0.3, 0.1]))])  # no error: no flag, no note
    assert not any(t.startswith("≈") for t in plain.data[0].text[0]) and "≈" not in plain.layout.title.text
