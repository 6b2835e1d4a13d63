"""Built-in questionnaire instruments: published item texts, scale and scoring.

A study file names an instrument (``instrument: jian2000``) and gets its items in the published
order and wording; the object of the items ("the system", "the [tool]") is replaced by the
study's ``object`` (default: the instrument's own word). A study may still give its own
``items`` (label to text), e.g. a translation, and custom Likert questionnaires stay possible
(``instrument: custom``).

Where each wording was checked (``Instrument.wording_source``; also ``docs/study-mode.md``):

- ``jian2000``: the 12 items as listed, with their (+)/(−) signs, in Table 2 of Zhang et al.
  (2023), Front. Psychol. 14:1078438, https://pmc.ncbi.nlm.nih.gov/articles/PMC9945264/table/tab2
  ("The questions of the automation trust scale (Jian et al., 2000)"), where the object reads
  "the interaction mode/virtual image"; here it is the original's "the system". Not checked
  against the 2000 paper itself (not available here).
- ``hoffman2018_satisfaction`` and ``hoffman2018_trust``: **not verified against the paper.** The
  copies of Hoffman et al. (2018, arXiv 1812.04608) and (2023, Front. Comput. Sci.
  5:1096257) reachable here gave their abstracts only, not the scale tables (searched again
  2026-12-05, and on 2026-12-06 with a dozen queries of the project's reference library: its
  copy of https://frontiersin.org/articles/10.3389/fcomp.2023.1096257/full holds the article's
  opening only: title, authors, affiliations, the date (06 February 2023), the abstract and the
  first words of the Introduction. Missing from it: every item of the Explanation Satisfaction
  Scale and of the Trust Scale, their response format (points and anchors), which items are
  reverse-scored and how scale scores are computed; the CC BY 4.0 licence line is not in the
  stored opening either). So the 2023 items are not shipped. The texts below are the
  "[tool]" templates of the 2018 report as quoted, identically, by several independent public
  study implementations. The 2023 edition of the Explanation Satisfaction Scale is not these 8
  items: the authors' own XAITK page (xaitk.org/capabilities/satisfaction-scale, Hoffman, Klein,
  Mueller) says it "consists of nine, 5-point Likert items"; its ninth item's wording could not be
  checked here either. ``wording_verified`` is False for both; ``study validate`` warns
  (:func:`wording_warnings`) and the researcher page says so. Check them against the paper before
  data collection, or give the study's own ``items``.

Scoring (:func:`score`): reverse-coded items become ``scale_points + 1 - x``; ``sum`` and ``mean``
(``total``, kept for older exports) over the items answered. For ``jian2000`` also ``trust``
(mean of items 6-12, raw) and ``distrust`` (mean of items 1-5, raw), the two-factor reading of
Scharowski et al. (2024).

References
----------
.. [1] Jian, J.-Y., Bisantz, A. M., Drury, C. G. (2000). Foundations for an empirically
   determined scale of trust in automated systems. International Journal of Cognitive
   Ergonomics 4(1), 53-71.
.. [2] Hoffman, R. R., Mueller, S. T., Klein, G., Litman, J. (2018). Metrics for Explainable AI:
   Challenges and Prospects. arXiv 1812.04608; (2023) Measures for explainable AI. Frontiers in
   Computer Science 5:1096257.
.. [3] Scharowski, N. et al. (2024). To Trust or Distrust Trust Measures: Validating
   Questionnaires for Trust in AI. arXiv 2403.00582.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

__all__ = ["Instrument", "INSTRUMENTS", "JIAN2000", "HOFFMAN2018_SATISFACTION", "HOFFMAN2018_TRUST", "score",
           "item_texts", "wording_warnings"]


@dataclass(frozen=True)
class Instrument:
    """A published questionnaire.

    Parameters
    ----------
    key : str
        Identifier used in study files (``instrument:``).
    labels : tuple of str
        Stable item keys (database and export), in the published order.
    texts : tuple of str
        Item wording in the same order; ``{object}`` marks the instrument's object.
    default_object : str
        What ``{object}`` reads when the study names none.
    scale_points : int
        Number of response options; responses are integers ``1..scale_points``.
    reverse : frozenset of str
        Labels that are reverse-coded (``scale_points + 1 - x``) before scoring.
    anchors : (str, str)
        Labels of the lowest and highest response.
    require_all : bool
        Whether a study giving its own ``items`` must give every label.
    source : str
        Citation of the instrument.
    edition : str
        Default ``instrument_version`` logged with every answer.
    wording_source : str
        The public copy the wording was checked against (or why it was not).
    wording_verified : bool
        Whether :attr:`texts` was checked against a copy of the published scale.
    """

    key: str
    labels: tuple[str, ...]
    texts: tuple[str, ...]
    default_object: str
    scale_points: int
    reverse: frozenset[str] = frozenset()
    anchors: tuple[str, str] = ("strongly disagree", "strongly agree")
    require_all: bool = True
    source: str = ""
    edition: str = ""
    wording_source: str = ""
    wording_verified: bool = False


#: Jian et al. (2000) trust-in-automation checklist: 12 items, 7 points; items 1-5 (distrust)
#: are reverse-coded for the overall score.
JIAN2000 = Instrument(
    key="jian2000",
    labels=("deceptive", "underhanded", "suspicious", "wary", "harmful",
            "confident", "security", "integrity", "dependable", "reliable", "trust", "familiar"),
    texts=(
        "{Object} is deceptive.",
        "{Object} behaves in an underhanded manner.",
        "I am suspicious of {object}'s intent, action, or outputs.",
        "I am wary of {object}.",
        "{Object}'s actions will have a harmful or injurious outcome.",
        "I am confident in {object}.",
        "{Object} provides security.",
        "{Object} has integrity.",
        "{Object} is dependable.",
        "{Object} is reliable.",
        "I can trust {object}.",
        "I am familiar with {object}.",
    ),
    default_object="the system",
    scale_points=7,
    reverse=frozenset({"deceptive", "underhanded", "suspicious", "wary", "harmful"}),
    anchors=("not at all", "extremely"),
    source="Jian, Bisantz, Drury (2000), Int. J. Cognitive Ergonomics 4(1), 53-71",
    edition="jian2000",
    wording_source="Table 2 of Zhang et al. (2023), Front. Psychol. 14:1078438, "
                   "https://pmc.ncbi.nlm.nih.gov/articles/PMC9945264/table/tab2 (object substituted there)",
    wording_verified=True,
)

_HOFFMAN_UNVERIFIED = ("not verified against Hoffman et al. (2018/2023): the copies reachable gave no scale table; "
                       "wording as quoted identically by independent public study implementations")

#: Hoffman et al. (2018) Explanation Satisfaction Scale: 8 items, 5 points, none reversed.
HOFFMAN2018_SATISFACTION = Instrument(
    key="hoffman2018_satisfaction",
    labels=("understand", "satisfying", "sufficient_detail", "complete",
            "how_to_use", "useful_for_goals", "how_accurate", "when_to_trust"),
    texts=(
        "From the explanation, I understand how {object} works.",
        "This explanation of how {object} works is satisfying.",
        "This explanation of how {object} works has sufficient detail.",
        "This explanation of how {object} works seems complete.",
        "This explanation of how {object} works tells me how to use it.",
        "This explanation of how {object} works is useful to my goals.",
        "This explanation of {object} shows me how accurate {object} is.",
        "This explanation lets me judge when I should trust and not trust {object}.",
    ),
    default_object="the tool",
    scale_points=5,
    anchors=("I disagree strongly", "I agree strongly"),
    require_all=False,
    source="Hoffman, Mueller, Klein, Litman (2018), arXiv 1812.04608",
    edition="hoffman2018-ess-8",
    wording_source=_HOFFMAN_UNVERIFIED,
    wording_verified=False,
)

#: Hoffman et al. (2018) Trust Scale recommended for XAI: 8 items, 5 points; item 6 ("wary") reversed.
HOFFMAN2018_TRUST = Instrument(
    key="hoffman2018_trust",
    labels=("confident", "predictable", "reliable", "safe", "efficient", "wary", "better_than_novice", "like_using"),
    texts=(
        "I am confident in {object}. I feel that it works well.",
        "The outputs of {object} are very predictable.",
        "{Object} is very reliable. I can count on it to be correct all the time.",
        "I feel safe that when I rely on {object} I will get the right answers.",
        "{Object} is efficient in that it works very quickly.",
        "I am wary of {object}.",
        "{Object} can perform the task better than a novice human user.",
        "I like using {object} for decision making.",
    ),
    default_object="the tool",
    scale_points=5,
    reverse=frozenset({"wary"}),
    anchors=("I disagree strongly", "I agree strongly"),
    require_all=False,
    source="Hoffman, Mueller, Klein, Litman (2018), arXiv 1812.04608",
    edition="hoffman2018-trust-8",
    wording_source=_HOFFMAN_UNVERIFIED,
    wording_verified=False,
)

INSTRUMENTS: dict[str, Instrument] = {i.key: i for i in (JIAN2000, HOFFMAN2018_SATISFACTION, HOFFMAN2018_TRUST)}


def item_texts(instrument: Instrument, obj: str | None = None) -> dict[str, str]:
    """Label to published item text, with ``{object}`` read as ``obj`` (default the instrument's).

    Examples
    --------
    >>> item_texts(JIAN2000, "the model")["underhanded"]
    'The model behaves in an underhanded manner.'
    """
    o = obj or instrument.default_object
    cap = o[:1].upper() + o[1:]
    return {lab: t.replace("{Object}", cap).replace("{object}", o) for lab, t in zip(instrument.labels, instrument.texts)}


def wording_warnings(questionnaires) -> list[str]:
    """One line per questionnaire that would show a built-in wording not verified against its paper.

    Parameters
    ----------
    questionnaires : iterable of study.schema.Questionnaire
        A study's questionnaires; one that gives its own ``items`` shows the study's wording and
        is not named.

    Returns
    -------
    list of str
        ``questionnaires[i] (id): ...`` naming the instrument and where its wording comes from.
    """
    out = []
    for i, q in enumerate(questionnaires):
        inst = INSTRUMENTS.get(q.instrument)
        if inst is None or inst.wording_verified or q.wording_note == "the study's own wording":
            continue
        out.append(f"questionnaires[{i}] ({q.id}): the item wording of {inst.key} ({inst.source}) is not verified "
                   f"against the paper ({inst.wording_source}); check it against the paper before collecting data, "
                   "or give the study's own items")
    return out


def score(
    responses: Mapping[str, int],
    *,
    scale_points: int,
    reverse: frozenset[str] | set[str] = frozenset(),
    instrument: str | None = None,
) -> dict[str, float]:
    """Score one participant's answers to one questionnaire.

    Parameters
    ----------
    responses : mapping of str to int
        Item label to raw response in ``1..scale_points``.
    scale_points : int
        Number of response options.
    reverse : set of str, default=frozenset()
        Labels to reverse-code as ``scale_points + 1 - x``.
    instrument : str or None, default=None
        When ``"jian2000"``, the trust and distrust sub-scores are added.

    Returns
    -------
    dict of str to float
        ``sum`` and ``total`` (the mean) after reverse-coding, and ``n_items``; for ``jian2000``
        also ``trust`` (mean of the seven trust items, raw) and ``distrust`` (mean of the five
        distrust items, raw, higher = more distrust).

    Raises
    ------
    ValueError
        If a response is outside ``1..scale_points`` or no responses are given.

    Examples
    --------
    >>> score({"a": 5, "b": 1}, scale_points=5, reverse={"b"})
    {'total': 5.0, 'sum': 10.0, 'n_items': 2}
    """
    if not responses:
        raise ValueError("expected at least one response, got none")
    coded = []
    for label, x in responses.items():
        if not isinstance(x, int) or isinstance(x, bool) or not 1 <= x <= scale_points:
            raise ValueError(f"response to {label!r} must be an integer in 1..{scale_points}, got {x!r}")
        coded.append(scale_points + 1 - x if label in reverse else x)
    out = {"total": sum(coded) / len(coded), "sum": float(sum(coded)), "n_items": len(coded)}
    if instrument == JIAN2000.key:
        trust = [x for k, x in responses.items() if k not in JIAN2000.reverse]
        distrust = [x for k, x in responses.items() if k in JIAN2000.reverse]
        out["trust"] = sum(trust) / len(trust) if trust else float("nan")
        out["distrust"] = sum(distrust) / len(distrust) if distrust else float("nan")
    return out
