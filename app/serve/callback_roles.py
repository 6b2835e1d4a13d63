"""Which role each Dash callback needs, checked on the server before the callback runs (:mod:`app.serve.access`).

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

from ..shell import ids
from ..report import button as report_button
from study import ids as study_ids

PARTICIPANT = "participant"

ROLE_BY_OUTPUT: dict[str, str] = {
    # what every page explains, for every user and worker: uploads, install, back to the sample, the class
    ids.UPLOAD_MODEL_TOKEN: "analyst", ids.UPLOAD_DATA_TOKEN: "analyst", ids.UPLOAD_RESULT: "analyst",
    ids.UPLOAD_SAMPLE_RESULT: "analyst", ids.UPLOAD_SWITCHED: "analyst", ids.CLASS_SWITCHED: "analyst",
    ids.UPLOAD_FEATURES_TOKEN: "analyst",
    # files stored on the server from the Text page
    ids.TEXT_UPLOAD: "analyst", ids.TEXT_CONLLU_UPLOAD: "analyst",
    # cancelling a background job (the jobs themselves need analyst as background callbacks)
    ids.SURROGATE_CANCEL: "analyst", ids.TEXT_SLOW_CANCEL: "analyst", ids.TEXT_HEADS_CANCEL: "analyst",
    ids.TEXT_LOPARDO_CANCEL: "analyst", ids.STABILITY_CANCEL: "analyst", ids.STORY_CANCEL: "analyst",
    # the participant flow of /study/<id>: anonymous by design
    study_ids.TOKEN: PARTICIPANT, study_ids.BODY: PARTICIPANT, study_ids.ERROR: PARTICIPANT,
    study_ids.REFRESH: PARTICIPANT, study_ids.TIMING: PARTICIPANT, study_ids.RENDER_T: PARTICIPANT,
    study_ids.URL_SYNC: PARTICIPANT,
    # /study-admin: the page and its login form need a viewer; its data callbacks (study list, dashboard,
    # exports) check the researcher role themselves and answer with a login prompt
    # (app/callbacks/study_researcher.py), so they stay at the default here.
}

VIEWER_JOBS: dict[str, frozenset[str]] = {
    # opening the Surrogate page computes the default frontier (shared and cached per model): a viewer
    # may start it; "Fit MUSE" with other settings needs an analyst (app/callbacks/surrogate.py), and so does the fit
    # of a link's settings the cache lacks (its trigger, ids.SURROGATE_LINK_FIT, starts "Fit MUSE"'s job); the page
    # starts the default frontier's job through ids.SURROGATE_FRONTIER_GO (app/callbacks/surrogate.py::open_page)
    # (INITIAL: the call Dash makes when the page is drawn, with no changed input)
    ids.SURROGATE_FRONTIER_KEY: frozenset({f"{ids.URL}.pathname", "INITIAL", f"{ids.SURROGATE_FRONTIER_GO}.data"}),
    # "Export report" (the navbar, app/callbacks/report.py): a viewer may export the row they can see
    report_button.DOWNLOAD: frozenset({f"{report_button.EXPORT}.n_clicks"}),
    report_button.STATUS: frozenset({f"{report_button.EXPORT}.n_clicks"}),
}
"""Background callbacks a viewer may start (every output of the callback listed), and the only inputs whose
change may start them."""

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


def _routed_path(inputs) -> str | None:
    """The address Dash Pages' router will render, or None if the request does not say it plainly.

    Dash passes a callback's inputs by position and ignores their ids, so the router renders its
    *first* input's value: that one must be ``_pages_location.pathname``, and every other input naming
    ``_pages_location.pathname`` must agree with it (a request that put a study address second and
    ``/persuasive`` first used to be served as a participant's).
    """
    if not isinstance(inputs, list) or not inputs:
        return None
    first = inputs[0]
    if not (isinstance(first, dict) and first.get("id") == PAGES_LOCATION and first.get("property") == "pathname"
            and isinstance(first.get("value"), str)):
        return None

    def named(items):
        for item in items:
            if isinstance(item, list):
                yield from named(item)
            elif isinstance(item, dict) and item.get("id") == PAGES_LOCATION and item.get("property") == "pathname":
                yield item.get("value")

    path = first["value"]
    return path if all(v == path for v in named(inputs)) else None


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
        path = _routed_path(body.get("inputs")) or ""
        return PARTICIPANT if path.startswith("/study/") and path.count("/") == 2 else "viewer"
    roles = [ROLE_BY_OUTPUT.get(cid, "viewer") for cid in outs]
    changed = body.get("changedPropIds")
    if changed == []:  # the page was drawn: Dash calls the callback with no changed input (the Surrogate page's
        changed = ["INITIAL"]  # frontier, as a real browser opens it; the viewer was refused with 403 here)
    viewer_job = (bool(outs) and all(o in VIEWER_JOBS for o in outs) and isinstance(changed, list) and changed
                  and all(isinstance(c, str) and all(c in VIEWER_JOBS[o] for o in outs) for c in changed))
    if background and not viewer_job:
        roles.append("analyst")
    ranked = [r for r in roles if r != PARTICIPANT]
    return max(ranked, key=role_rank) if ranked else PARTICIPANT
