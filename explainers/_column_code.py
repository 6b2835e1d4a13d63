"""How one raw column of a :class:`~explainers._codec.TabularCodec` is encoded and shown.

:class:`ColumnCode` is one column's kind (numeric, category or datetime), its levels and its
display format, and renders an encoded value (:meth:`ColumnCode.label`, :meth:`ColumnCode.text`)
or a predicate on it (:meth:`ColumnCode.describe`); ``MISSING`` is the explicit level of a missing
value and :func:`date_text` the text of a date encoded as days since 1970-01-01.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .numbers import number_text, plain
from .rules import format_predicate

__all__ = ["ColumnCode", "MISSING", "MAX_LEVELS", "date_text"]

MISSING = "(missing)"
_EPOCH = pd.Timestamp("1970-01-01")
_DAY = pd.Timedelta(days=1)
MAX_LEVELS = 5
"""Levels written out in a membership predicate before the rest are elided as ``… (+n more)``."""


@dataclass(frozen=True)
class ColumnCode:
    """How one raw column is encoded.

    Parameters
    ----------
    name : str
        The column name exactly as the user wrote it.
    kind : {"numeric", "category", "datetime"}
    dtype : str
        The raw pandas dtype, for messages and decoding.
    levels : tuple
        Raw values of a category column, in code order (``MISSING`` last if present).
    note : str
        What was done to the column, for display ("" if nothing notable).
    """

    name: str
    kind: str
    dtype: str
    levels: tuple = ()
    note: str = ""
    na: object = None
    """The column's own missing value (``None``, ``nan`` or ``pd.NA``), given back to the model as it was."""

    timed: bool = False
    """A datetime column with times of day (its thresholds are shown to the minute)."""

    display: object = None
    """The user's display format, anything with ``text(value) -> str`` (``workspace.feature_names.FeatureFormat``:
    unit, decimals, percent, category labels), or None. Applied to numbers and levels, never to dates."""

    def _formatted(self, code: float) -> str | None:
        """The display format's text of an encoded value (None without a format, for a date or a missing value)."""
        if self.display is None or self.kind == "datetime" or np.isnan(code):
            return None
        if self.kind == "category":
            v = self.levels[int(np.clip(round(code), 0, len(self.levels) - 1))]
            return None if v == MISSING else self.display.text(v)
        return self.display.text(float(code))

    def label(self, code: float) -> str:
        """The display text of an encoded value (a level name, a date or a number)."""
        if np.isnan(code):
            return MISSING
        if (shown := self._formatted(code)) is not None:
            return shown
        if self.kind == "category":
            v = self.levels[int(np.clip(round(code), 0, len(self.levels) - 1))]
            return "(empty string)" if v == "" else str(v)
        if self.kind == "datetime":
            return str((_EPOCH + code * _DAY).date())
        return plain(code, 6, trim=True)

    def text(self, code: float, fmt: str = ".4g") -> str:
        """Display text of an encoded value, numbers formatted by ``fmt`` (``label`` uses ``.6g``).

        >>> ColumnCode("age", "numeric", "float64").text(38.123)
        '38.12'
        """
        if (shown := self._formatted(code)) is not None:
            return shown
        if self.kind == "numeric":
            return MISSING if np.isnan(code) else number_text(code, fmt)
        if self.kind == "datetime":
            return date_text(code, self.timed)
        return self.label(code)

    def selected(self, op: str, threshold) -> tuple[int, ...]:
        """Codes (ascending) of the levels on which ``code op threshold`` holds, as
        :func:`~explainers.rules.predicate_mask` evaluates it; ``"in"`` takes a sequence of codes.

        Raises
        ------
        ValueError
            If ``op`` is not one of ``<=, >, ==, in``.
        """
        c = np.arange(len(self.levels), dtype=float)
        tests = {"<=": lambda: c <= float(threshold), ">": lambda: c > float(threshold),
                 "==": lambda: c == float(threshold), "in": lambda: np.isin(c, np.asarray(list(threshold), float))}
        if op not in tests:
            raise ValueError(f"unknown predicate operator {op!r}; expected one of '<=', '>', '==', 'in'")
        return tuple(int(i) for i in np.flatnonzero(tests[op]()))

    def membership(self, codes, max_levels: int = MAX_LEVELS) -> str:
        """Set-membership text of the levels ``codes`` of a category column.

        The shorter side is written out: ``colour = red`` (one level),
        ``colour ≠ red`` (all but one), ``colour in {a, b}`` or
        ``colour not in {c, d}`` (whichever set is smaller), at most
        ``max_levels`` levels then ``… (+n more)``. A level containing a comma,
        a brace or outer spaces is quoted.
        """
        chosen = sorted({int(c) for c in codes})
        rest = [c for c in range(len(self.levels)) if c not in set(chosen)]
        if not chosen:
            return f"{self.name} in {{}}"
        if not rest:
            return f"{self.name} is any level"
        if len(chosen) == 1:
            return f"{self.name} = {self._level(chosen[0])}"
        if len(rest) == 1:
            return f"{self.name} ≠ {self._level(rest[0])}"
        if len(chosen) <= len(rest):
            return f"{self.name} in {self._set(chosen, max_levels)}"
        return f"{self.name} not in {self._set(rest, max_levels)}"

    def describe(self, op: str, threshold, max_levels: int = MAX_LEVELS) -> str:
        """Display text of the predicate ``<this column> op threshold`` on encoded values.

        ``threshold`` is in encoded units (a code, or codes for ``"in"``; days since 1970; the
        number). A category predicate reads as membership in the user's levels (:meth:`membership`,
        at most ``max_levels`` written out); a datetime one with a date (``signup <= 2021-03-04``:
        for dates without times, exactly the rows the code predicate selects); a numeric one as
        ``age <= 38.5`` (4 significant digits).

        Examples
        --------
        >>> c = ColumnCode("colour", "category", "object", ("blue", "green", "red"))
        >>> c.describe(">", 1.5)
        'colour = red'
        >>> c.describe("<=", 1.5)
        'colour ≠ red'
        """
        if self.kind == "category":
            return self.membership(self.selected(op, threshold), max_levels)
        if self.kind == "datetime":
            if op == "in":
                return f"{self.name} in {{{', '.join(self.text(float(t)) for t in threshold)}}}"
            return f"{self.name} {'=' if op == '==' else op} {self.text(float(threshold))}"
        if self.display is not None and op in ("<=", ">", "=="):  # the user's unit, decimals or labels
            return f"{self.name} {'=' if op == '==' else op} {self.display.text(float(threshold))}"
        return format_predicate(self.name, op, threshold)

    def level_list(self, codes, max_levels: int = MAX_LEVELS) -> str:
        """``"Federal-gov, Local-gov, … (+12 more)"``: the levels ``codes`` (ascending), the rest elided."""
        codes = sorted({int(c) for c in codes})
        shown = [self._level(c) for c in codes[:max_levels]]
        if len(codes) > max_levels:
            shown.append(f"… (+{len(codes) - max_levels} more)")
        return ", ".join(shown)

    def _level(self, code: int) -> str:
        text = self.label(float(code))
        return repr(text) if any(ch in text for ch in ",{}") or text != text.strip() else text

    def _set(self, codes, max_levels: int) -> str:
        return "{" + self.level_list(codes, max_levels) + "}"


def date_text(code: float, timed: bool = False) -> str:
    """``"2021-03-04"`` (``"2021-03-04 13:20"`` if ``timed``) for days since 1970-01-01; NaN is ``"(missing)"``."""
    if np.isnan(code):
        return MISSING
    t = _EPOCH + float(code) * _DAY
    return t.strftime("%Y-%m-%d %H:%M") if timed else str(t.date())
