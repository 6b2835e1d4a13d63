"""The cohort filter language: ``feature op value`` conditions, ANDed with ``;``, read and written back exactly.

A cohort (:mod:`explainers.cohorts`), the data table's filter row and a cohort link all use it. Names are written
bare unless they would read otherwise: a column or level name holding ``;``, ``,``, a double quote or a backslash,
or starting or ending with white space (or empty), is written in double quotes with ``\\`` and ``\"`` escaped
(``status in "Married, spouse absent", Divorced``), so every filter :func:`filters_text` writes,
:func:`parse_filters` reads back to the same filter, whatever its names (a level ``"Married, spouse absent"``
had been read as two levels, and a name with ``;`` as two conditions).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

__all__ = ["Filter", "OPS", "parse_filters", "filters_text", "cohort_mask"]

OPS = ("<=", ">=", "!=", "==", "<", ">", "in")
_OP = re.compile(r"\s*(<=|>=|!=|==|<|>|=|\bin\b)\s*")
_SPECIAL = re.compile(r'[;,"\\]')


@dataclass(frozen=True)
class Filter:
    """One condition ``feature op value`` on the encoded table.

    Parameters
    ----------
    feature : str
    op : {"<=", ">=", "!=", "==", "<", ">", "in"}
    value : float or tuple of float
        Encoded: a number, or category codes (a tuple for ``in``).
    """

    feature: str
    op: str
    value: float | tuple

    def mask(self, column: np.ndarray) -> np.ndarray:
        """Rows of ``column`` (encoded values) that satisfy the filter; NaN satisfies none but ``!=``."""
        c = np.asarray(column, float)
        with np.errstate(invalid="ignore"):
            if self.op == "in":
                return np.isin(c, np.asarray(self.value, float))
            v = float(self.value)
            return {"<=": c <= v, ">=": c >= v, "<": c < v, ">": c > v, "==": c == v, "!=": ~(c == v)}[self.op]


def _exact(v: float) -> str:
    """The shortest decimal that reads back as ``v`` (a leaf's threshold must select the same rows)."""
    return np.format_float_positional(float(v), trim="-")


def _level_text(code, levels) -> str:
    return _quoted(str(levels[int(code)]))


def _quoted(name: str) -> str:
    """``name`` as the filter language writes it: bare, or in double quotes when it would read otherwise."""
    if name and name == name.strip() and not _SPECIAL.search(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside double quotes (a backslash escapes the next character inside them)."""
    parts, cur, quoted, i = [], [], False, 0
    while i < len(text):
        ch = text[i]
        if quoted and ch == "\\" and i + 1 < len(text):
            cur.append(text[i:i + 2])
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        if ch == sep and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    if quoted:
        raise ValueError(f"cannot read {text.strip()!r}: a double quote is not closed")
    parts.append("".join(cur))
    return parts


def _unquoted(text: str) -> str:
    """A name as written (stripped; a quoted one unescaped, its white space kept)."""
    t = text.strip()
    if not t.startswith('"'):
        return t
    closing = [i for i in range(1, len(t)) if t[i] == '"' and _unescaped(t, i)]
    if closing != [len(t) - 1]:  # exactly one unescaped quote after the opening one, the last character
        raise ValueError(f"cannot read {t!r}: a quoted name is one double-quoted text (a quote inside it as \\\")")
    return re.sub(r"\\(.)", r"\1", t[1:-1])


def filters_text(filters: Sequence[Filter], codec=None) -> str:
    """``"mean radius > 15.2; sex == Female"``: what :func:`parse_filters` reads back to ``filters``."""
    parts = []
    for f in filters:
        col = codec.column(f.feature) if codec is not None else None
        levels = col.levels if col is not None and col.kind == "category" else None
        if f.op == "in":
            vals = [_level_text(v, levels) if levels else _exact(v) for v in f.value]
            parts.append(f"{_quoted(f.feature)} in {', '.join(vals)}")
        else:
            parts.append(f"{_quoted(f.feature)} {f.op} {_level_text(f.value, levels) if levels else _exact(f.value)}")
    return "; ".join(parts)


def _value(text: str, feature: str, levels) -> float:
    if levels is not None:
        names = [str(lv) for lv in levels]
        if text not in names:
            shown = ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")
            raise ValueError(f"{feature} has no level {text!r} (levels: {shown})")
        return float(names.index(text))
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{feature}: {text!r} is not a number") from None
    if not np.isfinite(v):
        raise ValueError(f"{feature}: {text!r} is not a finite number")
    return v


def parse_filters(text: str, columns: Sequence[str], codec=None) -> tuple[Filter, ...]:
    """Read ``"feature op value; ..."`` (conditions ANDed) into filters on the encoded table.

    Parameters
    ----------
    text : str
        Conditions separated by ``;``; ``op`` one of ``< <= > >= == != in`` (``=`` reads as ``==``); ``in``
        takes values separated by commas. A category column's values are its level names. A name may be written
        in double quotes (``\\"`` and ``\\\\`` inside), as :func:`filters_text` writes one that holds ``;``, ``,``,
        a quote or a backslash, or white space at an end.
    columns : sequence of str
        The table's column names (a condition's left side must be one of them).
    codec : TabularCodec, optional
        The table's encoding (level names of category columns).

    Returns
    -------
    tuple of Filter
        Empty for an empty text (the cohort of every row).

    Raises
    ------
    ValueError
        One line naming the condition that cannot be read.
    """
    out = []
    names = set(map(str, columns))
    for part in (p.strip() for p in _split(str(text or ""), ";")):
        if not part:
            continue
        if part.startswith('"'):  # a quoted column name, then the operator
            close = next((i for i in range(1, len(part)) if part[i] == '"' and _unescaped(part, i)), None)
            m = _OP.match(part, close + 1) if close is not None else None
            feature = _unquoted(part[:close + 1]) if m is not None else None
        else:  # the operator after the longest column name the condition starts with ("mean radius <= 1")
            starts = sorted((c for c in names if part.startswith(c)), key=len, reverse=True)
            m = next((m for c in starts if (m := _OP.match(part, len(c)))), None)
            feature = part[:m.start()].strip() if m is not None else None
        if m is None or feature not in names:
            raise ValueError(f"cannot read {part!r}: write feature op value, with op one of {' '.join(OPS)}, "
                             "and a column name on the left")
        op, rest = ("==" if m.group(1) == "=" else m.group(1)), part[m.end():].strip()
        if not rest:
            raise ValueError(f"cannot read {part!r}: no value after {op}")
        col = codec.column(feature) if codec is not None else None
        levels = col.levels if col is not None and col.kind == "category" else None
        if op == "in":
            out.append(Filter(feature, "in", tuple(_value(_unquoted(v), feature, levels) for v in _split(rest, ","))))
        else:
            if levels is not None and op not in ("==", "!="):
                raise ValueError(f"{feature} is a category: use ==, != or in, not {op}")
            out.append(Filter(feature, op, _value(_unquoted(rest), feature, levels)))
    return tuple(out)


def _unescaped(text: str, i: int) -> bool:
    """Whether the character at ``i`` follows an even number of backslashes (is not escaped)."""
    n = 0
    while i - 1 - n >= 0 and text[i - 1 - n] == "\\":
        n += 1
    return n % 2 == 0


def cohort_mask(X: pd.DataFrame, filters: Sequence[Filter]) -> np.ndarray:
    """Rows of the encoded table ``X`` where every filter holds (all rows for no filter)."""
    mask = np.ones(len(X), dtype=bool)
    for f in filters:
        mask &= f.mask(X[f.feature].to_numpy(dtype=float))
    return mask


