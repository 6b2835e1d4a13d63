"""YAML loading that remembers the line of every value (for validation errors)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from workspace.safe_files import non_plain_yaml

__all__ = ["Error", "Located", "load_located"]

Path = tuple  # a tuple of str keys and int indices


@dataclass(frozen=True, order=True)
class Error:
    """One validation error.

    Parameters
    ----------
    line : int
        1-based line in the YAML file (0 when unknown, e.g. the file is missing).
    path : str
        Dotted location in the document, e.g. ``conditions[1].explanation``.
    message : str
        What was expected and what was received.
    """

    line: int
    path: str
    message: str

    def format(self, filename: str = "") -> str:
        """Return ``FILE:LINE: PATH: MESSAGE`` (one line)."""
        where = f"{self.path}: " if self.path else ""
        prefix = f"{filename}:" if filename else "line "
        return f"{prefix}{self.line}: {where}{self.message}".replace("\n", " ")


def path_str(path: Path) -> str:
    """Render ``("conditions", 1, "id")`` as ``conditions[1].id``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


@dataclass
class Located:
    """A plain Python document plus the line of each path.

    Attributes
    ----------
    data : Any
        The document as dicts, lists and scalars (``yaml.safe_load`` semantics).
    lines : dict
        Path tuple to the 1-based line of the value at that path.
    key_lines : dict
        Path tuple to the 1-based line of the mapping key naming it.
    errors : list of Error
        Structural problems found while loading (duplicate keys, syntax).
    """

    data: Any
    lines: dict
    key_lines: dict
    errors: list

    def line(self, path: Path) -> int:
        """Line of ``path`` or of its nearest located ancestor (1 if none)."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)

    def error(self, path: Path, message: str, *, at_key: bool = False) -> Error:
        """Build an :class:`Error` located at ``path``."""
        path = tuple(path)
        line = self.key_lines.get(path) if at_key else None
        return Error(line or self.line(path), path_str(path), message)


def load_located(text: str) -> Located:
    """Parse YAML ``text`` with the safe loader, recording line numbers.

    Parameters
    ----------
    text : str
        YAML source.

    Returns
    -------
    Located
        ``data`` is None when the text is empty or unparsable (then ``errors``
        holds the syntax error with its line).
    """
    loc = Located(None, {}, {}, [])
    found = non_plain_yaml(text)
    if found is not None:  # a few bytes of aliases expand to gigabytes once walked ("billion laughs")
        loc.errors.append(Error(found[0], "", found[1]))
        return loc
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            loc.data = _walk(loader, node, (), loc)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        loc.errors.append(Error(line, "", f"YAML syntax error: {exc.problem or exc}"))
        loc.data = None
    except yaml.YAMLError as exc:  # pragma: no cover - unmarked errors are rare
        loc.errors.append(Error(1, "", f"YAML error: {exc}"))
        loc.data = None
    finally:
        loader.dispose()
    return loc


def _walk(loader: yaml.SafeLoader, node: yaml.Node, path: Path, loc: Located) -> Any:
    loc.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                loc.errors.append(Error(key_node.start_mark.line + 1, path_str(path), "mapping keys must be scalars"))
                continue
            child = path + (key,)
            if key in out:
                loc.errors.append(Error(key_node.start_mark.line + 1, path_str(child), f"duplicate key {key!r}"))
            loc.key_lines[child] = key_node.start_mark.line + 1
            out[key] = _walk(loader, value_node, child, loc)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_walk(loader, item, path + (i,), loc) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)
