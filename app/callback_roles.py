"""Which role each Dash callback needs, checked on the server before the callback runs (:mod:`app.access`).

A callback is named by the ids of the components it updates (its outputs). It needs the highest
role any of its outputs needs in :data:`ROLE_BY_OUTPUT` (default ``viewer``: reading a page), and at
least ``analyst`` if it is a background job. ``participant`` marks the study participant's callbacks:
anyone may call those, without logging in; an anonymous request may call nothing else. Dash Pages'
own routing callback needs ``participant`` for a ``/study/...`` address and ``viewer`` for every
other page.
"""
from __future__ import annotations

import json

from accounts.roles import role_rank

from . import ids
from study import ids as study_ids

PARTICIPANT = "participant"

ROLE_BY_OUTPUT: dict[str, str] = {
    # what every page explains, for every user and worker: uploads, install, back to the sample, the class
    ids.UPLOAD_MODEL_TOKEN: "analyst", ids.UPLOAD_DATA_TOKEN: "analyst", ids.UPLOAD_RESULT: "analyst",
    ids.UPLOAD_SAMPLE_RESULT: "analyst", ids.CLASS_SWITCHED: "analyst",
    # files stored on the server from the Text page
    ids.TEXT_UPLOAD: "analyst", ids.TEXT_CONLLU_UPLOAD: "analyst",
    # cancelling a background job (the jobs themselves need analyst as background callbacks)
    ids.SURROGATE_CANCEL: "analyst", ids.TEXT_SLOW_CANCEL: "analyst", ids.TEXT_HEADS_CANCEL: "analyst",
    ids.TEXT_LOPARDO_CANCEL: "analyst",
    # the participant flow of /study/<id>: anonymous by design
    study_ids.TOKEN: PARTICIPANT, study_ids.BODY: PARTICIPANT, study_ids.ERROR: PARTICIPANT,
    study_ids.REFRESH: PARTICIPANT, study_ids.TIMING: PARTICIPANT, study_ids.RENDER_T: PARTICIPANT,
    study_ids.URL_SYNC: PARTICIPANT,
    # /study-admin: the page and its login form need a viewer; its data callbacks (study list, dashboard,
    # exports) check the researcher role themselves and answer with a login prompt
    # (app/callbacks/study_researcher.py), so they stay at the default here.
}

PAGES_CONTENT = "_pages_content"
PAGES_LOCATION = "_pages_location"


def output_ids(key: str) -> list[str]:
    """The component ids a callback key updates (``"a.children"``, ``"..a.x...b.y.."``, pattern ids by ``type``)."""
    parts = key[2:-2].split("...") if key.startswith("..") else [key]
    found = []
    for part in parts:
        cid = part.rpartition(".")[0]
        if cid.startswith("{"):
            try:
                cid = str(json.loads(cid).get("type", cid))
            except (ValueError, AttributeError):
                pass
        found.append(cid)
    return found


def _pathname(inputs) -> str | None:
    for item in inputs or ():
        if isinstance(item, list):
            found = _pathname(item)
            if found is not None:
                return found
        elif isinstance(item, dict) and item.get("id") == PAGES_LOCATION and item.get("property") == "pathname":
            value = item.get("value")
            return value if isinstance(value, str) else ""
    return None


def required_role(key: str, body: dict, *, background: bool) -> str:
    """The role a call of the callback ``key`` needs (``participant``, ``viewer``, ``analyst``, ``researcher``).

    Parameters
    ----------
    key : str
        The callback's output key, as Dash looks it up (the request's ``output``).
    body : dict
        The request's JSON body (its ``inputs`` give Dash Pages' routing callback the address).
    background : bool
        Whether the callback is a background job.
    """
    outs = output_ids(key)
    if PAGES_CONTENT in outs:
        path = _pathname(body.get("inputs")) or ""
        return PARTICIPANT if path.startswith("/study/") and path.count("/") == 2 else "viewer"
    roles = [ROLE_BY_OUTPUT.get(cid, "viewer") for cid in outs]
    if background:
        roles.append("analyst")
    ranked = [r for r in roles if r != PARTICIPANT]
    return max(ranked, key=role_rank) if ranked else PARTICIPANT
