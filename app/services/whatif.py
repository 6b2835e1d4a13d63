"""The what-if editor: each feature's control, taken from the data, and a table row with some features edited.

A control edits one raw column of the workspace's encoded table (``workspace().X``): a number within the
column's smallest and largest value, a category among its levels (the codec's), or a one-hot block (0/1 columns
``prefix_level`` of which each row has at most one set, :func:`explainers.persuasive.one_hot_groups`) as one
choice of its level. An edited row is explained as a row the store lacks is (``tabular._stored_or_live``'s live
path: the same explainers, one row at a time), and cached by its content (:class:`EditedRow`), so two links that
reach the same values share one explanation.

The browser sends an edited row as ``{"row": N, "edits": {control name: value}}`` (numbers, level names, a
block's level name; ``None`` for a missing value where the column has some); :func:`edited_row` checks every
value against the controls and refuses anything else in one line, changing nothing.
"""
from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from explainers.numbers import parse_plain, plain
from explainers.persuasive import one_hot_groups

from workspace.errors import CandorError
from ._core import lazy, row_cache, workspace

NONE_LEVEL = "(none)"
"""A one-hot block's choice "no level set", offered where some row of the data has none."""


@dataclass(frozen=True)
class Control:
    """One feature of the editor.

    Attributes
    ----------
    name : str
        The column's name, or a one-hot block's prefix (``sex`` for ``sex_Male``, ``sex_Female``).
    kind : {"number", "level", "group"}
    columns : tuple of int
        Positions in the encoded table (one, or the block's children in order).
    lo, hi : float
        A number's smallest and largest value in the data (NaN for the others).
    whole : bool
        A number whose every value in the data is whole (an edit must be whole too).
    missing : bool
        Whether the data has missing values there (a number may then be edited to missing).
    options : tuple of str
        A level's or a block's choices as shown (a block's: the children's level names, then :data:`NONE_LEVEL`
        where some row has none set).
    """

    name: str
    kind: str
    columns: tuple[int, ...]
    lo: float = math.nan
    hi: float = math.nan
    whole: bool = False
    missing: bool = False
    options: tuple[str, ...] = ()

    def shown(self, values: np.ndarray):
        """The control's value for the encoded row ``values``: a number (None if missing) or an option."""
        if self.kind == "number":
            v = float(values[self.columns[0]])
            return None if math.isnan(v) else (int(v) if self.whole else v)
        if self.kind == "level":
            return self.options[int(values[self.columns[0]])]
        on = [i for i, j in enumerate(self.columns) if values[j] == 1]
        return self.options[on[0]] if on else NONE_LEVEL

    def encoded(self, value) -> dict[int, float]:
        """Column position -> encoded value for the edit ``value``; raises :class:`CandorError` naming the range."""
        if self.kind == "number":
            return {self.columns[0]: self._number(value)}
        if not isinstance(value, str) or value not in self.options:
            some = ", ".join(self.options[:6]) + (" ..." if len(self.options) > 6 else "")
            raise CandorError(f"what-if: {self.name} must be one of {some}; got {reprlib.repr(value)}")
        at = self.options.index(value)
        if self.kind == "level":
            return {self.columns[0]: float(at)}
        return {j: float(i == at) for i, j in enumerate(self.columns)}

    def _number(self, value) -> float:
        span = f"from {plain(self.lo, 6, trim=True)} to {plain(self.hi, 6, trim=True)}"
        why = f"what-if: {self.name} must be a{' whole' if self.whole else ''} number {span}" + \
            (" or empty (missing)" if self.missing else "")
        if value is None or (isinstance(value, str) and not value.strip()):
            if self.missing:
                return math.nan
            raise CandorError(f"{why}; the model was never given a missing {self.name}")
        if isinstance(value, str) and len(value) <= 40:
            try:
                value = parse_plain(value)
            except ValueError:
                raise CandorError(f"{why}; got {reprlib.repr(value)}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise CandorError(f"{why}; got {reprlib.repr(value)}")
        v = float(value)
        if not math.isfinite(v) or not self.lo <= v <= self.hi or (self.whole and not v.is_integer()):
            raise CandorError(f"{why}; got {plain(v, 6, trim=True) if math.isfinite(v) else value}")
        return v


@dataclass(frozen=True)
class EditedRow:
    """A table row with some features edited; equal (and cached) by its content alone.

    Attributes
    ----------
    content : bytes
        The encoded row's float64 values (the cache key: NaN equals NaN here).
    base : int
        The table row it was edited from.
    changed : tuple of str
        The controls whose value differs from the base row's.
    """

    content: bytes
    base: int = field(compare=False)
    changed: tuple[str, ...] = field(compare=False, default=())

    @property
    def values(self) -> np.ndarray:
        """The encoded row, shape (n_features,)."""
        return np.frombuffer(self.content, dtype=float)

    def __str__(self) -> str:
        return f"{self.base} as edited"  # "SHAP for row 5 as edited"


def _controls() -> tuple[Control, ...]:
    ws = workspace()
    X, codec = ws.X, ws.adapter.codec
    numeric = [str(c) for c, code in zip(X.columns, codec.columns) if code.kind == "numeric"]
    blocks = {}
    for prefix, cols in one_hot_groups(X[numeric]).items():
        part = X[cols].to_numpy(dtype=float)
        if prefix not in codec.names and not np.isnan(part).any() and (part.sum(axis=1) <= 1).all():
            blocks[cols[0]] = (prefix, cols, bool((part.sum(axis=1) == 0).any()))
    in_block = {c for _, cols, _ in blocks.values() for c in cols}
    out, names = [], list(map(str, X.columns))
    for j, (name, code) in enumerate(zip(names, codec.columns)):
        if name in blocks:
            prefix, cols, none = blocks[name]
            levels = tuple(c[len(prefix) + 1:] for c in cols) + ((NONE_LEVEL,) if none else ())
            out.append(Control(prefix, "group", tuple(names.index(c) for c in cols), options=levels))
        elif name in in_block:
            continue
        elif code.kind == "category":
            out.append(Control(name, "level", (j,), options=tuple(code.label(float(i))
                                                                  for i in range(len(code.levels)))))
        else:
            col = X.iloc[:, j].to_numpy(dtype=float, na_value=np.nan)
            finite = col[np.isfinite(col)]
            out.append(Control(name, "number", (j,), float(finite.min()), float(finite.max()),
                               bool(np.all(finite == np.round(finite))), bool(np.isnan(col).any())))
    return tuple(out)


controls = lazy("whatif_controls", _controls)
"""The editor's controls of the installed workspace (:class:`Control`), in the table's column order."""

MAX_EDITS = 10_000
"""Most edits one request may carry (each names a control; more is a forged request)."""


def edited_row(base: int, edits) -> int | EditedRow:
    """Table row ``base`` (checked by the caller) with ``edits`` applied, or ``base`` itself when they change nothing.

    Parameters
    ----------
    base : int
    edits : dict of str to value, or None
        Control name -> its new value (:meth:`Control.encoded`).

    Raises
    ------
    CandorError
        One line for anything that is not a control and a value it takes (the row is then not edited).
    """
    if edits is None or edits == {}:
        return base
    if not isinstance(edits, dict) or len(edits) > MAX_EDITS:
        raise CandorError(f"what-if: the edits must be feature names and values, got {reprlib.repr(edits)}")
    by_name = {c.name: c for c in controls()}
    values = workspace().X.iloc[base].to_numpy(dtype=float, na_value=np.nan).copy()
    original, changed = values.copy(), []
    for name, value in edits.items():
        control = by_name.get(name) if isinstance(name, str) else None
        if control is None:
            raise CandorError(f"what-if: no feature named {reprlib.repr(name)}")
        for j, v in control.encoded(value).items():
            values[j] = v
        if control.shown(values) != control.shown(original):
            changed.append(name)
    if not changed:
        return base
    return EditedRow(np.ascontiguousarray(values, dtype=float).tobytes(), base, tuple(changed))


def row_frame(key: int | EditedRow) -> pd.DataFrame:
    """The one-row encoded frame of a table row or an edited row (what the explainers take)."""
    X = workspace().X
    if not isinstance(key, EditedRow):
        return X.iloc[[key]]
    frame = X.iloc[[key.base]].copy()
    frame.iloc[0, :] = key.values
    return frame


@row_cache(maxsize=512)
def _output(key: EditedRow) -> float:
    return float(workspace().output(row_frame(key))[0])


def edited_status(key: EditedRow) -> str:
    """The navbar's status line of an edited row: what it was edited from, how many features, its output."""
    ws = workspace()
    v = _output(key)
    n = len(key.changed)
    shown = f"{ws.output_label} {v:.3f}" if ws.is_classifier else f"predicted {plain(v, 4, trim=True)}"
    return f"edited from row {key.base} ({n} feature{'s' if n != 1 else ''} changed) · {shown}"


@dataclass(frozen=True)
class Editor:
    """What the editor shows for a row: the controls, each one's value in the table row (``base``) and as shown
    (``values``, the edits applied), and the names of the controls whose value differs (``changed``)."""

    row: int
    controls: tuple[Control, ...]
    base: tuple
    values: tuple
    changed: tuple[str, ...] = ()


def editor(base: int, edits=None) -> Editor:
    """The editor of table row ``base`` (checked by the caller) with ``edits`` applied.

    Raises
    ------
    CandorError
        If an edit is refused (:func:`edited_row`).
    """
    row = workspace().X.iloc[base].to_numpy(dtype=float, na_value=np.nan)
    key = edited_row(base, edits)
    shown = key.values if isinstance(key, EditedRow) else row
    cs = controls()
    return Editor(base, cs, tuple(c.shown(row) for c in cs), tuple(c.shown(shown) for c in cs),
                  key.changed if isinstance(key, EditedRow) else ())
