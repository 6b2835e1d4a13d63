"""Published instruments: a study names them, gets their wording, and the scores match hand sums."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from study.analysis import questionnaire_scores
from study.instruments import HOFFMAN2018_SATISFACTION, HOFFMAN2018_TRUST, JIAN2000, score
from study.schema import parse_study, validate_text

BASE = """
id: s
model: {id: m, outputs: [a, b]}
stimuli: [{id: x, row: 1}, {id: y, row: 2}]
conditions: [{id: c1, explanation: descriptive}, {id: c2, explanation: persuasive}]
tasks: [decision_with_advice]
questionnaires:
"""

# Fixed responses in published item order, and the sums and means worked out by hand.
JIAN = [2, 1, 3, 2, 1, 6, 5, 6, 7, 6, 5, 4]       # items 1-5 reversed: 6 7 5 6 7 -> 31; items 6-12: 39
TRUST = [4, 3, 5, 4, 2, 4, 3, 5]                  # item 6 ("wary") reversed: 6 - 4 = 2 -> 28
ESS = [5, 4, 3, 4, 2, 3, 1, 4]                    # nothing reversed -> 26


def test_study_naming_instruments_gets_the_published_items_in_order_with_reverse_flags():
    study = parse_study(BASE + "  - {instrument: jian2000, object: the model}\n"
                               "  - {instrument: hoffman2018_trust}\n  - {instrument: hoffman2018_satisfaction}\n")
    jian, trust, ess = study.questionnaires
    assert [i.label for i in jian.items] == list(JIAN2000.labels) and jian.scale_points == 7
    assert jian.items[1].text == "The model behaves in an underhanded manner."
    assert jian.items[2].text == "I am suspicious of the model's intent, action, or outputs."
    assert jian.items[11].text == "I am familiar with the model."
    assert [i.reverse for i in jian.items] == [True] * 5 + [False] * 7
    assert jian.instrument_version == "jian2000" and jian.anchors == ("not at all", "extremely")
    assert len(trust.items) == 8 and trust.scale_points == 5 and trust.reverse == frozenset({"wary"})
    assert trust.items[0].text == "I am confident in the tool. I feel that it works well."
    assert len(ess.items) == 8 and ess.reverse == frozenset() and "NOT verified" in ess.wording_note
    assert "PMC9945264" in jian.wording_note


def test_own_wording_and_custom_items_stay_possible_and_unknown_keys_are_refused_with_lines():
    study = parse_study(BASE + "  - {instrument: hoffman2018_trust, instrument_version: v2, items: {wary: 'Ich bin "
                               "misstrauisch.'}}\n")
    (q,) = study.questionnaires
    assert [(i.label, i.text, i.reverse) for i in q.items] == [("wary", "Ich bin misstrauisch.", True)]
    errors = validate_text(BASE + "  - {instrument: jian2000, object: 3}\n  - {instrument: custom, object: x, "
                                  "instrument_version: v, scale_points: 5, items: [{label: a, text: t}]}\n")
    assert [(e.line, e.path) for e in errors] == [(8, "questionnaires[0].object"), (9, "questionnaires[1].object")]


@pytest.mark.parametrize("inst,answers,expected", [
    (JIAN2000, JIAN, {"sum": 70.0, "total": 70 / 12, "n_items": 12, "trust": 39 / 7, "distrust": 9 / 5}),
    (HOFFMAN2018_TRUST, TRUST, {"sum": 28.0, "total": 3.5, "n_items": 8}),
    (HOFFMAN2018_SATISFACTION, ESS, {"sum": 26.0, "total": 3.25, "n_items": 8}),
])
def test_scores_equal_hand_computed_sums_and_means_with_reverse_items(inst, answers, expected):
    s = score(dict(zip(inst.labels, answers)), scale_points=inst.scale_points, reverse=inst.reverse,
              instrument=inst.key)
    assert s == pytest.approx(expected)


def test_analysis_scores_each_participant_from_the_stored_rows():
    rows = []
    for pid, answers in (("p1", JIAN), ("p2", [7] * 12)):
        for lab, x in zip(JIAN2000.labels, answers):
            rows.append(dict(participant_id=pid, condition="c1", block_index=0, questionnaire_id="jian2000",
                             instrument="jian2000", item_label=lab, response=x, scale_points=7,
                             reverse=lab in JIAN2000.reverse))
    out = questionnaire_scores(pd.DataFrame(rows)).set_index("participant_id")
    assert out.loc["p1", "sum"] == 70 and out.loc["p1", "total"] == pytest.approx(70 / 12)
    # all 7s: the five distrust items score 1 each after reversing -> 5 + 7 * 7 = 54
    assert out.loc["p2", "sum"] == 54 and out.loc["p2", "distrust"] == 7


def test_unverified_wording_is_named_by_validate_and_the_studys_own_wording_is_not(tmp_path):
    # Hoffman et al.'s two scales could not be checked against the paper here: a study that shows their
    # built-in wording is told so by `study validate`; one that gives its own items, or uses Jian et al., is not
    from study.cli import data_check
    from study.instruments import wording_warnings

    study = parse_study(BASE + "  - {instrument: jian2000}\n  - {instrument: hoffman2018_trust}\n"
                               "  - {instrument: hoffman2018_satisfaction, items: {understand: 'Mine.'}}\n")
    (line,) = wording_warnings(study.questionnaires)
    assert line.startswith("questionnaires[1] (hoffman2018_trust): the item wording of hoffman2018_trust")
    assert "not verified" in line and "give the study's own items" in line
    bundled = (Path(__file__).resolve().parents[2] / "study" / "examples" / "reliance-breast-cancer.yaml").read_text()
    path = tmp_path / "reliance-breast-cancer.yaml"
    path.write_text(bundled.replace("  - {instrument: jian2000, object: the model}\n",
                                    "  - {instrument: jian2000, object: the model}\n"
                                    "  - {instrument: hoffman2018_satisfaction, object: the model}\n"))
    errors, warnings, _ = data_check(str(path))
    assert errors == [] and len(warnings) == 1
    assert warnings[0].startswith(f"{path}: warning: questionnaires[1] (hoffman2018_satisfaction)")
