"""Validation rules for the study-file keys added in issue 16 (exclusion rule, recruitment links) and
for the questionnaires (built-in instruments with their published items, or custom Likert items).

Each rule takes the :class:`study._rules._Checker` collecting errors with their YAML lines.
"""

from __future__ import annotations

from .instruments import INSTRUMENTS
from .recruitment import URL_RE

#: Longest answer option or model output (stored in 64-character columns).
MAX_OPTION = 64


def _exclusions(c, e, checks) -> None:
    """``exclusions: {max_failed_attention_checks: K}``: the pre-declared rule the analysis applies."""
    p = ("exclusions",)
    if e is None or not c.typed(e, dict, p, "a mapping with max_failed_attention_checks"):
        return
    c.keys(e, p, {"max_failed_attention_checks"}, ("max_failed_attention_checks",))
    k = e.get("max_failed_attention_checks")
    if k is not None and c.typed(k, int, p + ("max_failed_attention_checks",), "an integer") and k < 0:
        c.err(p + ("max_failed_attention_checks",), f"expected 0 or more failed checks, got {k}")
    if "max_failed_attention_checks" in e and not checks:
        c.err(p + ("max_failed_attention_checks",), "an exclusion rule on attention checks needs attention_checks")


def _recruitment(c, r) -> None:
    """``recruitment: {completion_url: https://..., redirect_seconds: S}``: the link shown with the
    completion code, and how long the page waits before going there by itself (null: never)."""
    p = ("recruitment",)
    if r is None or not c.typed(r, dict, p, "a mapping with completion_url"):
        return
    c.keys(r, p, {"completion_url", "redirect_seconds"})
    s = r.get("redirect_seconds")
    if s is not None and c.typed(s, int, p + ("redirect_seconds",), "a whole number of seconds (or null: no "
                                 "automatic redirect)") and not 0 <= s <= 600:
        c.err(p + ("redirect_seconds",), f"expected 0..600 seconds, got {s}")
    if "redirect_seconds" in r and "completion_url" not in r:
        c.err(p + ("redirect_seconds",), "redirect_seconds needs a completion_url to redirect to", at_key=True)
    url = r.get("completion_url")
    if url is not None and (not isinstance(url, str) or not URL_RE.match(url)):
        c.err(p + ("completion_url",), f"expected an http(s) URL of at most 2000 characters without spaces or "
                                       f"quotes ({{code}} is replaced by the completion code), got {str(url)[:80]!r}")


def _questionnaires(c, qs) -> None:
    p = ("questionnaires",)
    if qs is None or not c.typed(qs, list, p, "a list of questionnaires"):
        return
    ids = []
    for i, q in enumerate(qs):
        path = p + (i,)
        if not c.typed(q, dict, path, "a mapping"):
            continue
        kind = q.get("instrument")
        builtin = kind in INSTRUMENTS
        c.keys(q, path, {"id", "instrument", "instrument_version", "items", "scale_points", "object"},
               ("instrument",) if builtin else ("instrument", "instrument_version", "items"))
        if "object" in q:
            if not builtin:
                c.err(path + ("object",), "'object' applies to a built-in instrument (it names what its items "
                                          "are about, e.g. 'the model')", at_key=True)
            else:
                c.text(q["object"], path + ("object",), "what the items are about, e.g. 'the model'", limit=MAX_OPTION)
        qid = q.get("id", kind)
        if c.ident(qid, path + ("id",) if "id" in q else path + ("instrument",)):
            ids.append((qid, path))
        if "instrument_version" in q:
            c.text(q["instrument_version"], path + ("instrument_version",), "a version string naming the source edition")
        if kind == "custom":
            _custom_items(c, q, path)
        elif kind in INSTRUMENTS:
            _builtin_items(c, q, path, INSTRUMENTS[kind])
            if "scale_points" in q:
                c.err(path + ("scale_points",), f"{kind} has a fixed {INSTRUMENTS[kind].scale_points}-point scale", at_key=True)
        elif kind is not None:
            c.err(path + ("instrument",), f"expected one of {sorted(INSTRUMENTS) + ['custom']}, got {kind!r}")
    c.unique([v for v, _ in ids], [q for _, q in ids], "questionnaire id")


def _builtin_items(c, q: dict, path, inst) -> None:
    items = q.get("items")
    ip = path + ("items",)
    if items is None:  # the published wording (study.instruments)
        return
    if not c.typed(items, dict, ip, "a mapping of item label to the exact item text"):
        return
    for label, text in items.items():
        if label not in inst.labels:
            c.err(ip + (label,), f"unknown {inst.key} item label {label!r}; expected one of {list(inst.labels)}", at_key=True)
        else:
            c.text(text, ip + (label,), "the exact item text copied from the source")
    missing = [lab for lab in inst.labels if lab not in items]
    if inst.require_all and missing:
        c.err(ip, f"{inst.key} needs text for all {len(inst.labels)} items; missing {missing}")
    if not items:
        c.err(ip, "expected at least one item")


def _custom_items(c, q: dict, path) -> None:
    sp = q.get("scale_points")
    if sp is None:
        c.err(path, "missing required key 'scale_points' for a custom questionnaire")
    elif c.typed(sp, int, path + ("scale_points",), "an integer") and not 2 <= sp <= 11:
        c.err(path + ("scale_points",), f"expected 2..11 scale points, got {sp}")
    items = q.get("items")
    ip = path + ("items",)
    if items is None or not c.typed(items, list, ip, "a list of items with label and text"):
        return
    if not items:
        c.err(ip, "expected at least one item")
    labels = []
    for j, it in enumerate(items):
        jp = ip + (j,)
        if not c.typed(it, dict, jp, "a mapping with label and text"):
            continue
        c.keys(it, jp, {"label", "text", "reverse"}, ("label", "text"))
        if "label" in it and c.ident(it["label"], jp + ("label",)):
            labels.append((it["label"], jp + ("label",)))
        if "text" in it:
            c.text(it["text"], jp + ("text",))
        if "reverse" in it:
            c.typed(it["reverse"], bool, jp + ("reverse",), "true or false")
    c.unique([v for v, _ in labels], [q for _, q in labels], "item label")
