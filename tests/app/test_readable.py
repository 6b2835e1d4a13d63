"""Readable by anyone (issue 15): numbers, rule texts, labels and colours people read, checked without a browser.

Each test names the defect a first-time user found and checks the fix against an independent computation.
"""
from __future__ import annotations

import base64
import re
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from app.views import figures
from app.views.figures_persuasive import operator_text, persuasive_items
from explainers import Explanation, LimeExplainer
from explainers._codec import value_labels
from explainers.numbers import parse_plain, plain
from explainers.persuasive import gilpin_label
from explainers.rules import format_threshold, rule_text
from explainers.types import GlobalImportance, Predicate, Rule

SCI = re.compile(r"\d[eE][+-]?\d")


@pytest.mark.parametrize("v", [1330.4, 226800.0, 2.5e7, 0.000123456, -0.16, 687.0, 1e-7, 98765.4321, -4.2e-5])
def test_plain_never_writes_scientific_notation_and_reads_back(v):
    """ "1.33e+03 vs median 687", "fnlwgt = 2.268e+05": plain() keeps the value to its significant digits."""
    for digits in (3, 4, 6):
        text = plain(v, digits, trim=True)
        assert not SCI.search(text) and "np." not in text
        exact = Decimal(repr(v))  # the rounding bound from the digits asked, computed independently
        magnitude = exact.copy_abs().adjusted()
        assert abs(Decimal(str(parse_plain(text))) - exact) <= Decimal(5) * Decimal(10) ** (magnitude - digits) \
            + Decimal("1e-8")
    assert plain(1330.4) == "1,330" and plain(226800, 4, trim=True) == "226,800" and plain(0.16, trim=True) == "0.16"
    assert plain(np.int64(0)) == "0" and plain(np.float32(2.5), signed=True) == "+2.50"


def test_values_rules_and_thresholds_are_plain():
    assert value_labels(np.array([226800.0, 1330.4, 0.0981]), None, ".4g") == ("226,800", "1,330", "0.0981")
    assert format_threshold(226800.0) == "226,800" and format_threshold(np.float64(0.14251)) == "0.1425"
    rule = Rule(descriptor=(), rule=(Predicate("fnlwgt", ">", 226800.0),), label=">50K", support=3, coverage=0.1,
                precision=0.9)
    assert rule_text(rule) == "IF fnlwgt > 226,800 THEN >50K"
    empty = Rule(descriptor=(), rule=(), label=">50K", support=3, coverage=1.0, precision=0.7)
    assert rule_text(empty) == "ALWAYS >50K" and rule_text([], label=">50K") == "ALWAYS >50K"


def test_rule_operators_read_as_words_not_a_dict():
    """ "Method: prune {'max_rules': 3}" (and np.int64 inside it) on the Persuasive page."""
    text = operator_text((("prune", {"max_rules": np.int64(3)}), ("round_thresholds", {"sig": np.int64(2)}),
                          ("plain_language", {"lexicon": 4})))
    assert text == ("O5 keep the top 3 rules by coverage, then precision → O2 round thresholds to 2 significant digits → "
                    "O8 phrase predicates in words (4 phrases)")
    assert "{" not in text and "np." not in text


def _explanation(names, values, method="shap", params=None) -> Explanation:
    v = np.asarray(values, dtype=float)
    return Explanation(method=method, feature_names=tuple(names), values=v, base_value=0.3,
                       prediction=0.3 + float(v.sum()), feature_values=np.arange(len(v), dtype=float) * 1000.5,
                       output_space="probability", target="malignant", source="test", params=params or {})


def test_thirty_bars_keep_every_label_and_use_the_one_palette():
    names = [f"feature number {j} with a fairly long descriptive name" for j in range(30)]
    e = _explanation(names, np.linspace(-1, 1, 30) + 0.01)
    fig = figures.attribution_bar(e, max_display=30)
    ax = fig.layout.yaxis
    assert ax.tickmode == "array" and list(ax.ticktext) == list(fig.data[0].y) and len(ax.ticktext) == 30
    assert set(fig.data[0].marker.color) == {figures.POS, figures.NEG}
    assert [c == figures.POS for c in fig.data[0].marker.color] == [x > 0 for x in fig.data[0].x]
    assert "largest: feature number 29" in fig.layout.meta["alt"]  # the text alternative names the top bar
    wf = figures.waterfall(e)
    assert wf.data[0].increasing.marker.color == figures.POS and wf.data[0].decreasing.marker.color == figures.NEG
    assert not any(SCI.search(t) for t in wf.data[0].y)  # feature values 29,014.5 etc., never 2.901e+04


def test_diverging_palette_is_colour_blind_safe_and_shared():
    """One definition: the ends are ColorBrewer RdBu's, whose luminance differs (readable without hue)."""
    def luminance(hex_colour):
        r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    assert figures.DIVERGING[0][1] == figures.NEG and figures.DIVERGING[-1][1] == figures.POS
    for colour in (figures.POS, figures.NEG, figures.GREY):  # 4.5:1 on white, so bars read as text would
        assert (1.05) / (luminance(colour) + 0.05) >= 4.5
    import app.views.figures_text as ft

    strips = ft.word_strips(["a", "b"], [("IG", np.array([0.5, -0.2]), True)], text_format=".3g", hover_format=".4g")
    assert [tuple(c) for c in strips.data[0].colorscale] == [tuple(c) for c in figures.DIVERGING]


def test_lime_bars_name_the_bin_the_row_falls_in(bc, gb_model):
    """ "worst area −0.16" named no bin: the label is LIME's condition for this row, e.g. "worst area > 1,084"."""
    X, _, train, _ = bc
    predict = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    lime = LimeExplainer(predict, training_data=X.iloc[train], class_names=("benign", "malignant"), num_samples=300,
                         repeats=2)
    row = X.iloc[0].to_numpy(dtype=float)
    e = lime.explain(row, seed=0)
    cond = e.params["conditions"]
    quartiles = np.percentile(X.iloc[train].to_numpy(dtype=float), [25, 50, 75], axis=0)  # lime's quartile bins
    for j, text in enumerate(cond):
        name = X.columns[j]
        assert name in text and not SCI.search(text)
        nums = [parse_plain(t) for t in re.findall(r"-?[\d,]*\.?\d+", text.replace(name, ""))]
        edges = quartiles[:, j]
        if text.startswith(f"{name} <= "):
            assert row[j] <= edges[0] * (1 + 1e-3) and nums[0] == pytest.approx(edges[0], rel=1e-3)
        elif text.startswith(f"{name} > "):
            assert row[j] > edges[-1] * (1 - 1e-3) and nums[0] == pytest.approx(edges[-1], rel=1e-3)
        else:
            lo, hi = nums
            assert lo * (1 - 1e-3) <= row[j] <= hi * (1 + 1e-3)
    fig = figures.attribution_bar(e)
    assert all(any(label.endswith(figures.tick_label(c)) for c in cond) for label in fig.data[0].y)


def test_frontier_draws_neighborhoods_for_muse_only_and_muse_on_top():
    from types import SimpleNamespace as P

    pts = [P(method=m, budget=b, agreement=a, agreement_low=a - .02, agreement_high=a + .01, n_rules=b,
             n_predicates=2 * b, n_neighborhoods=(2 if m == "muse" else 0), fit_seconds=0.1)
           for m, a in (("muse", 0.9), ("cart", 0.9), ("flat", 0.9), ("cart_dl", 0.88)) for b in (2, 5)]
    f = P(points=pts, curve=lambda m: [p for p in pts if p.method == m], n_eval=50, trivial_agreement=0.6,
          trivial_label="benign")
    fig = figures.frontier(f)
    assert {t.name for t in fig.data if t.xaxis == "x3"} == {"MUSE"}
    drawn = [t.name for t in fig.data if t.xaxis == "x"]
    assert drawn.index("MUSE") > drawn.index("FLAT")  # the later trace is drawn above
    assert len({t.marker.symbol for t in fig.data if t.xaxis == "x"}) == 4  # four shapes, not colour alone
    assert not any(t.name is None or str(t.name).startswith("trace") for t in fig.data if t.showlegend is not False)


def test_gilpin_labels_cover_global_shap_gradients_and_head_roles():
    g = GlobalImportance(feature_names=("a", "b"), values=np.zeros((3, 2)), feature_values=np.zeros((3, 2)),
                         base_value=0.0, output_space="probability", target="y", source="test")
    assert gilpin_label(g).scope == "global" and "averaged" in gilpin_label(g).subtype
    assert gilpin_label("gradient_x_input").subtype == "salience mapping"
    assert gilpin_label("head_roles").primary == "representation"


def test_persuasive_items_keep_every_label():
    from types import SimpleNamespace as P

    items = [P(name=f"a very long feature name number {j}", value=(-1) ** j * (40 - j) / 40, shown=(40 - j) / 400,
               strength=None) for j in range(40)]
    fig = persuasive_items(P(items=items, parent=P(output_space="probability")), "Persuasive")
    assert len(fig.layout.yaxis.ticktext) == 40 and fig.layout.yaxis.tickmode == "array"
    assert not any(SCI.search(t) for t in fig.data[0].text)


@pytest.mark.parametrize("d", range(2, 61))
def test_k_slider_marks_never_crowd(d):
    """ "25" and "27" overlapped on a 27-feature table: neighbouring marks are at least 3 apart (or all shown)."""
    from app.views.components import slider_marks

    marks = slider_marks(d)
    assert marks[0] == 1 and marks[-1] == d and marks == sorted(set(marks))
    assert d <= 8 or min(np.diff(marks)) >= 3


@pytest.fixture
def text_uploads(tmp_path, monkeypatch):
    from app.services import text as text_services

    monkeypatch.setattr(text_services, "TEXT_DIR", tmp_path)
    from app.callbacks import text as cb

    return cb


def _data_url(data: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode()


def test_a_long_conllu_file_says_how_much_is_read(text_uploads):
    """A 1,002-sentence file read to 1,000 sentences "without a word" now says so."""
    sentence = "1\tGood\tgood\tADJ\t_\t_\t2\tamod\t_\t_\n2\tfilm\tfilm\tNOUN\t_\t_\t0\troot\t_\t_\n\n"
    _, status, *_ = text_uploads.upload_conllu(_data_url((sentence * 1002).encode()), "long.conllu",
                                               [{"label": "texts", "value": "texts"}])
    assert status == ("long.conllu: the first 1,000 of 1,002 sentences with gold heads "
                      "(the head analysis reads at most 1,000)")


def test_a_wrong_type_upload_on_the_text_page_is_refused_with_a_message(text_uploads):
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    _, status, _ = text_uploads.upload_csv(_data_url(png), "photo.png")
    assert "photo.png: a .png is not a CSV of texts; upload a .csv or .txt file" in str(status.children)
    _, status, *_ = text_uploads.upload_conllu(_data_url(png), "tree.png", [])
    assert "tree.png: a .png is not a CoNLL-U file" in str(status.children)
    _, status, _ = text_uploads.upload_csv(_data_url(png), "disguised.csv")
    assert "disguised.csv is not a text file" in str(status.children)
