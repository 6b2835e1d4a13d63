"""Names people read for the user's features, and how their values are written: an optional sidecar file.

Like shapash's ``features_dict``, a small YAML or JSON file maps each column to a display name, and
optionally a description and a value format::

    mean radius: Mean radius (µm)          # a display name only
    mean area:
      name: Mean area
      description: Average area of the cell nuclei
      unit: µm²                            # appended to every value
      decimals: 0                          # fixed decimals (default: plain(), 3 significant digits)
    share_married:
      percent: true                        # 0.125 reads 12.5 %
    sex:
      categories: {0: female, 1: male}     # value (or level) -> label

It is given as ``features_file`` to :func:`workspace.workspace.load_pair` or found beside the data as
``<data file>.features.yaml`` (``.yml``, ``.json``). :func:`load_features` checks it (its size before
reading it, every feature and key), and :meth:`FeatureNames.apply` puts the names and formats on the
table's :class:`~explainers._codec.TabularCodec`: every figure, sentence, rule and the report read
names and values through the codec, so they all show the same text. The model still gets its own
columns (the codec decodes to them).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .errors import CandorError
from .safe_files import plain_yaml, read_bounded

__all__ = ["FeatureFormat", "FeatureNames", "load_features", "find_features_file", "misnamed_features_file",
           "MAX_BYTES", "SUFFIXES"]

MAX_BYTES = 256 * 1024
"""Largest features file read (checked on disk before reading)."""
SUFFIXES = (".yaml", ".yml", ".json")
KEYS = ("name", "description", "unit", "decimals", "percent", "categories")
_LIMITS = {"name": 80, "description": 500, "unit": 20, "category": 80}


@dataclass(frozen=True)
class FeatureFormat:
    """How one feature is named and its values written.

    Parameters
    ----------
    name : str
        Display name (default the column's own name).
    description : str
        One sentence about the feature ("" if none).
    unit : str
        Appended to every number, e.g. ``"µm²"`` ("" if none).
    decimals : int, optional
        Fixed number of decimals; ``None``: :func:`explainers.numbers.plain` (3 significant digits).
    percent : bool
        A share written as a percentage (``0.125`` -> ``"12.5 %"``).
    categories : mapping of str to str
        Value or level (as text; whole numbers without ``.0``) -> label.
    """

    name: str
    description: str = ""
    unit: str = ""
    decimals: int | None = None
    percent: bool = False
    categories: Mapping[str, str] = field(default_factory=dict)

    def text(self, value) -> str:
        """``value`` (a number, or a category level) as people read it with this format.

        >>> FeatureFormat("area", unit="µm²", decimals=0).text(1001.4)
        '1,001 µm²'
        >>> FeatureFormat("married", percent=True).text(0.125)
        '12.5 %'
        >>> FeatureFormat("sex", categories={"1": "male"}).text(1.0)
        'male'
        """
        if self.categories:
            label = self.categories.get(_key(value))
            if label is not None:
                return label
        if isinstance(value, str) or not _is_number(value):
            return str(value)
        from explainers.numbers import plain  # the one formatter of numbers people read

        v = float(value) * (100 if self.percent else 1)
        text = plain(v) if self.decimals is None else f"{v:,.{self.decimals}f}"
        suffix = " %" if self.percent else (f" {self.unit}" if self.unit else "")
        return text + suffix


def _is_number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _key(value) -> str:
    """A value as the key of a ``categories`` mapping: whole numbers without ``.0``."""
    if isinstance(value, bool) or not _is_number(value) or isinstance(value, str):
        return str(value)
    v = float(value)
    return str(int(v)) if v == v and v.is_integer() else str(v)


@dataclass(frozen=True)
class FeatureNames:
    """The features file of a table: :class:`FeatureFormat` by column name (columns it leaves out keep theirs).

    Parameters
    ----------
    formats : mapping of str to FeatureFormat
    source : str
        The file's name, for messages and the workspace's notes.
    """

    formats: Mapping[str, FeatureFormat]
    source: str = ""

    def label(self, column: str) -> str:
        """Display name of ``column``."""
        f = self.formats.get(str(column))
        return f.name if f is not None else str(column)

    def description(self, column: str) -> str:
        """Description of ``column`` ("" if none)."""
        f = self.formats.get(str(column))
        return f.description if f is not None else ""

    def apply(self, codec):
        """``codec`` with these display names and value formats (decoding still gives the model's columns).

        Parameters
        ----------
        codec : explainers._codec.TabularCodec

        Returns
        -------
        TabularCodec
            A relabelled copy (:meth:`~explainers._codec.TabularCodec.relabel`).
        """
        return codec.relabel({c: f.name for c, f in self.formats.items()}, dict(self.formats))


def find_features_file(data_path: str | Path, given: str | Path | None = None) -> Path | None:
    """The features file: ``given`` (which must exist), else ``<data file>.features.yaml|.yml|.json`` if present.

    Raises
    ------
    CandorError
        If ``given`` is not a file.
    """
    if given is not None:
        path = Path(given)
        if not path.is_file():
            raise CandorError(f"features file not found: {path}")
        return path
    data = Path(data_path)
    for suffix in SUFFIXES:
        candidate = data.with_name(f"{data.name}.features{suffix}")
        if candidate.is_file():
            return candidate
    return None


def misnamed_features_file(data_path: str | Path) -> str:
    """A one-line warning if ``<data stem>.features.yaml|.yml|.json`` lies beside the data, else "".

    Only ``<data file>.features.yaml`` is read (:func:`find_features_file`): a stem name would be shared
    by ``wine.csv`` and ``wine.parquet`` in one folder, and two accepted names would need a rule for when
    both are present. A file named by the stem is the likely wrong guess, so it is named, never read.
    """
    data = Path(data_path)
    if not data.suffix:
        return ""
    for suffix in SUFFIXES:
        guess = data.with_name(f"{data.stem}.features{suffix}")
        if guess.is_file():
            return (f"found {guess.name} beside {data.name} but did not read it: Candor reads "
                    f"{data.name}.features{suffix} (rename it, or give it with --features-file)")
    return ""


MAX_NESTING = 32
"""Deepest nesting of ``[`` and ``{`` a features file may have (two levels are all it needs)."""
MAX_INDENT = 64
"""Most leading spaces of a line: YAML nested by indentation (whether PyYAML then raises RecursionError depends
on the process's recursion limit, so the bound is checked on the text, before parsing)."""


def _nesting(text: str) -> int:
    """Deepest nesting of brackets and braces in ``text`` (a bound checked before parsing: a bracket inside a
    quoted string counts too, which only errs towards refusing a file that needs no such depth)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _parse(path: Path) -> object:
    if path.suffix.lower() not in SUFFIXES:
        raise CandorError(f"{path.name}: a features file is YAML or JSON ({', '.join(SUFFIXES)})")
    text = read_bounded(path, MAX_BYTES, "features file").decode("utf-8", errors="replace")
    indent = max((len(ln) - len(ln.lstrip(" \t")) for ln in text.splitlines()), default=0)
    if _nesting(text) > MAX_NESTING or indent > MAX_INDENT:  # PyYAML's time grows with the square of the depth
        raise CandorError(f"{path.name}: nested more than {MAX_NESTING} levels deep or indented more than "
                          f"{MAX_INDENT} spaces (a features file maps each feature to a name or a few keys)")
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise CandorError(f"{path.name}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return plain_yaml(text, path.name)  # plain data only: no anchors, aliases or tags


def _text(where: str, key: str, value, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CandorError(f"{where}: {key} must be non-empty text, got {value!r}")
    if len(value) > limit:
        raise CandorError(f"{where}: {key} is longer than {limit} characters")
    return value.strip()


def _entry(where: str, column: str, spec) -> FeatureFormat:
    if isinstance(spec, str):
        return FeatureFormat(_text(where, "name", spec, _LIMITS["name"]))
    if not isinstance(spec, dict):
        raise CandorError(f"{where}: give a display name or a mapping of {', '.join(KEYS)}, got {type(spec).__name__}")
    unknown = [str(k) for k in spec if k not in KEYS]
    if unknown:
        raise CandorError(f"{where}: unknown key {unknown[0]!r} (expected {', '.join(KEYS)})")
    out = {"name": _text(where, "name", spec["name"], _LIMITS["name"]) if "name" in spec else column}
    for key in ("description", "unit"):
        if key in spec:
            out[key] = _text(where, key, spec[key], _LIMITS[key])
    if "decimals" in spec:
        d = spec["decimals"]
        if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= 8:
            raise CandorError(f"{where}: decimals must be a whole number from 0 to 8, got {d!r}")
        out["decimals"] = d
    if "percent" in spec:
        if not isinstance(spec["percent"], bool):
            raise CandorError(f"{where}: percent must be true or false, got {spec['percent']!r}")
        out["percent"] = spec["percent"]
    if "categories" in spec:
        cats = spec["categories"]
        if not isinstance(cats, dict) or not cats:
            raise CandorError(f"{where}: categories must map values to labels, e.g. {{0: female, 1: male}}")
        out["categories"] = {_key(k): _text(f"{where}: category {k!r}", "its label", v, _LIMITS["category"])
                             for k, v in cats.items()}
    if out.get("percent") and out.get("unit"):
        raise CandorError(f"{where}: give either percent or a unit, not both")
    return FeatureFormat(**out)


def load_features(path: str | Path, columns=None) -> FeatureNames:
    """Read and check a features file against the table's ``columns``.

    Parameters
    ----------
    path : str or Path
        YAML (read with ``yaml.safe_load``: plain data, nothing built from tags) or JSON, at most
        :data:`MAX_BYTES` bytes (checked before reading).
    columns : sequence of str, optional
        The feature columns the model takes. None: the file is checked on its own (size, format, every key and
        value, two features with one display name), as the upload page does when it arrives, before the table it
        describes is chosen; its features are checked against the columns when the pair is loaded.

    Returns
    -------
    FeatureNames

    Raises
    ------
    CandorError
        One line naming the file and the key: too large, not YAML/JSON, not a mapping, an unknown
        feature, an unknown or malformed key, two features with one display name (or a display name
        that is another column's name).
    """
    path = Path(path)
    try:
        data = _parse(path)
    except RecursionError:  # YAML nested by indentation past the parser's depth
        raise CandorError(f"{path.name}: nested too deeply to read (a features file maps each feature to a name "
                          "or a few keys)") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CandorError(f"{path.name}: must map feature names to a display name or a format, "
                          f"got {type(data).__name__}")
    columns = [str(c) for c in (data if columns is None else columns)]
    formats = {}
    for key, spec in data.items():
        column = str(key)
        if column not in columns:
            listed = ", ".join(columns[:6]) + (" ..." if len(columns) > 6 else "")
            raise CandorError(f"{path.name}: unknown feature {column!r} (not a column the model takes: {listed})")
        formats[column] = _entry(f"{path.name}: feature {column!r}", column, spec)
    shown: dict[str, str] = {}
    for column in columns:
        name = formats[column].name if column in formats else column
        if name in shown:
            raise CandorError(f"{path.name}: features {shown[name]!r} and {column!r} would both read {name!r}")
        shown[name] = column
    return FeatureNames(formats, path.name)

