"""The data table filtered by value: Dash DataTable's filter row (``filter_action="custom"``) read on the server.

The browser sends one condition a column, ANDed (``{c3} > 15 && {c0} contains "Priv"``: the column's key from
:func:`~.data_table.data_columns`, Dash's relational operator, a value); only the matching rows, one page of them,
reach the browser (:func:`~.data_table.data_page`; the rows kept: :func:`~.data_table.filtered_rows`). This module
reads the query and decides each row; the table gives the columns. A number column's comparison is the Cohorts
page's :class:`explainers.cohorts.Filter` on the column's numbers (a missing value matches only ``!=``); a text
column (and ``contains`` on any column) compares the cell as the table shows it (:func:`~.data_table.cell_texts`).
A condition that cannot be read or applied is one line naming the column as the table heads it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from explainers.cohorts import Filter
from workspace.errors import CandorError


MAX_QUERY = 2_000
"""Longest filter a request may send (characters): a condition a column of one page is far less."""
SYMBOLS = {"eq": "=", "ne": "!=", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}
"""Dash's operator words and the symbols they stand for."""
_PART = re.compile(r"\{(?P<key>[^{}]+)\}\s*(?P<case>[si]?)(?P<op>(?:contains|datestartswith|eq|ne|gt|ge|lt|le)(?![\w])"
                   r"|<=|>=|!=|=|<|>)\s*(?P<value>.*)", re.S)
"""One condition as the filter row writes it: ``{c1} s> 10``, ``{c0} scontains teacher``, ``{c0} icontains "Te"``
(Dash puts ``s`` (case-sensitive) or ``i`` before the operator, word or symbol, or nothing when typed by hand)."""


@dataclass(frozen=True)
class Condition:
    """One column's condition: the column's key, the operator (``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``,
    ``contains``, ``datestartswith``), the value as typed, and whether text compares ignoring case."""

    key: str
    op: str
    value: str
    ignore_case: bool = False


def _unquoted(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        q = text[0]
        return text[1:-1].replace("\\" + q, q)
    return text


def parse(query) -> tuple[Condition, ...]:
    """The conditions of a DataTable ``filter_query`` (empty or None: none).

    Raises
    ------
    CandorError
        For a query that is not text, longer than :data:`MAX_QUERY`, joined by ``||``, or a condition that is not
        ``{column} operator value``.
    """
    if query is None or (isinstance(query, str) and not query.strip()):
        return ()
    if not isinstance(query, str) or len(query) > MAX_QUERY:
        raise CandorError(f"a table filter is text of at most {MAX_QUERY:,} characters")
    out = []
    for part in query.split(" && "):
        m = _PART.fullmatch(part.strip())
        if m is None or " || " in part:
            shown = part.strip()[:60]
            raise CandorError(f"cannot filter by {shown!r}: type a value, or an operator (=, !=, <, <=, >, >=, "
                              "contains) and a value, in a column's filter cell")
        op = m.group("op")
        out.append(Condition(m.group("key").strip(), SYMBOLS.get(op, op), _unquoted(m.group("value")),
                             m.group("case") == "i"))
    return tuple(out)


def mask(c: Condition, name: str, numbers, texts) -> np.ndarray:
    """The rows ``c`` keeps of a column headed ``name``: ``numbers`` (float, NaN missing) for a number column, else
    None; ``texts`` its cells as the table shows them (may be None for a number column without text).

    Raises
    ------
    CandorError
        A number compared with a word, or a text column compared with ``<``, ``<=``, ``>`` or ``>=`` (naming it).
    """
    if numbers is not None and c.op not in ("contains", "datestartswith"):
        try:
            value = float(c.value.replace(",", ""))
        except ValueError:
            raise CandorError(f"{name} holds numbers: {c.op} takes a number, got {c.value[:40]!r}") from None
        return Filter(name, "==" if c.op == "=" else c.op, value).mask(numbers)
    shown = texts if texts is not None else np.asarray([str(round(v, 4)) for v in numbers], dtype=object)
    want = c.value.lower() if c.ignore_case else c.value
    cells = [t.lower() if c.ignore_case else t for t in map(str, shown)]
    if c.op == "contains":
        return np.asarray([want in t for t in cells], dtype=bool)
    if c.op == "datestartswith":
        return np.asarray([t.startswith(want) for t in cells], dtype=bool)
    if c.op in ("=", "!="):
        same = np.asarray([t == want for t in cells], dtype=bool)
        return same if c.op == "=" else ~same
    raise CandorError(f"{name} holds text: filter it with =, != or contains, not {c.op}")
