"""Recruitment platforms: the participant, study and session ids a platform puts in the study link,
and the completion link a participant returns with.

Prolific appends ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID`` to the study URL; Amazon
Mechanical Turk (an ExternalQuestion) appends ``workerId``, ``assignmentId`` and ``hitId``. The
ones present when a participant consents are stored with the participant (``participants.recruitment``),
and the platform's participant id (``prolific:<PROLIFIC_PID>`` or ``mturk:<workerId>``) is unique per
study, so one platform account cannot take a study twice. A study file's
``recruitment.completion_url`` is the link shown with the completion code (``{code}`` is replaced
by the participant's code).
"""

from __future__ import annotations

import re
from typing import Mapping
from urllib.parse import quote

__all__ = ["PARAMS", "parse_params", "recruitment_id", "completion_link", "URL_RE"]

#: URL parameters per platform; the first names the participant.
PARAMS = {"prolific": ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"), "mturk": ("workerId", "assignmentId", "hitId")}
_VALUE = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
#: A completion URL: http(s), no whitespace or quotes, at most 2,000 characters.
URL_RE = re.compile(r"https?://[^\s\"'<>]{1,1990}\Z")


def parse_params(query: Mapping | None) -> dict[str, str]:
    """The recruitment parameters among the study link's query parameters.

    Parameters
    ----------
    query : mapping or None
        The link's query parameters (other keys, such as the resume token ``t``, are ignored).

    Returns
    -------
    dict of str to str
        The known parameters present (see :data:`PARAMS`); empty when there are none.

    Raises
    ------
    ValueError
        If a known parameter is not 1-64 letters, digits, '-' or '_' (the message names it), or a
        platform's other ids come without its participant id.
    """
    out = {}
    for names in PARAMS.values():
        for name in names:
            v = (query or {}).get(name)
            if v is None or v == "":
                continue
            if not isinstance(v, str) or not _VALUE.match(v):
                raise ValueError(f"The study link's {name} is not valid (expected 1-64 letters, digits, '-' or '_'); "
                                 "please open the link from the recruitment site again.")
            out[name] = v
    for names in PARAMS.values():
        if any(n in out for n in names[1:]) and names[0] not in out:
            raise ValueError(f"The study link has {', '.join(n for n in names[1:] if n in out)} but no {names[0]}; "
                             "please open the link from the recruitment site again.")
    return out


def recruitment_id(params: Mapping[str, str]) -> str | None:
    """``prolific:<PROLIFIC_PID>`` or ``mturk:<workerId>`` (unique per study), or None."""
    for platform, names in PARAMS.items():
        if names[0] in params:
            return f"{platform}:{params[names[0]]}"
    return None


def completion_link(url: str | None, code: str) -> str | None:
    """``url`` with ``{code}`` replaced by the URL-quoted completion ``code``; None without a URL."""
    return None if not url else url.replace("{code}", quote(code, safe=""))
