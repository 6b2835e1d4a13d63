"""The one formatter of numbers people read (figures, sentences, rules, tables): never scientific notation.

``app.views.figures.plain`` is this function; :mod:`explainers` renders its own text (rules, persuasive sentences,
LIME bins, value labels) with it too, so "1.33e+03" or "2.268e+05" reach no reader.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["gap_text", "plain", "parse_plain", "number_text", "plain_length_bound"]


def plain(value, digits: int = 3, *, signed: bool = False, grouping: bool = True, trim: bool = False) -> str:
    """A number as people read it: ``digits`` significant digits, at most 8 decimals, thousands grouped.

    Parameters
    ----------
    value : float, int or numpy scalar
        NaN reads ``"n/a"``; a magnitude below 0.00000001 reads ``"0"``.
    digits : int, default=3
        Significant digits; they only add decimals (the integer part is never rounded away).
    signed : bool, default=False
        Prefix ``+`` to positive values (``"+0.12"``), as attributions are shown.
    grouping : bool, default=True
        Thousands separated by commas (``"226,800"``); :func:`parse_plain` reads both forms.
    trim : bool, default=False
        Drop trailing zeros of the decimals (``"0.16"``, not ``"0.160"``), as Python's ``g`` format does.

    Returns
    -------
    str
        ``0.000123456`` -> ``"0.000123"``; ``1330.4`` -> ``"1,330"``; ``226800`` -> ``"226,800"``;
        ``-0.16`` -> ``"-0.16"``.
    """
    v = float(value)
    if v != v:
        return "n/a"
    if math.isinf(v):
        return ("+" if signed and v > 0 else "") + ("∞" if v > 0 else "-∞")
    if abs(v) < 1e-8:
        return "0"
    decimals = int(min(8, max(0, digits - 1 - math.floor(math.log10(abs(v))))))
    text = f"{v:{',' if grouping else ''}.{decimals}f}"
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    if text.lstrip("-").strip("0.,") == "":
        return "0"
    return ("+" if signed and v > 0 else "") + text


def plain_length_bound(values, digits: int = 3) -> np.ndarray:
    """An upper bound on ``len(plain(v, digits))`` of each value (thousands grouped, unsigned; ``trim`` only shortens).

    Without formatting: a sign, the integer digits with their commas, and ``plain``'s decimals; one more integer digit
    where rounding may carry into it (``9,999.6`` reads ``10,000``), and 99 where the value is so near a power of ten
    that ``plain``'s own ``log10`` may count its digits otherwise (format those). NaN and infinities: 99 (format them).
    The bound is the length itself for most values, so the longest text of many values is found by formatting few
    (:func:`app.services.row_view.widest_value_labels`).

    Parameters
    ----------
    values : array-like of float
    digits : int, default=3

    Returns
    -------
    ndarray of int, the shape of ``values``
    """
    v = np.asarray(values, dtype=float)
    a = np.abs(v)
    out = np.full(v.shape, 99, dtype=np.int64)
    ok = np.isfinite(v) & (a >= 1e-8)
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.log10(np.where(ok, a, 1.0))
    e = np.floor(lg)
    ok &= np.abs(lg - np.round(lg)) > 1e-9  # near 10^k: plain's math.log10 may floor the other way
    dec = np.clip(digits - 1 - e, 0, 8)
    carry = a + 0.5 * 10.0 ** -dec >= 10.0 ** (e + 1) * (1 - 1e-12)
    n_int = np.maximum(e + 1, 1) + carry
    length = (v < 0) + n_int + (n_int - 1) // 3 + np.where(dec > 0, dec + 1, 0)
    out[ok] = length[ok].astype(np.int64)
    out[np.isfinite(v) & (a < 1e-8)] = 1  # "0"
    return out


def gap_text(gap: float) -> str:
    """An additivity gap for display: ``"< 0.000001"`` when below a millionth, else :func:`plain`."""
    return "< 0.000001" if gap < 1e-6 else plain(gap)


def number_text(value, spec: str = ".4g") -> str:
    """``value`` formatted by a Python format ``spec``, except that a ``g`` spec (``".4g"``) becomes :func:`plain`
    with that many significant digits (``g`` switches to scientific notation from 1e+04 with 4 digits)."""
    if spec.endswith("g") and spec[1:-1].isdigit():
        return plain(value, int(spec[1:-1]), trim=True)
    return format(float(value), spec)


def parse_plain(text: str) -> float:
    """The number :func:`plain` wrote (commas and a leading ``+`` allowed): ``"1,330"`` -> ``1330.0``.

    Raises
    ------
    ValueError
        If ``text`` is not a number.
    """
    return float(str(text).replace(",", "").replace("∞", "inf"))
