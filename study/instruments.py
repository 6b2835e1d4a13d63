"""Built-in questionnaire instruments: item *labels*, scale and scoring only.

The exact item wording is **not** stored here. docs/methods.md, "Study mode" requires that item
text be copied from the cited source when a study is built, so a study file
supplies the text of every item (keyed by the labels below) together with an
``instrument_version`` naming the edition it copied from. The labels are short
paraphrases of each item's content, used as stable keys in the database and in
exports; they are not the wording shown to participants.

References
----------
.. [1] Jian, J.-Y., Bisantz, A. M., Drury, C. G. (2000). Foundations for an
   empirically determined scale of trust in automated systems. International
   Journal of Cognitive Ergonomics 4(1), 53-71.
.. [2] Hoffman, R. R., Mueller, S. T., Klein, G., Litman, J. (2018). Metrics for
   Explainable AI: Challenges and Prospects. arXiv 1812.04608.
.. [3] Scharowski, N. et al. (2024). To Trust or Distrust Trust Measures:
   Validating Questionnaires for Trust in AI. arXiv 2403.00582 (two-factor
   trust / distrust structure of [1]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

__all__ = ["Instrument", "INSTRUMENTS", "JIAN2000", "HOFFMAN2018_SATISFACTION", "score"]


@dataclass(frozen=True)
class Instrument:
    """A questionnaire definition without item wording.

    Parameters
    ----------
    key : str
        Identifier used in study files (``instrument:``).
    labels : tuple of str
        Item labels in presentation order of the source (paraphrased content).
    scale_points : int
        Number of response options; responses are integers ``1..scale_points``.
    reverse : frozenset of str
        Labels that are reverse-coded (``scale_points + 1 - x``) before scoring.
    require_all : bool
        Whether a study must supply text for every label (needed when sub-scores
        depend on the full item set).
    source : str
        Citation of the instrument.
    """

    key: str
    labels: tuple[str, ...]
    scale_points: int
    reverse: frozenset[str] = frozenset()
    require_all: bool = True
    source: str = ""


#: Jian et al. (2000) trust-in-automation scale: 12 items, 7-point agreement
#: scale; the first five express distrust (reverse-coded as 8 - x for the total).
#: Content per docs/methods.md, "Study mode" [P]; order as in the published checklist [P].
JIAN2000 = Instrument(
    key="jian2000",
    labels=(
        "deceptive", "underhanded", "suspicious", "wary", "harmful",
        "confident", "security", "integrity", "dependable", "reliable",
        "trust", "familiar",
    ),
    scale_points=7,
    reverse=frozenset({"deceptive", "underhanded", "suspicious", "wary", "harmful"}),
    require_all=True,
    source="Jian, Bisantz, Drury (2000), Int. J. Cognitive Ergonomics 4(1)",
)

#: Hoffman et al. (2018) Explanation Satisfaction Scale, 5-point Likert; scored
#: as the mean of the items shown. Versions differ (about 8 items in the report,
#: 9 in the XAITK listing), so a study may use a subset of these labels and must
#: name its ``instrument_version`` (docs/methods.md, "Study mode").
HOFFMAN2018_SATISFACTION = Instrument(
    key="hoffman2018_satisfaction",
    labels=(
        "understand", "satisfying", "sufficient_detail", "complete",
        "useful_for_goals", "how_to_use", "accuracy_information", "when_to_trust",
    ),
    scale_points=5,
    reverse=frozenset(),
    require_all=False,
    source="Hoffman, Mueller, Klein, Litman (2018), arXiv 1812.04608",
)

INSTRUMENTS: dict[str, Instrument] = {
    JIAN2000.key: JIAN2000,
    HOFFMAN2018_SATISFACTION.key: HOFFMAN2018_SATISFACTION,
}


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
        ``total``: mean after reverse-coding (for Jian et al. 2000, the overall
        trust score on 1..7). For ``jian2000`` also ``trust`` (mean of the seven
        trust items, raw) and ``distrust`` (mean of the five distrust items, raw,
        higher = more distrust), following the two-factor reading of
        Scharowski et al. (2024).

    Raises
    ------
    ValueError
        If a response is outside ``1..scale_points`` or no responses are given.

    Examples
    --------
    >>> score({"a": 5, "b": 1}, scale_points=5, reverse={"b"})
    {'total': 5.0}
    """
    if not responses:
        raise ValueError("expected at least one response, got none")
    coded = []
    for label, x in responses.items():
        if not isinstance(x, int) or isinstance(x, bool) or not 1 <= x <= scale_points:
            raise ValueError(f"response to {label!r} must be an integer in 1..{scale_points}, got {x!r}")
        coded.append(scale_points + 1 - x if label in reverse else x)
    out = {"total": sum(coded) / len(coded)}
    if instrument == JIAN2000.key:
        trust = [x for k, x in responses.items() if k not in JIAN2000.reverse]
        distrust = [x for k, x in responses.items() if k in JIAN2000.reverse]
        out["trust"] = sum(trust) / len(trust) if trust else float("nan")
        out["distrust"] = sum(distrust) / len(distrust) if distrust else float("nan")
    return out
