"""What a skops model file may hold before Candor loads it: reviewed types, bounded sizes, sound trees.

skops rebuilds objects by *calling* the types a file names (``ConstructorFromReduceNode``
calls ``module.name(*args)``), so trusting a type name is trusting code. Candor trusts:

- what skops trusts by default (``skops.io.get_untrusted_types`` leaves it out);
- every scikit-learn estimator or transformer class (:func:`sklearn.utils.all_estimators`,
  all :class:`sklearn.base.BaseEstimator` subclasses), by fully qualified name;
- :data:`REVIEWED_TYPES`, a short list of helper types fitted estimators hold, each reviewed here;
- :data:`REVIEWED_FUNCTIONS`, functions a model may *refer to*; ``functools.partial`` is accepted
  only around one of them (checked in the file's schema, :func:`check_partials`).

Never a type or function because of its module prefix (``numpy.testing`` and scikit-learn's own
test helpers run strings of Python; ``numpy.save`` writes files).

Before skops reads anything, :func:`check_archive` bounds what the zip unpacks to
(``CANDOR_MAX_MODEL_UNPACKED_MB``, default 1024; a member bigger than 1 MiB may not inflate more
than :data:`MAX_RATIO` times; every ``.npy`` header's declared shape must match the bytes stored),
so a small file cannot take gigabytes of memory. After loading, :func:`check_structures` checks the
node arrays scikit-learn's compiled tree code indexes without bounds checks (``Tree``,
``TreePredictor``), so a crafted tree cannot crash the process or loop forever, and rebuilds
neighbour search trees (``KDTree``, ``BallTree``) from the estimator's own training rows.

References
----------
https://skops.readthedocs.io/en/stable/persistence.html (trusted types);
https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html (``.npy`` header).
"""
from __future__ import annotations

import functools
import json
import zipfile
from pathlib import Path

import numpy as np

from .errors import CandorError
from .model_structures import check_structures

MAX_UNPACKED_ENV = "CANDOR_MAX_MODEL_UNPACKED_MB"
MAX_RATIO = 100
"""Largest uncompressed/compressed size of one zip member bigger than :data:`RATIO_FROM_BYTES`.
skops writes members uncompressed (ratio 1); deflated float weights shrink about 1.1x and a JSON schema
10-30x, while a crafted member of zeros inflates about 1000x (deflate) or far more (bzip2, lzma)."""
RATIO_FROM_BYTES = 2**20
SCHEMA_SHARE = 8
"""``schema.json`` may use 1/8 of the unpacked limit: parsed JSON takes about ten times its text in memory."""

REVIEWED_TYPES = frozenset({
    # node arrays checked by check_structures (skops does not trust them: it cannot check their indices)
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    # search trees of KNN estimators: rebuilt from the estimator's _fit_X by check_structures
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neighbors._ball_tree.BallTree",
    # the metrics those search trees hold (parameter-free or one number; rebuilt with the tree)
    "sklearn.metrics._dist_metrics.EuclideanDistance64",
    "sklearn.metrics._dist_metrics.ManhattanDistance64",
    "sklearn.metrics._dist_metrics.ChebyshevDistance64",
    "sklearn.metrics._dist_metrics.MinkowskiDistance64",
    # plain data holders: attributes only, no code in __init__/__setstate__
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
    "sklearn.utils._bunch.Bunch",
    "sklearn.compose._column_transformer.make_column_selector",  # a pattern and dtypes; selects columns
    # numpy dtype classes (ColumnTransformer's dtype_include=np.number, OneHotEncoder's dtype)
    "numpy.dtype", "numpy.number", "numpy.integer", "numpy.floating", "numpy.bool_", "numpy.object_",
    "functools.partial",  # only around a REVIEWED_FUNCTIONS entry: see check_partials
})
PARTIAL = ("functools", "partial")
"""A schema node's ``(__module__, __class__)`` that makes a ``functools.partial`` (:func:`check_partials`)."""
REVIEWED_FUNCTIONS = frozenset({
    # HistGradientBoosting(categorical_features="from_dtype") stores partial(check_array, ...):
    # it validates and converts an array, nothing else
    "sklearn.utils.validation.check_array",
})


@functools.cache
def allowed_types() -> frozenset[str]:
    """Fully qualified names Candor trusts beyond skops's defaults: estimator classes and the reviewed lists.

    Returns
    -------
    frozenset of str
        ``module.QualName`` of every class from :func:`sklearn.utils.all_estimators` (each a
        :class:`~sklearn.base.BaseEstimator` subclass defined in scikit-learn), plus
        :data:`REVIEWED_TYPES` and :data:`REVIEWED_FUNCTIONS`. Functions are never taken from
        ``all_estimators``; names are compared, never imported from the file.
    """
    from .sklearn_types import estimator_names  # all_estimators' names, recorded for the pinned scikit-learn

    estimators = {f"{module}.{qualname}" for _, module, qualname, base in estimator_names()
                  if base and module.startswith("sklearn.")}
    return frozenset(estimators) | REVIEWED_TYPES | REVIEWED_FUNCTIONS


def refused_types(untrusted) -> list[str]:
    """The names in ``untrusted`` (from ``skops.io.get_untrusted_types``) that are not in :func:`allowed_types`."""
    allowed = allowed_types()
    return sorted(t for t in untrusted if t not in allowed)


def unpacked_limit() -> int:
    """Bytes a model archive may unpack to: ``CANDOR_MAX_MODEL_UNPACKED_MB`` MiB (default 1024).

    Raises
    ------
    CandorError
        If the variable is set but not a positive whole number.
    """
    from .settings import current

    return current().max_model_unpacked_mb * 2**20


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def check_archive(path: Path, *, limit: int | None = None) -> None:
    """Refuse a zip model file that would unpack to more memory than allowed, before anything is unpacked.

    Parameters
    ----------
    path : Path
        A skops file (or any zip-based model file).
    limit : int, optional
        Bytes; default :func:`unpacked_limit`.

    Raises
    ------
    CandorError
        Naming the numbers: total unpacked size over ``limit``; a member over ``limit``, or bigger
        than 1 MiB and compressed more than :data:`MAX_RATIO` times; ``schema.json`` over
        ``limit / 8``; an ``.npy`` member whose header is unreadable, declares an object dtype, or
        declares a shape whose bytes differ from what the member holds.
    """
    limit = unpacked_limit() if limit is None else limit
    name = path.name
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CandorError(f"{name}: not a readable skops file (not a zip archive: {exc})") from None
    with z:
        infos = z.infolist()
        total = sum(i.file_size for i in infos)
        if total > limit:
            raise CandorError(f"{name}: unpacks to {_mib(total)} ({len(infos)} members), over the {_mib(limit)} "
                              f"limit for model files ({MAX_UNPACKED_ENV})")
        for i in infos:
            ratio = i.file_size / max(i.compress_size, 1)
            if i.file_size > RATIO_FROM_BYTES and ratio > MAX_RATIO:
                raise CandorError(f"{name}: member {i.filename} inflates from {i.compress_size:,} bytes to "
                                  f"{_mib(i.file_size)} ({ratio:,.0f} times; at most {MAX_RATIO:,} times is accepted "
                                  "for members over 1 MiB)")
            if i.filename == "schema.json" and i.file_size > limit // SCHEMA_SHARE:
                raise CandorError(f"{name}: schema.json is {_mib(i.file_size)}, over {_mib(limit // SCHEMA_SHARE)} "
                                  f"(1/{SCHEMA_SHARE} of the {MAX_UNPACKED_ENV} limit)")
            if i.filename.endswith(".npy"):
                _check_npy_header(z, i, name)


def _check_npy_header(z: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> None:
    """The ``.npy`` header's shape x itemsize must equal the bytes after the header (read without the data)."""
    from numpy.lib import format as npformat

    with z.open(info) as f:
        try:
            first = npformat.read_magic(f) == (1, 0)
            length = f.read(2 if first else 4)  # the header's length, little-endian ('<H' in version 1, else '<I')
            size = int.from_bytes(length, "little") if len(length) == (2 if first else 4) else 0
            shape, dtype = _npy_header(first, length + f.read(size))
            offset = f.tell()
        except Exception as exc:  # numpy raises ValueError/EOFError/SyntaxError for malformed headers
            raise CandorError(f"{name}: member {info.filename} is not a valid .npy array ({exc})") from None
    if dtype.hasobject:
        raise CandorError(f"{name}: member {info.filename} declares Python objects (dtype {dtype}); "
                          "skops never stores arrays of objects this way")
    declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
    held = info.file_size - offset
    if declared != held:
        raise CandorError(f"{name}: member {info.filename} declares an array of shape {tuple(shape)} "
                          f"({declared:,} bytes) but holds {held:,} bytes")


@functools.lru_cache(maxsize=256)
def _npy_header(first: bool, blob: bytes):
    """``(shape, dtype)`` numpy reads from ``blob``, a ``.npy`` header's length and text after its magic (version 1,
    or 2 for any other, as before): the same text parsed once (a 200-tree forest's 1,001 members have 34 headers;
    numpy's ``ast.literal_eval`` of each was 0.09 s of the landing page's path, issue 23)."""
    import io

    from numpy.lib import format as npformat

    read = npformat.read_array_header_1_0 if first else npformat.read_array_header_2_0
    shape, _, dtype = read(io.BytesIO(blob), max_header_size=10_000)
    return shape, dtype


def _walk_schema(node):
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def check_partials(path: Path) -> None:
    """Every ``functools.partial`` in a skops file must be skops's ``PartialNode`` wrapping a function on
    :data:`REVIEWED_FUNCTIONS`: a node of any other loader that names the class ``functools.partial`` (skops's
    ``ConstructorFromReduceNode`` calls the class it names with any arguments) is refused too.

    Call after :func:`check_archive` (the schema's size is bounded there). A schema whose UTF-8 text holds neither
    ``artial`` (of ``PartialNode`` and ``partial``) nor a ``\\u`` escape has neither string once decoded (JSON
    spells a letter only as itself or as ``\\uXXXX``), so it holds no partial and is not parsed here (a random
    forest of 200 trees: 3 MB of schema, 0.03 s parsed and walked in a server process, on the path to the landing
    page, issue 23); skops parses it to load.

    Raises
    ------
    CandorError
        Naming the wrapped function (or loader) that is not on the list.
    """
    with zipfile.ZipFile(path) as z:
        try:
            text = z.read("schema.json")
            if json.detect_encoding(text) == "utf-8" and b"artial" not in text and b"\\u" not in text:
                return
            schema = json.loads(text)
        except (KeyError, ValueError) as exc:
            raise CandorError(f"{path.name}: not a readable skops file (schema.json: {exc})") from None
    for node in _walk_schema(schema):
        loader = node.get("__loader__")
        if loader != "PartialNode" and (node.get("__module__"), node.get("__class__")) == PARTIAL:
            raise CandorError(f"{path.name}: refusing a functools.partial made by {loader} (a partial may only be "
                              "skops's PartialNode)")
        if loader != "PartialNode":
            continue
        func = (node.get("content") or {}).get("func") or {}
        what = f"{func.get('__module__')}.{func.get('__class__')}"
        if func.get("__loader__") != "FunctionNode" or what not in REVIEWED_FUNCTIONS:
            raise CandorError(f"{path.name}: refusing a functools.partial of {what} (loaded as "
                              f"{func.get('__loader__')}); a partial may only wrap "
                              f"{', '.join(sorted(REVIEWED_FUNCTIONS))}")


def load_skops(path: Path, *, trust_code: bool = False):
    """Load a skops file holding only types skops trusts, scikit-learn estimator classes and reviewed helpers.

    Parameters
    ----------
    path : Path
    trust_code : bool, default=False
        Load every type the file names (the CLI's ``--trust-model-code``): skops *calls* the types it
        rebuilds, so this runs code from the file. Never set for an upload.

    Raises
    ------
    CandorError
        If the archive would unpack to more than ``CANDOR_MAX_MODEL_UNPACKED_MB`` (or inflates
        suspiciously, see :func:`workspace.model_safety.check_archive`), is not a valid skops archive, holds a
        type that is not on :func:`workspace.model_safety.allowed_types` (named) without ``trust_code``, or
        holds a tree whose node arrays are out of range.
    """
    from .sklearn_types import import_skops_io

    sio = import_skops_io()  # without importing every scikit-learn module (workspace.sklearn_types)
    check_archive(path)
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:  # skops raises zipfile/json errors on non-skops files
        raise CandorError(f"{path.name}: not a readable skops file ({type(exc).__name__}: {exc})") from None
    if not trust_code:
        refused = refused_types(untrusted)
        if refused:
            raise CandorError(f"{path.name}: refusing to load types that are not on Candor's reviewed list of "
                              f"scikit-learn estimators and helpers (skops calls them while loading, so they can "
                              f"run code): {', '.join(refused)}; only from the command line, for a file you "
                              "trust: --trust-model-code")
        check_partials(path)
    try:
        model = sio.load(path, trusted=list(untrusted))
    except Exception as exc:
        raise CandorError(f"{path.name}: skops could not rebuild the model ({type(exc).__name__}: {exc})") from None
    check_structures(model, path.name)
    return model
