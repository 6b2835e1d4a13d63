"""Validation rules for study files; every error names its YAML line."""

from __future__ import annotations

import math
import re
from typing import Any

from ._located import Error, Located
from ._rules_more import MAX_OPTION, _exclusions, _questionnaires, _recruitment

TASKS = ("forward_prediction", "decision_with_advice")
#: ``none``: no advice (the participant decides alone); ``prediction``: the model's label only;
#: ``descriptive``/``persuasive``: the label with the full or the simplified explanation.
EXPLANATIONS = ("none", "prediction", "descriptive", "persuasive")
DESIGNS = ("between", "within")
ID_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}\Z")
TOP_KEYS = {
    "id", "title", "consent_version", "consent_text", "instructions", "model", "stimuli",
    "conditions", "design", "randomisation", "tasks", "attention_checks", "questionnaires",
    "confidence_scale", "max_participants", "recruitment", "exclusions", "debrief",
}
#: Longest text a study may show (consent, instructions, prompts, item text), in characters.
MAX_STUDY_TEXT = 20_000
REQUIRED_TOP = ("id", "model", "stimuli", "conditions", "tasks")


def n_sequences(n_conditions: int) -> int:
    """Number of Williams-design sequences: ``n`` if ``n`` is even, else ``2n``."""
    return n_conditions if n_conditions % 2 == 0 else 2 * n_conditions


class _Checker:
    def __init__(self, loc: Located):
        self.loc = loc
        self.errors: list[Error] = []

    def err(self, path, msg, at_key=False):
        self.errors.append(self.loc.error(path, msg, at_key=at_key))

    def typed(self, value: Any, kind, path, what: str) -> bool:
        ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
        if not ok:
            self.err(path, f"expected {what}, got {type(value).__name__} {value!r}")
        return ok

    def keys(self, d: dict, path, allowed: set, required: tuple = ()) -> None:
        for k in d:
            if k not in allowed:
                self.err(path + (k,), f"unknown key {k!r}; expected one of {sorted(allowed)}", at_key=True)
        for k in required:
            if k not in d:
                self.err(path, f"missing required key {k!r}")

    def ident(self, value, path) -> bool:
        if not isinstance(value, str) or not ID_RE.match(value):
            self.err(path, f"expected an id of lower-case letters, digits, '-' or '_' (max 64), got {value!r}")
            return False
        return True

    def text(self, value, path, what="a non-empty string", limit: int = MAX_STUDY_TEXT) -> bool:
        if not isinstance(value, str) or not value.strip():
            self.err(path, f"expected {what}, got {value!r}")
            return False
        if len(value) > limit:
            self.err(path, f"expected at most {limit} characters, got {len(value)}")
            return False
        return True

    def options(self, values: list, path, what: str) -> None:
        for i, o in enumerate(values):
            if isinstance(o, (dict, list)) or o is None:
                self.err(path + (i,), f"expected a {what} (text or number), got {type(o).__name__}")
            elif len(str(o)) > MAX_OPTION:
                self.err(path + (i,), f"expected a {what} of at most {MAX_OPTION} characters, got {len(str(o))}")
        self.unique([str(o) for o in values], [path + (i,) for i in range(len(values))], what)

    def unique(self, values: list, paths: list, what: str) -> None:
        seen = set()
        for v, p in zip(values, paths):
            if v in seen:
                self.err(p, f"duplicate {what} {v!r}")
            seen.add(v)


def check_study(loc: Located) -> list[Error]:
    """Return every error in the located study document ``loc``."""
    c = _Checker(loc)
    d = loc.data
    if not isinstance(d, dict):
        c.err((), f"expected a mapping at the top level, got {type(d).__name__}")
        return c.errors
    c.keys(d, (), TOP_KEYS, REQUIRED_TOP)
    if "id" in d:
        c.ident(d["id"], ("id",))
    for k in ("title", "consent_text", "instructions", "debrief"):
        if k in d:
            c.text(d[k], (k,))
    if "consent_version" in d:
        c.text(str(d["consent_version"]) if isinstance(d["consent_version"], (int, float)) else d["consent_version"],
               ("consent_version",), "a consent version string", limit=64)
    outputs = _model(c, d.get("model"))
    numeric = isinstance(d.get("model"), dict) and d["model"].get("answer") == "numeric"
    n_items, n_wrong_free = _stimuli(c, d.get("stimuli"), outputs, numeric)
    n_cond = _conditions(c, d.get("conditions"))
    design = d.get("design", "between")
    if design not in DESIGNS:
        c.err(("design",), f"expected one of {list(DESIGNS)}, got {design!r}")
    elif design == "within" and n_cond and n_items and n_items % n_cond:
        c.err(("stimuli",), f"within-subject design needs the {n_items} stimuli to split evenly into {n_cond} item sets")
    units = n_cond if design != "within" else n_sequences(n_cond)
    _randomisation(c, d.get("randomisation"), units, n_wrong_free)
    _tasks(c, d.get("tasks"))
    _no_advice_needs_a_decision(c, d.get("conditions"), d.get("tasks"))
    if numeric and isinstance(d.get("tasks"), list) and "forward_prediction" in d["tasks"]:
        c.err(("tasks",), "forward_prediction asks for one of the model's labels; a numeric study takes "
                          "decision_with_advice only")
    _attention(c, d.get("attention_checks"), n_items)
    _questionnaires(c, d.get("questionnaires"))
    _confidence_scale(c, d.get("confidence_scale"))
    _recruitment(c, d.get("recruitment"))
    _exclusions(c, d.get("exclusions"), d.get("attention_checks"))
    mp = d.get("max_participants")
    if mp is not None and c.typed(mp, int, ("max_participants",), "an integer") and not 1 <= mp <= 10**6:
        c.err(("max_participants",), f"expected 1..1000000 participants, got {mp}")
    return c.errors


def _confidence_scale(c: _Checker, cs) -> None:
    """``confidence_scale: [low, high]``: two finite numbers, low < high (default [0, 100])."""
    p = ("confidence_scale",)
    if cs is None or not c.typed(cs, list, p, "a list [low, high]"):
        return
    if len(cs) != 2:
        c.err(p, f"expected [low, high], got {len(cs)} values")
        return
    ok = True
    for i, x in enumerate(cs):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or abs(x) > 1e9:
            c.err(p + (i,), f"expected a finite number (|x| <= 1e9), got {x!r}")
            ok = False
    if ok and not cs[0] < cs[1]:
        c.err(p, f"expected low < high, got {cs}")


def _model(c: _Checker, m) -> list:
    p = ("model",)
    if m is None or not c.typed(m, dict, p, "a mapping with id and outputs"):
        return []
    numeric = m.get("answer") == "numeric"
    c.keys(m, p, {"id", "kind", "outputs", "answer", "range"}, ("id", "range") if numeric else ("id", "outputs"))
    if "answer" in m and m["answer"] not in ("label", "numeric"):
        c.err(p + ("answer",), f"expected 'label' or 'numeric', got {m['answer']!r}")
    if numeric:
        if "outputs" in m:
            c.err(p + ("outputs",), "a numeric answer has no outputs to choose from; give its range [low, high]",
                  at_key=True)
        _range(c, m.get("range"), p + ("range",))
        if "id" in m:
            c.text(m["id"], p + ("id",), "a model id string")
        return []
    if "range" in m:
        c.err(p + ("range",), "range applies to 'answer: numeric'", at_key=True)
    if "id" in m:
        c.text(m["id"], p + ("id",), "a model id string")
    if "kind" in m and m["kind"] not in ("tabular", "text"):
        c.err(p + ("kind",), f"expected 'tabular' or 'text', got {m['kind']!r}")
    out = m.get("outputs")
    if out is None or not c.typed(out, list, p + ("outputs",), "a list of answer options"):
        return []
    if len(out) < 2:
        c.err(p + ("outputs",), f"expected at least 2 answer options, got {len(out)}")
    c.options(out, p + ("outputs",), "model output")
    return [str(o) for o in out]


def _range(c: _Checker, r, p) -> None:
    """``range: [low, high]`` of a numeric answer: two finite numbers, low < high."""
    if r is None or not c.typed(r, list, p, "a list [low, high]"):
        return
    if len(r) != 2 or any(isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) for x in r):
        c.err(p, f"expected two finite numbers [low, high], got {r!r}")
    elif not r[0] < r[1]:
        c.err(p, f"expected low < high, got {r}")


def _stimuli(c: _Checker, s, outputs: list, numeric: bool = False) -> tuple[int, int]:
    p = ("stimuli",)
    if s is None:
        return 0, 0
    if isinstance(s, dict):
        c.keys(s, p, {"rows", "texts"})
        if len(s) != 1:
            c.err(p, "expected exactly one of 'rows' or 'texts'")
            return 0, 0
        key, vals = next(iter(s.items()))
        kind, what = (int, "an integer row id") if key == "rows" else (str, "a text")
        if not c.typed(vals, list, p + (key,), f"a list of {key}"):
            return 0, 0
        for i, v in enumerate(vals):
            if c.typed(v, kind, p + (key, i), what) and kind is int and v < 0:
                c.err(p + (key, i), f"expected a row number >= 0, got {v}")
            elif kind is str and isinstance(v, str):
                c.text(v, p + (key, i))
        if key == "rows":
            c.unique(vals, [p + (key, i) for i in range(len(vals))], "row")
        if not vals:
            c.err(p + (key,), "expected at least one stimulus")
        return len(vals), len(vals)
    if not c.typed(s, list, p, "a list of stimuli or a mapping with 'rows' or 'texts'"):
        return 0, 0
    if not s:
        c.err(p, "expected at least one stimulus")
    ids, n_ok = [], 0
    for i, x in enumerate(s):
        q = p + (i,)
        if not c.typed(x, dict, q, "a mapping with id and row or text"):
            continue
        c.keys(x, q, {"id", "row", "text", "truth", "model_correct"}, ("id",))
        if "id" in x and c.ident(x["id"], q + ("id",)):
            ids.append((x["id"], q + ("id",)))
        if ("row" in x) == ("text" in x):
            c.err(q, "expected exactly one of 'row' or 'text'")
        if "row" in x and c.typed(x["row"], int, q + ("row",), "an integer row id") and x["row"] < 0:
            c.err(q + ("row",), f"expected a row number >= 0, got {x['row']}")
        if "text" in x:
            c.text(x["text"], q + ("text",))
        if "truth" in x and numeric and (isinstance(x["truth"], bool) or not isinstance(x["truth"], (int, float))):
            c.err(q + ("truth",), f"expected the true number (a numeric answer), got {x['truth']!r}")
        if "model_correct" in x and numeric:
            c.err(q + ("model_correct",), "a numeric answer has no right or wrong advice; remove model_correct",
                  at_key=True)
        if "truth" in x and outputs and str(x["truth"]) not in outputs:
            c.err(q + ("truth",), f"expected one of the model outputs {outputs}, got {x['truth']!r}")
        if "model_correct" in x:
            c.typed(x["model_correct"], bool, q + ("model_correct",), "true or false")
        n_ok += x.get("model_correct") is not False
    c.unique([v for v, _ in ids], [q for _, q in ids], "stimulus id")
    return len(s), n_ok


def _conditions(c: _Checker, conds) -> int:
    p = ("conditions",)
    if conds is None or not c.typed(conds, list, p, "a list of conditions"):
        return 0
    if len(conds) < 2:
        c.err(p, f"expected at least 2 conditions, got {len(conds)}")
    ids = []
    for i, x in enumerate(conds):
        q = p + (i,)
        if not c.typed(x, dict, q, "a mapping with id and explanation"):
            continue
        c.keys(x, q, {"id", "explanation", "operators", "label", "show_dropped"}, ("id", "explanation"))
        if "show_dropped" in x and c.typed(x["show_dropped"], bool, q + ("show_dropped",), "true or false") \
                and x["show_dropped"] and x.get("explanation") in EXPLANATIONS and x.get("explanation") != "persuasive":
            c.err(q + ("show_dropped",), "show_dropped applies only to a 'persuasive' condition (it lists what the "
                                         "simplification left out)")
        if "id" in x and c.ident(x["id"], q + ("id",)):
            ids.append((x["id"], q + ("id",)))
        if "explanation" in x and x["explanation"] not in EXPLANATIONS:
            c.err(q + ("explanation",), f"expected one of {list(EXPLANATIONS)}, got {x['explanation']!r}")
        ops = x.get("operators")
        if ops is not None and c.typed(ops, list, q + ("operators",), "a list of operator names"):
            for j, o in enumerate(ops):
                c.text(o, q + ("operators", j), "an operator name")
            if ops and x.get("explanation") in EXPLANATIONS and x.get("explanation") != "persuasive":
                c.err(q + ("operators",), "operators apply only to a 'persuasive' condition")
    c.unique([v for v, _ in ids], [q for _, q in ids], "condition id")
    return len(conds)


def _no_advice_needs_a_decision(c: _Checker, conds, tasks) -> None:
    """A no-advice arm (``explanation: none``) has only the participant's own decision to record."""
    if not isinstance(conds, list) or not isinstance(tasks, list) or "decision_with_advice" in tasks:
        return
    for i, x in enumerate(conds):
        if isinstance(x, dict) and x.get("explanation") == "none":
            c.err(("conditions", i, "explanation"), "a no-advice condition ('none') records the participant's own "
                                                    "decision, so tasks must include decision_with_advice")


def _randomisation(c: _Checker, r, units: int, n_wrong_free: int) -> None:
    p = ("randomisation",)
    if r is None:
        return
    if not c.typed(r, dict, p, "a mapping"):
        return
    c.keys(r, p, {"seed", "block_sizes", "stratify_by", "strata", "no_wrong_first"})
    if "seed" in r and c.typed(r["seed"], int, p + ("seed",), "an integer seed") and not 0 <= r["seed"] < 2**63:
        c.err(p + ("seed",), f"expected a seed in 0..2**63-1, got {r['seed']}")
    bs = r.get("block_sizes")
    if bs is not None and c.typed(bs, list, p + ("block_sizes",), "a list of block sizes"):
        if not bs:
            c.err(p + ("block_sizes",), "expected at least one block size")
        for i, b in enumerate(bs):
            if c.typed(b, int, p + ("block_sizes", i), "an integer") and (b <= 0 or b > 1000 or (units and b % units)):
                c.err(p + ("block_sizes", i),
                      f"block size must be a positive multiple of {units or 1} (arms or sequences), "
                      f"at most 1000, got {b}")
    if ("stratify_by" in r) != ("strata" in r):
        c.err(p, "'stratify_by' and 'strata' must be given together")
    if "stratify_by" in r:
        c.ident(r["stratify_by"], p + ("stratify_by",))
    st = r.get("strata")
    if st is not None and c.typed(st, list, p + ("strata",), "a list of stratum names"):
        if len(st) < 2:
            c.err(p + ("strata",), f"expected at least 2 strata, got {len(st)}")
        for i, s in enumerate(st):
            c.ident(s, p + ("strata", i))
        c.unique(st, [p + ("strata", i) for i in range(len(st))], "stratum")
    nw = r.get("no_wrong_first")
    if nw is not None and c.typed(nw, int, p + ("no_wrong_first",), "an integer") and not 0 <= nw <= n_wrong_free:
        c.err(p + ("no_wrong_first",), f"expected 0..{n_wrong_free} (number of items the model gets right), got {nw}")


def _tasks(c: _Checker, tasks) -> None:
    p = ("tasks",)
    if tasks is None or not c.typed(tasks, list, p, f"a list drawn from {list(TASKS)}"):
        return
    if not tasks:
        c.err(p, "expected at least one task")
    for i, t in enumerate(tasks):
        if t not in TASKS:
            c.err(p + (i,), f"expected one of {list(TASKS)}, got {t!r}")
    c.unique(tasks, [p + (i,) for i in range(len(tasks))], "task")


def _attention(c: _Checker, checks, n_items: int) -> None:
    p = ("attention_checks",)
    if checks is None or not c.typed(checks, list, p, "a list of attention checks"):
        return
    ids = []
    for i, a in enumerate(checks):
        q = p + (i,)
        if not c.typed(a, dict, q, "a mapping"):
            continue
        c.keys(a, q, {"id", "after_trial", "prompt", "options", "correct"},
               ("id", "after_trial", "prompt", "options", "correct"))
        if "id" in a and c.ident(a["id"], q + ("id",)):
            ids.append((a["id"], q + ("id",)))
        at = a.get("after_trial")
        if at is not None and c.typed(at, int, q + ("after_trial",), "an integer trial number") and n_items and not 1 <= at <= n_items:
            c.err(q + ("after_trial",), f"expected a trial number in 1..{n_items}, got {at}")
        if "prompt" in a:
            c.text(a["prompt"], q + ("prompt",))
        opts = a.get("options")
        if opts is not None and c.typed(opts, list, q + ("options",), "a list of options"):
            if len(opts) < 2:
                c.err(q + ("options",), f"expected at least 2 options, got {len(opts)}")
            c.options(opts, q + ("options",), "option")
            if "correct" in a and str(a["correct"]) not in [str(o) for o in opts]:
                c.err(q + ("correct",), f"expected one of the options {opts}, got {a['correct']!r}")
    c.unique([v for v, _ in ids], [q for _, q in ids], "attention check id")
