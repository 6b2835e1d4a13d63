"""Issue 7: the user's categorical levels and dates are shown, never their codes.

Oracles: a synthetic table whose rule is known exactly (``buy`` is "yes" iff
``colour`` is green or red); every displayed membership predicate, read back
from its text and evaluated on the raw table, selects the rows its code
predicate selects; the bundled (all-numeric) sample renders as before.
"""
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

import explainers.persuasive as xp
from app.views import figures
from app import services
from app.services import persuasive_rules as rules_service
from tests.markdown_render import component_text
from explainers._codec import TabularCodec, conjunction_parts, conjunction_text, predicate_text, value_labels
from explainers.persuasive._attribution import render_lines, value_texts
from explainers.rules import conjunction_mask, predicate_mask
from explainers.muse import CartSurrogate
from explainers.types import Explanation, Predicate

from .conftest import write_pair

COLOURS = ("blue", "green", "red", "yellow")  # codes 0..3 (levels sorted)


def _json(component) -> str:
    """The component as JSON, its Markdown panels as the text a reader sees (tests/markdown_render.py)."""
    return component_text(component)


def _selected(part: str, feature: str, levels) -> set:
    """The levels a displayed membership predicate names, read from its text alone."""
    rest = part[len(feature) + 1:]
    if rest == "is any level":
        return set(levels)
    if rest == "in {}":
        return set()
    if rest.startswith("= "):
        return {rest[2:]}
    if rest.startswith("≠ "):
        return set(levels) - {rest[2:]}
    if rest.startswith("in {"):
        return set(rest[4:-1].split(", "))
    if rest.startswith("not in {"):
        return set(levels) - set(rest[8:-1].split(", "))
    raise AssertionError(f"not a membership predicate: {part!r}")


def _assert_membership_matches_codes(preds, shown: str, raw: pd.DataFrame, X: pd.DataFrame, feature: str) -> None:
    on = [p for p in preds if p.feature == feature]
    parts = [s for s in shown.split(" AND ") if s.startswith(feature + " ")] if shown else []
    assert len(parts) == (1 if on else 0), (shown, on)
    if on:
        names = _selected(parts[0], feature, sorted(raw[feature].unique()))
        np.testing.assert_array_equal(raw[feature].isin(names).to_numpy(), conjunction_mask(on, X))


# --- the bundled sample (all numeric): exactly as before; runs first, while the sample is installed ---------------

def test_sample_values_and_predicates_render_as_numbers_as_before(sample_workspace):
    if services.state().workspace is not sample_workspace:
        services.init(sample_workspace, warm=False)
    view = services.local_view(0)
    assert view.shap.feature_names[0] == "mean radius" and view.labels[0] == "17.99"
    assert view.labels == tuple(f"{v:,.4g}" for v in view.shap.feature_values)
    assert figures.waterfall(view.shap, value_labels=view.labels).data[0].y == figures.waterfall(view.shap).data[0].y
    preds = (Predicate("worst radius", ">", 16.795), Predicate("mean texture", "<=", 20.0))
    assert conjunction_text(preds) == "worst radius > 16.8 AND mean texture <= 20"
    codec = services.tabular.display_codec()  # the sample's own (all numeric): the same texts as no codec
    assert conjunction_text(preds, codec) == conjunction_text(preds)
    assert value_labels(view.shap.feature_values, codec) == value_labels(view.shap.feature_values)


# --- explainers: predicates and values in the user's terms ---------------------------------------------------------

def test_membership_short_forms_complement_and_elision():
    codec = TabularCodec(pd.DataFrame({"colour": list(COLOURS)}))
    assert predicate_text(Predicate("colour", ">", 2.5), codec) == "colour = yellow"
    assert predicate_text(Predicate("colour", "<=", 2.5), codec) == "colour ≠ yellow"
    assert predicate_text(Predicate("colour", "<=", 1.5), codec) == "colour in {blue, green}"
    assert predicate_text(Predicate("colour", "in", (0.0, 3.0)), codec) == "colour in {blue, yellow}"
    big = TabularCodec(pd.DataFrame({"job": [f"j{i:02d}" for i in range(20)]}))
    assert predicate_text(Predicate("job", "<=", 6.5), big) == "job in {j00, j01, j02, j03, j04, … (+2 more)}"
    assert predicate_text(Predicate("job", "<=", 12.5), big) == "job not in {j13, j14, j15, j16, j17, … (+2 more)}"
    merged = conjunction_parts((Predicate("colour", ">", 0.5), Predicate("x", "<=", 3.25),
                                Predicate("colour", "<=", 2.5)), codec)
    assert merged == ("colour in {green, red}", "x <= 3.25")


def test_a_membership_predicate_selects_the_rows_its_code_predicate_selects(rng):
    raw = pd.DataFrame({"job": rng.choice([f"job {c}" for c in "abcdefghijkl"], 500),
                        "colour": pd.Categorical(rng.choice(COLOURS, 500), categories=COLOURS[::-1])})
    codec = TabularCodec(raw)
    X = codec.encode(raw)
    for feature, n in (("job", 12), ("colour", 4)):
        for op in ("<=", ">"):
            for t in np.arange(-1, n) + 0.5:
                p = Predicate(feature, op, float(t))
                names = _selected(predicate_text(p, codec, max_levels=20), feature, codec.column(feature).levels)
                np.testing.assert_array_equal(raw[feature].isin(names).to_numpy(), predicate_mask(p, X))


def test_a_datetime_predicate_renders_a_date_selecting_the_same_rows(rng):
    days = pd.date_range("2021-01-01", "2021-06-30", freq="D")
    raw = pd.DataFrame({"signup": rng.choice(days, 400), "spend": rng.normal(size=400)})
    codec = TabularCodec(raw)
    X = codec.encode(raw)
    y = np.where(raw.signup <= pd.Timestamp("2021-03-04"), "early", "late")
    sur = CartSurrogate(max_leaf_nodes=2).fit(X, y).rule_set_
    texts = {predicate_text(p, codec) for r in sur.rules for p in r.predicates}
    assert texts == {"signup <= 2021-03-04", "signup > 2021-03-04"}
    for r in sur.rules:
        (p,) = r.predicates
        day = pd.Timestamp(predicate_text(p, codec).split()[-1])
        want = raw.signup <= day if p.op == "<=" else raw.signup > day
        np.testing.assert_array_equal(want.to_numpy(), predicate_mask(p, X))
    plain = xp.plain_language(xp.prune_rules(sur, X, y, max_rules=2, codec=codec), X, y)
    assert {r.text() for r in plain.rules} == {"IF signup is on or before 2021-03-04 THEN early",
                                               "IF signup is after 2021-03-04 THEN late"}
    rounded = xp.round_thresholds(plain, X, y, sig=1)
    assert rounded.operators[-1] == ("round_thresholds", {"sig": 1, "not_rounded": ("signup",)})
    assert rounded.fidelity_after["agreement"] == 1.0 and rounded.fidelity_after["agreement_lost"] == 0.0


def test_rounding_leaves_category_codes_alone_and_costs_no_agreement(rng):
    raw = pd.DataFrame({"grade": rng.choice(list("abcdefgh"), 600)})
    codec = TabularCodec(raw)
    X = codec.encode(raw)
    y = np.where(raw.grade.isin(list("abcd")), "pass", "fail")
    sur = CartSurrogate(max_leaf_nodes=2).fit(X, y).rule_set_
    assert {float(p.threshold) for r in sur.rules for p in r.predicates} == {3.5}
    blind = xp.round_thresholds(sur, X, y, sig=1)  # 3.5 -> 4: code 4 ("e") changes side
    assert blind.fidelity_after["agreement_lost"] == pytest.approx(np.mean(raw.grade == "e"))
    kept = xp.round_thresholds(xp.prune_rules(sur, X, y, max_rules=2, codec=codec), X, y, sig=1)
    assert kept.fidelity_after["agreement"] == 1.0 and kept.fidelity_after["agreement_lost"] == 0.0
    assert [p for r in kept.rules for p in r.predicates] == [p for r in sur.rules for p in r.predicates]
    assert {r.text() for r in kept.rules} == {"IF grade in {a, b, c, d} THEN pass",
                                              "IF grade in {e, f, g, h} THEN fail"}


def test_sentences_and_lines_name_levels_and_dates():
    raw = pd.DataFrame({"signup": pd.to_datetime(["2021-03-04", "2020-01-01"]), "colour": ["red", "blue"]})
    codec = TabularCodec(raw)
    assert value_labels(codec.encode(raw).iloc[0], codec) == ("2021-03-04", "red")
    e = Explanation("shap", ("signup", "colour"), np.array([0.3, -0.1]), 0.4, 0.6,
                    codec.encode(raw).iloc[0].to_numpy(), "probability", "yes", "test")
    ctx = xp.Context(lambda a: np.full(len(a), 0.6), np.zeros((2, 2)), np.zeros(2), np.array([18262.0, 0.0]),
                     ("no", "yes"), full=False, codec=codec)
    s = xp.summarize(xp.top_k_items(e, 2, ctx), ctx)
    assert "Strongest factor: signup is 2021-03-04, which" in s.statement
    assert "2nd factor: colour is red, which" in s.statement and all(c.ok for c in s.sentences)
    assert render_lines(s.items, e, value_texts(e, ctx)) == ["signup = 2021-03-04: +0.3", "colour = red: -0.1"]
    moved = Explanation("shap", e.feature_names, e.values, 0.4, 0.6, e.feature_values + np.array([1.0, -1.0]),
                        "probability", "yes", "test")  # one day later, and blue
    part = xp.partition_of(s)
    failed = [c.claim for x in s.sentences if x.sentence.kind == "item"
              for c in xp.verify_sentence(x.sentence, moved, partition=part, class_names=("no", "yes")).checks
              if not c.ok]
    assert failed == ["value", "value"]


# --- the app on a user's workspace ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def colour_ws(tmp_path_factory):
    """``buy`` is yes iff colour is green or red; a tree on one-hot colour learns it exactly."""
    rng = np.random.default_rng(0)
    n = 240
    frame = pd.DataFrame({"colour": rng.choice(COLOURS, n), "size": rng.normal(size=n)})
    frame["buy"] = np.where(frame.colour.isin(["green", "red"]), "yes", "no")
    model = Pipeline([("prep", ColumnTransformer([("c", OneHotEncoder(), ["colour"])], remainder="passthrough")),
                      ("tree", DecisionTreeClassifier(max_depth=3, random_state=0))])
    model.fit(frame[["colour", "size"]], frame.buy)
    from workspace.workspace import load_user_workspace

    tmp = tmp_path_factory.mktemp("colour")
    ws = load_user_workspace(*write_pair(tmp, model, frame), "buy")
    previous = services.state().workspace
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CANDOR_CACHE_DIR", str(tmp / "cache"))
        services.init(ws, warm=False)
        yield ws
    if previous is not None:
        services.init(previous, warm=False)


def test_waterfall_reads_colour_equals_blue(colour_ws):
    from app.views import descriptive

    row = int(np.flatnonzero(colour_ws.raw.colour.to_numpy() == "blue")[0])
    assert services.local_view(row).labels[0] == "blue"
    waterfall = descriptive.render_local(row)[0]
    assert "colour = blue" in waterfall.data[0].y and not any(re.match(r"colour = \d", y) for y in waterfall.data[0].y)


def test_surrogate_page_rules_name_the_levels(colour_ws):
    from app.views import surrogate

    fkey = services.surrogates._default_frontier()
    muse, cart = services.muse_view(services.default_muse_key()), services.muse_view(f"{fkey}|cart|5")
    assert cart.heldout.agreement == 1.0
    for view in (muse, cart):
        for r, text in zip(view.rule_set.rules, view.rule_texts):
            _assert_membership_matches_codes(r.rule, text, colour_ws.raw, colour_ws.X, "colour")
        for d, text in zip(view.rule_set.neighborhoods, view.neighborhood_texts):
            _assert_membership_matches_codes(d, text, colour_ws.raw, colour_ws.X, "colour")
    shown = _json(surrogate.render_surrogate(f"{fkey}|cart|5")[1])
    assert "IF colour in {green, red} THEN yes" in shown and not re.search(r"colour (<=|>) ", shown)


def test_persuasive_rules_are_membership_unrounded_and_lossless(colour_ws):
    from app.views import persuasive_rules

    choice = rules_service.default_choice()
    exact = rules_service.rule_view(choice, 30, None, False).simplification
    rounded = rules_service.rule_view(choice, 30, 1, False).simplification
    assert "IF colour in {green, red} THEN yes" in [r.text() for r in exact.rules]
    assert [r.predicates for r in rounded.rules] == [r.predicates for r in exact.rules]
    assert rounded.fidelity_after["agreement"] == exact.fidelity_after["agreement"] == 1.0
    plain = rules_service.rule_view(choice, 30, 1, True).simplification
    assert plain.fidelity_after["lossless"] == 1.0 and plain.fidelity_after["agreement_lost"] == 0.0
    assert any("colour is" in r.text() for r in plain.rules)
    shown = _json(persuasive_rules.render_rules(choice, 30, None, [])[0])
    assert "colour in {green, red}" in shown and not re.search(r"colour (<=|>) ", shown)


def test_persuasive_sentence_names_the_level(colour_ws):
    row = int(np.flatnonzero(colour_ws.raw.colour.to_numpy() == "yellow")[0])
    view = services.persuasive_view(row, 1)
    assert "Strongest factor: colour is yellow, which pushes towards no" in view.simplification.statement
    assert all(c.ok for c in view.simplification.sentences)


def test_check_prints_its_largest_rule_in_levels(tmp_path, capsys):
    """``python -m app check`` names the levels in the surrogate's largest rule, never codes."""
    from app.cli.check import main as check_main

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"colour": rng.choice(COLOURS, 300), "size": rng.normal(size=300)})
    frame["buy"] = np.where(frame.colour.isin(["green", "red"]), "yes", "no")
    model = Pipeline([("prep", ColumnTransformer([("c", OneHotEncoder(), ["colour"])], remainder="passthrough")),
                      ("tree", DecisionTreeClassifier(max_depth=3, random_state=0))]).fit(frame[["colour", "size"]],
                                                                                          frame.buy)
    m, d = write_pair(tmp_path, model, frame)
    assert check_main(["--model", str(m), "--data", str(d), "--target", "buy"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("rules"))
    assert re.search(r"held-out agreement with the model [01]\.\d{3}; largest rule: IF .*colour (not )?in \{[a-z, ]+\}"
                     r".* THEN (yes|no)$", line), line
    assert "colour <=" not in line and "colour >" not in line
