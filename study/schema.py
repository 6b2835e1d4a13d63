"""Study files: a YAML schema, its frozen representation and line-numbered validation.

A study names the model and its stimuli, the conditions (none / descriptive /
persuasive explanation), the tasks per trial, attention checks and the
questionnaires (docs/methods.md, "Study mode"). Built-in instruments (Jian et al. 2000 trust scale,
Hoffman et al. 2018 explanation-satisfaction and trust scales) bring their published item text
(:mod:`study.instruments`, which says where each wording was checked); a study may name the
items' ``object`` or give its own text, and ``instrument: custom`` takes any Likert items
(``docs/study-mode.md``).

References
----------
.. [1] Yin, M., Wortman Vaughan, J., Wallach, H. (2019). Understanding the Effect
   of Accuracy on Trust in Machine Learning Models. CHI. doi 10.1145/3290605.3300509.
.. [2] Jian, J.-Y., Bisantz, A. M., Drury, C. G. (2000). Int. J. Cognitive Ergonomics 4(1).
.. [3] Hoffman, R. R., Mueller, S. T., Klein, G., Litman, J. (2018). arXiv 1812.04608.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path as FsPath

from workspace.errors import CandorError
from workspace.safe_files import read_bounded

from ._located import Error, Located, load_located
from ._rules import EXPLANATIONS, ID_RE, TASKS, check_study, n_sequences
from .instruments import INSTRUMENTS, item_texts

__all__ = [
    "Error", "Study", "ModelRef", "Stimulus", "Condition", "Randomisation",
    "AttentionCheck", "Item", "Questionnaire", "TASKS", "EXPLANATIONS", "ID_RE",
    "load_study", "parse_study", "validate_file", "validate_text", "stimuli_part",
]

@dataclass(frozen=True)
class ModelRef:
    """The model whose outputs participants see. ``outputs`` are the answer options.

    ``answer: numeric`` (a regressor): participants answer a number in ``range`` and the advice is
    the model's number; ``outputs`` is empty then.
    """

    id: str
    outputs: tuple[str, ...]
    kind: str = "tabular"
    answer: str = "label"
    range: tuple[float, float] | None = None

    @property
    def numeric(self) -> bool:
        """Whether answers and advice are numbers (a regression-style task)."""
        return self.answer == "numeric"


@dataclass(frozen=True)
class Stimulus:
    """One item: a dataset row (``row``) or a text (``text``).

    ``truth`` is the true label when known; ``model_correct`` marks items the
    model gets wrong (used for the trial-order constraint, docs/methods.md, "Study mode").
    """

    id: str
    row: int | None = None
    text: str | None = None
    truth: str | None = None
    model_correct: bool | None = None


@dataclass(frozen=True)
class Condition:
    """One arm: ``explanation`` is ``none`` (no advice: the participant decides alone), ``prediction``
    (the model's label only), ``descriptive`` or ``persuasive``.

    ``show_dropped`` (persuasive only) adds what the simplification left out: the hidden
    features and their share of the descriptive explanation's ``|attribution|``.
    """

    id: str
    explanation: str
    operators: tuple[str, ...] = ()
    show_dropped: bool = False


@dataclass(frozen=True)
class Randomisation:
    """Permuted-block settings (docs/methods.md, "Study mode").

    ``block_sizes`` defaults to ``(k, 2k)`` for ``k`` arms (or Williams
    sequences). ``stratify_by`` names a participant question whose answer is one
    of ``strata``.
    """

    seed: int
    block_sizes: tuple[int, ...]
    stratify_by: str | None = None
    strata: tuple[str, ...] = ()
    no_wrong_first: int = 2


@dataclass(frozen=True)
class AttentionCheck:
    """An instructed-response item shown after trial ``after_trial`` (1-based)."""

    id: str
    after_trial: int
    prompt: str
    options: tuple[str, ...]
    correct: str


@dataclass(frozen=True)
class Item:
    """A questionnaire item: stable ``label``, exact ``text`` shown, reverse flag."""

    label: str
    text: str
    reverse: bool = False


@dataclass(frozen=True)
class Questionnaire:
    """A questionnaire shown after the trials (built-in instrument or ``custom``)."""

    id: str
    instrument: str
    instrument_version: str
    scale_points: int
    items: tuple[Item, ...]
    anchors: tuple[str, str] = ("strongly disagree", "strongly agree")
    wording_note: str = ""

    @property
    def reverse(self) -> frozenset[str]:
        """Labels of reverse-coded items."""
        return frozenset(i.label for i in self.items if i.reverse)


@dataclass(frozen=True)
class Study:
    """A validated study definition. Build with :func:`load_study`."""

    id: str
    title: str
    consent_version: str
    consent_text: str
    instructions: str
    model: ModelRef
    stimuli: tuple[Stimulus, ...]
    conditions: tuple[Condition, ...]
    design: str
    randomisation: Randomisation
    tasks: tuple[str, ...]
    attention_checks: tuple[AttentionCheck, ...] = ()
    questionnaires: tuple[Questionnaire, ...] = ()
    confidence_scale: tuple[float, float] = (0.0, 100.0)
    max_participants: int | None = None
    completion_url: str | None = None
    redirect_seconds: int | None = 5
    max_failed_attention_checks: int | None = None
    debrief: str = ""
    source_text: str = field(default="", repr=False, compare=False)

    def advised(self, condition_id: str) -> bool:
        """Whether the participants of ``condition_id`` see the model's advice (all arms but ``none``)."""
        return self.condition(condition_id).explanation != "none"

    @property
    def condition_ids(self) -> tuple[str, ...]:
        """Condition ids in file order."""
        return tuple(c.id for c in self.conditions)

    def condition(self, condition_id: str) -> Condition:
        """Return the condition named ``condition_id``."""
        for c in self.conditions:
            if c.id == condition_id:
                return c
        raise KeyError(f"no condition {condition_id!r}; expected one of {self.condition_ids}")

    def stimulus(self, item_id: str) -> Stimulus:
        """Return the stimulus named ``item_id``."""
        for s in self.stimuli:
            if s.id == item_id:
                return s
        raise KeyError(f"no stimulus {item_id!r}")

    @property
    def instrument_versions(self) -> dict[str, str]:
        """Questionnaire id to ``instrument_version`` (logged with every trial)."""
        return {q.id: q.instrument_version for q in self.questionnaires}


class StudyError(ValueError):
    """Raised by :func:`load_study` with every validation error."""

    def __init__(self, errors: list[Error], filename: str = ""):
        self.errors = errors
        super().__init__("\n".join(e.format(filename) for e in errors))


def validate_text(text: str) -> list[Error]:
    """Validate YAML ``text`` as a study file; return errors sorted by line."""
    loc = load_located(text)
    errors = list(loc.errors)
    if loc.data is None and not errors:
        errors.append(Error(1, "", "empty study file; expected a mapping with id, model, stimuli, conditions, tasks"))
    elif loc.data is not None:
        errors.extend(check_study(loc))
    return sorted(set(errors))


def validate_file(path: str | FsPath) -> list[Error]:
    """Validate the study file at ``path``.

    Parameters
    ----------
    path : str or Path
        YAML study file.

    Returns
    -------
    list of Error
        Empty when the file is valid; otherwise every error with its line.
    """
    try:
        text = read_study_text(path)
    except CandorError as exc:
        return [Error(1, "", str(exc))]
    return validate_text(text)


def parse_study(text: str, filename: str = "") -> Study:
    """Validate and build a :class:`Study` from YAML text; raise :class:`StudyError`."""
    errors = validate_text(text)
    if errors:
        raise StudyError(errors, filename)
    return _build(load_located(text), text)


def stimuli_part(text: str, errors: list[Error]) -> Study | None:
    """A study holding only the id, model and stimuli of ``text``, for checking them against the data
    while other parts of the file have ``errors``; None when the id, model or stimuli themselves have one."""
    if any(e.path.split(".")[0].split("[")[0] in ("", "id", "model", "stimuli") for e in errors):
        return None
    loc = load_located(text)
    d = loc.data
    if not isinstance(d, dict) or not all(k in d for k in ("id", "model", "stimuli")):
        return None
    m = d["model"]
    return Study(id=str(d["id"]), title="", consent_version="", consent_text="", instructions="",
                 model=_build_model(m),
                 stimuli=_build_stimuli(d["stimuli"]), conditions=(), design="between",
                 randomisation=Randomisation(0, ()), tasks=(), source_text=text)


def load_study(path: str | FsPath) -> Study:
    """Read, validate and build the study at ``path``; raise :class:`StudyError`."""
    p = FsPath(path)
    try:
        text = read_study_text(p)
    except CandorError as exc:
        raise StudyError([Error(1, "", str(exc))], str(p)) from None
    return parse_study(text, str(p))


MAX_STUDY_BYTES = 4 * 2**20
"""Largest study file read (a study file is text: its stimuli name rows, it never holds data)."""


def read_study_text(path: str | FsPath) -> str:
    """The text of a study file: a regular file of at most :data:`MAX_STUDY_BYTES`, in UTF-8.

    Raises
    ------
    CandorError
        If it cannot be read, is not a regular file, is larger, or is not UTF-8.
    """
    raw = read_bounded(path, MAX_STUDY_BYTES, "study file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CandorError(f"study file {FsPath(path).name}: not UTF-8 text (byte {exc.start})") from None


def _build(loc: Located, text: str) -> Study:
    d = loc.data
    model = _build_model(d["model"])
    conditions = tuple(
        Condition(str(c["id"]), str(c["explanation"]), tuple(c.get("operators") or ()), bool(c.get("show_dropped")))
        for c in d["conditions"]
    )
    design = d.get("design", "between")
    r = d.get("randomisation") or {}
    units = len(conditions) if design == "between" else n_sequences(len(conditions))
    rand = Randomisation(
        seed=int(r.get("seed", 0)),
        block_sizes=tuple(r.get("block_sizes") or (units, 2 * units)),
        stratify_by=r.get("stratify_by"),
        strata=tuple(str(s) for s in r.get("strata") or ()),
        no_wrong_first=int(r.get("no_wrong_first", 2)),
    )
    checks = tuple(
        AttentionCheck(str(a["id"]), int(a["after_trial"]), str(a["prompt"]),
                       tuple(str(o) for o in a["options"]), str(a["correct"]))
        for a in d.get("attention_checks") or ()
    )
    return Study(
        id=str(d["id"]), title=str(d.get("title", d["id"])),
        consent_version=str(d.get("consent_version", "1")),
        consent_text=str(d.get("consent_text", "")), instructions=str(d.get("instructions", "")),
        model=model, stimuli=_build_stimuli(d["stimuli"]), conditions=conditions, design=design,
        randomisation=rand, tasks=tuple(d["tasks"]), attention_checks=checks,
        questionnaires=tuple(_build_questionnaire(q) for q in d.get("questionnaires") or ()),
        confidence_scale=tuple(float(x) for x in d.get("confidence_scale") or (0, 100)),
        max_participants=d.get("max_participants"),
        completion_url=(d.get("recruitment") or {}).get("completion_url"),
        redirect_seconds=(d.get("recruitment") or {}).get("redirect_seconds", 5),
        max_failed_attention_checks=(d.get("exclusions") or {}).get("max_failed_attention_checks"),
        debrief=str(d.get("debrief", "")),
        source_text=text,
    )


def _build_model(m: dict) -> ModelRef:
    rng = m.get("range")
    return ModelRef(str(m["id"]), tuple(str(o) for o in m.get("outputs") or ()), str(m.get("kind", "tabular")),
                    str(m.get("answer", "label")), None if rng is None else (float(rng[0]), float(rng[1])))


def _build_stimuli(s) -> tuple[Stimulus, ...]:
    if isinstance(s, dict):
        if "rows" in s:
            return tuple(Stimulus(f"row-{r}", row=int(r)) for r in s["rows"])
        return tuple(Stimulus(f"text-{i}", text=str(t)) for i, t in enumerate(s["texts"]))
    return tuple(
        Stimulus(str(x["id"]), row=x.get("row"), text=x.get("text"),
                 truth=None if x.get("truth") is None else str(x["truth"]),
                 model_correct=x.get("model_correct"))
        for x in s
    )


def _build_questionnaire(q: dict) -> Questionnaire:
    kind = q["instrument"]
    if kind == "custom":
        items = tuple(Item(str(i["label"]), str(i["text"]), bool(i.get("reverse", False))) for i in q["items"])
        points = int(q["scale_points"])
        return Questionnaire(str(q.get("id", kind)), kind, str(q["instrument_version"]), points, items)
    inst = INSTRUMENTS[kind]
    given = q.get("items")
    texts = {lab: str(t) for lab, t in given.items()} if given else item_texts(inst, q.get("object"))
    items = tuple(Item(lab, texts[lab], lab in inst.reverse) for lab in inst.labels if lab in texts)
    note = ("the study's own wording" if given else
            (f"published wording ({inst.wording_source})" if inst.wording_verified
             else f"wording NOT verified against the paper ({inst.wording_source})"))
    return Questionnaire(str(q.get("id", kind)), kind, str(q.get("instrument_version", inst.edition)),
                         inst.scale_points, items, inst.anchors, note)
