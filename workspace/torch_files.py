"""Load a PyTorch tabular model: a state dict plus a named class; TorchScript only for a file you trust.

Two kinds of file are accepted, both read on the CPU:

- a **state dict** (``.pt``/``.pth`` written by ``torch.save(model.state_dict(), path)``,
  read with ``torch.load(path, map_location="cpu", weights_only=True)``, or
  ``.safetensors`` read with ``safetensors.torch.load_file``) **plus a model class**
  named ``package.module:ClassName``. The file holds tensors only; the class is the
  trusted code: the user names it explicitly, it must be importable here (the working
  directory is on the path of ``python -m app``), it is built with keyword arguments from a
  JSON object, and the weights are loaded with ``load_state_dict(strict=True)``. This is the default.
  Before anything is imported, the class is looked up in its module's source file (:func:`_check_module`:
  found on the path, parsed with :mod:`ast`, never run), and a module of the standard library or the
  installed packages (other than ``torch.nn``) is imported only with ``trust_code``.
- a **TorchScript archive** (``.pt``/``.pth``/``.torchscript``, written by
  ``torch.jit.script(model).save(path)`` or ``torch.jit.trace``): a *program*, read with
  ``torch.jit.load(path, map_location="cpu")``. Its code runs in torch's interpreter when it is
  loaded and called, and can read and write any file (``torch.from_file(..., shared=True)``,
  ``torch.save``), so it is loaded only with ``trust_code=True`` (the CLI's
  ``--trust-model-code``, alias ``--trust-pickle``), and never uploaded.

A whole pickled model (``torch.save(model)``) is refused, since unpickling it would
run code from the file; ``--trust-pickle`` does not change that. A zip-based file is first
checked against the unpacked-size limit of :func:`workspace.model_safety.check_archive`.

Which classes and outputs the model has come from :class:`TorchOptions`: the CLI
options ``--torch-class``, ``--torch-kwargs``, ``--classes``, ``--torch-output``
(or their ``CANDOR_*`` variables, :meth:`TorchOptions.from_env`), or a JSON
sidecar named after the model file plus ``.json`` (``model.pt`` -> ``model.pt.json``)::

    {"class": "mypkg.nets:MLP", "kwargs": {"n_features": 30, "hidden": 32},
     "classes": ["benign", "malignant"], "output": "logits",
     "feature_names": ["mean radius", "..."]}

Every key is optional; an option given on the command line wins over the same key
in the sidecar. No ``classes`` means a regressor (one output per row).
``output`` is ``"logits"`` (default; softmax, or sigmoid of a single column) or
``"probabilities"``. Without ``feature_names`` the table's columns, minus the
target, are the model's inputs in the table's order.

References
----------
https://pytorch.org/docs/stable/generated/torch.load.html (``weights_only``);
https://pytorch.org/docs/stable/generated/torch.jit.load.html;
https://huggingface.co/docs/safetensors
"""
from __future__ import annotations

import ast
import importlib
import json
import re
import sys
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path

from .errors import CandorError, first_line
from .torch_options import TorchOptions
from .safe_files import read_bounded

MAX_SIDECAR_BYTES = 64 * 1024
"""Largest model options file (``<model>.json``) read."""

TORCH_SUFFIXES = (".pt", ".pth", ".torchscript", ".safetensors")
SIDECAR_KEYS = {"class": "model_class", "kwargs": "kwargs", "classes": "classes", "output": "output",
                "feature_names": "feature_names"}
_CLASS_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def read_sidecar(path: Path) -> TorchOptions:
    """Options from ``<model file>.json`` if it exists, else empty options.

    Raises
    ------
    CandorError
        For invalid JSON, unknown keys or values of the wrong type (naming the sidecar).
    """
    side = path.with_name(path.name + ".json")
    if not side.is_file():
        return TorchOptions()
    try:
        data = json.loads(read_bounded(side, MAX_SIDECAR_BYTES, "model options file").decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CandorError(f"{side.name}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CandorError(f"{side.name}: expected a JSON object with keys {', '.join(SIDECAR_KEYS)}")
    unknown = sorted(set(data) - set(SIDECAR_KEYS))
    if unknown:
        raise CandorError(f"{side.name}: unknown keys {', '.join(unknown)}; allowed: {', '.join(SIDECAR_KEYS)}")
    types = {"class": str, "kwargs": dict, "classes": list, "output": str, "feature_names": list}
    for key, value in data.items():
        if not isinstance(value, types[key]):
            raise CandorError(f"{side.name}: {key!r} must be a {types[key].__name__}, got {type(value).__name__}")
    if data.get("output", "logits") not in ("logits", "probabilities"):
        raise CandorError(f"{side.name}: 'output' must be 'logits' or 'probabilities', got {data['output']!r}")
    values = {SIDECAR_KEYS[k]: (tuple(v) if isinstance(v, list) else v) for k, v in data.items()}
    return TorchOptions(**values)


def _is_torchscript(path: Path) -> bool:
    """TorchScript archives are zip files holding a ``code/`` folder or ``constants.pkl`` (``torch.save`` zips do not;
    ``constants.pkl`` is what ``torch.load`` itself looks for before handing a file to ``torch.jit.load``)."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as z:
        return any("/code/" in n or n.startswith("code/") or n.endswith("constants.pkl") for n in z.namelist())


def _read_state_dict(path: Path) -> Mapping:
    import torch

    if path.suffix.lower() == ".safetensors":
        from safetensors.torch import load_file

        try:
            return load_file(str(path), device="cpu")
        except Exception as exc:
            raise CandorError(f"{path.name}: not a readable safetensors file ({first_line(exc)})") from None
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        found = re.search(r"Unsupported global: GLOBAL ([\w.]+)", str(exc))
        if not found:
            why = re.search(r"WeightsUnpickler error:\s*(\S[^\n]*)", str(exc))
            raise CandorError(f"{path.name}: not a PyTorch file Candor can read (a TorchScript archive or a "
                              f"state dict; {why.group(1) if why else first_line(exc)})") from None
        raise CandorError(f"{path.name}: holds pickled Python objects ({found.group(1)}), "
                          "e.g. a whole model saved with torch.save(model); Candor never unpickles code. Save "
                          "torch.save(model.state_dict(), path) and name the class with --torch-class") from None
    for key in ("state_dict", "model_state_dict"):  # common training checkpoints
        if isinstance(obj, Mapping) and isinstance(obj.get(key), Mapping):
            obj = obj[key]
    if not isinstance(obj, Mapping) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise CandorError(f"{path.name}: holds a {type(obj).__name__}, not a state dict of tensors")
    return obj


def _system_folders() -> list[Path]:
    """The Python installation's standard library and installed-packages folders (not the operator's own code)."""
    import site
    import sysconfig

    paths = [sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    paths += [*site.getsitepackages(), site.getusersitepackages()]
    return [Path(p).resolve() for p in paths if p]


def _find_module(module_name: str):
    """The specs of ``module_name`` and of each package above it, found on ``sys.path`` without running any of them.

    ``importlib.util.find_spec("a.b")`` imports ``a`` (runs its ``__init__``); this walks the path finder one
    level at a time instead, through a loaded package's ``__path__`` or the found one's search locations.
    Returns None when a level is not found by the path finder (a builtin, frozen or custom-loader module).
    """
    from importlib.machinery import PathFinder

    specs, search = [], None
    parts = module_name.split(".")
    for i in range(len(parts)):
        name = ".".join(parts[:i + 1])
        loaded = sys.modules.get(name)
        spec = getattr(loaded, "__spec__", None) if loaded is not None else PathFinder.find_spec(name, search)
        if spec is None:
            return None
        specs.append(spec)
        search = spec.submodule_search_locations
        if search is None and i < len(parts) - 1:
            return None
    return specs


def _binds(body: list, name: str):
    """Where ``name`` is bound among module- or class-level statements ``body``: its ClassDef, True for another
    binding (or one that may bind anything: ``import *``, a module ``__getattr__``), None for none."""
    found = None
    for node in body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            inner = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", []),
                     *(s for h in getattr(node, "handlers", []) for s in h.body)]
            found = found or _binds(inner, name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = found or (node.name in (name, "__getattr__") or None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found = found or (any(a.name == "*" or (a.asname or a.name.split(".")[0]) == name
                                  for a in node.names) or None)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found = found or (any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))
                              or None)
    return found


def _check_class_source(spec, module_name: str, qualname: str, model_name: str) -> None:
    """Refuse a ``qualname`` that the module's source file does not bind, reading (never running) the file."""
    try:
        tree = ast.parse(Path(spec.origin).read_bytes(), filename=spec.origin)
    except (OSError, SyntaxError, ValueError) as exc:
        raise CandorError(f"{model_name}: cannot read the source of module {module_name!r} ({first_line(exc)})") \
            from None
    body = tree.body
    for part in qualname.split("."):
        node = _binds(body, part)
        if node is None:
            raise CandorError(f"{model_name}: module {module_name!r} has no class {qualname!r} (checked in "
                              f"{Path(spec.origin).name}, which was not imported)")
        if node is True:
            return  # bound by an import or an assignment: the import below checks what it is
        body = node.body


def _check_module(spec_text: str, model_name: str, trust_code: bool) -> None:
    """Check a ``package.module:ClassName`` against its module's source before anything is imported.

    The module (and each package above it, whose ``__init__`` an import runs) must be a Python source file
    outside the standard library and the installed packages: the operator's own code, on ``PYTHONPATH`` or in
    the working directory. torch's own ``torch.nn`` modules are allowed; anything else only with
    ``trust_code`` (``--trust-model-code``). The class must be bound in the module's source (:mod:`ast`).

    Raises
    ------
    CandorError
        A module not found, one outside the operator's code without ``trust_code``, or no such class.
    """
    from importlib.machinery import SourceFileLoader

    module_name, qualname = spec_text.split(":")
    specs = _find_module(module_name)
    if specs is None:
        if trust_code:
            return  # e.g. a builtin or a custom importer: imported as asked
        raise CandorError(f"{model_name}: cannot import module {module_name!r} of class {spec_text} "
                          f"(ModuleNotFoundError: no Python source file for {module_name!r} on the path); it must be "
                          "importable from the working directory or PYTHONPATH")
    final = specs[-1]
    source = isinstance(final.loader, SourceFileLoader) and final.origin
    if source:
        _check_class_source(final, module_name, qualname, model_name)
    if trust_code or module_name == "torch.nn" or module_name.startswith("torch.nn."):
        return
    system = _system_folders()
    for spec in specs:
        if spec.origin in (None, "namespace") and spec.submodule_search_locations is not None:
            continue  # a namespace package runs no code
        origin = Path(spec.origin).resolve() if spec.origin and spec.has_location else None
        where = ("not a Python source file" if origin is None or not isinstance(spec.loader, SourceFileLoader)
                 else "in the Python installation or its installed packages"
                 if any(origin.is_relative_to(f) for f in system) else None)
        if where:
            raise CandorError(f"{model_name}: model class {spec_text}: module {spec.name!r} is {where} "
                              f"({spec.origin}), not your own code, so it is not imported; name a class from "
                              "PYTHONPATH or the working directory, or pass --trust-model-code")


def _import_class(spec: str, model_name: str, trust_code: bool = False):
    from torch import nn

    if not _CLASS_SPEC.match(spec):
        raise CandorError(f"{model_name}: model class {spec!r} must be written package.module:ClassName")
    _check_module(spec, model_name, trust_code)  # reads, never runs, before the import
    module_name, qualname = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise CandorError(f"{model_name}: cannot import module {module_name!r} of class {spec} ({first_line(exc)}); "
                          "it must be importable from the working directory or the environment") from None
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise CandorError(f"{model_name}: module {module_name!r} has no class {qualname!r}")
    if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
        raise CandorError(f"{model_name}: {spec} is not a torch.nn.Module subclass")
    return obj


def _build(path: Path, opts: TorchOptions, trust_code: bool = False):
    """A module from a state dict file and the named class (checked, then imported), weights loaded strictly."""
    state = _read_state_dict(path)
    if opts.model_class is None:
        raise CandorError(f"{path.name}: not a TorchScript archive but a state dict ({len(state)} tensors), and no "
                          f"model class was given: pass --torch-class package.module:ClassName (and --torch-kwargs "
                          f"JSON), or write them in {path.name}.json")
    cls = _import_class(opts.model_class, path.name, trust_code)
    try:
        module = cls(**(opts.kwargs or {}))
    except Exception as exc:
        raise CandorError(f"{path.name}: could not build {opts.model_class}(**{json.dumps(opts.kwargs or {})}) "
                          f"({first_line(exc)})") from None
    want = module.state_dict()
    missing = [k for k in want if k not in state]
    unexpected = [k for k in state if k not in want]
    shapes = [f"{k} file {tuple(state[k].shape)} vs class {tuple(want[k].shape)}" for k in want
              if k in state and tuple(state[k].shape) != tuple(want[k].shape)]
    problems = [f"{what}: {', '.join(keys[:8])}{f' and {len(keys) - 8} more' if len(keys) > 8 else ''}"
                for what, keys in (("missing keys", missing), ("unexpected keys", unexpected),
                                   ("shape mismatch", shapes)) if keys]
    if problems:
        raise CandorError(f"{path.name}: the weights do not fit {opts.model_class}: {'; '.join(problems)}")
    try:
        module.load_state_dict(state, strict=True)
    except Exception as exc:
        raise CandorError(f"{path.name}: load_state_dict(strict=True) failed ({first_line(exc)})") from None
    return module


def load_torch_model(path: Path, options: TorchOptions | None = None, *, trust_code: bool = False):
    """Load a state dict + class, or a trusted TorchScript archive, as a :class:`~explainers.torch_model.TorchTabularModel`.

    Parameters
    ----------
    path : Path
        ``.pt``/``.pth``/``.torchscript``/``.safetensors``.
    options : TorchOptions, optional
        Override ``<path>.json`` key by key.
    trust_code : bool, default=False
        Allow a TorchScript archive, whose program runs when loaded (``--trust-model-code``).

    Raises
    ------
    CandorError
        Naming the file and the problem: a TorchScript archive without ``trust_code``, a pickle
        with code, a zip that unpacks to more than the limit, a state dict without a class, a
        class that cannot be imported or built, keys or shapes that do not match, outputs that
        do not fit the classes.
    """
    import torch

    from explainers.torch_model import TorchTabularModel

    from .model_safety import check_archive

    opts = (options or TorchOptions()).over(read_sidecar(path))
    if zipfile.is_zipfile(path):
        check_archive(path)
    if _is_torchscript(path):
        if opts.model_class is not None or opts.kwargs is not None:
            raise CandorError(f"{path.name} is a TorchScript archive, which carries its own code: a model class "
                              "and kwargs apply only to state dicts; remove them")
        if not trust_code:
            raise CandorError(f"{path.name} is a TorchScript archive: a program that runs when loaded and can read "
                              "or write any file; pass --trust-model-code only if you trust this file, or save "
                              "torch.save(model.state_dict(), path) and name the class with --torch-class")
        try:
            with warnings.catch_warnings():  # torch 2.13 deprecates TorchScript; the archive still loads
                warnings.simplefilter("ignore", DeprecationWarning)
                module, how = torch.jit.load(str(path), map_location="cpu"), "TorchScript"
        except Exception as exc:
            raise CandorError(f"{path.name}: not a loadable TorchScript archive ({first_line(exc)})") from None
    else:
        module, how = _build(path, opts, trust_code), f"state dict + {opts.model_class}"
    task = "classification" if opts.classes is not None else "regression"
    try:
        model = TorchTabularModel(module, task=task, classes=opts.classes, output=opts.output or "logits",
                                  feature_names=opts.feature_names, source=f"{how} {path.name}")
    except (TypeError, ValueError) as exc:
        raise CandorError(f"{path.name}: {exc}") from None
    n = getattr(model, "n_features_in_", None)
    if n is not None:  # the output shape against the classes, before any data is read
        import numpy as np

        try:
            model.predict(np.zeros((2, n)))
        except ValueError as exc:
            raise CandorError(f"{path.name}: {exc}") from None
    return model


def is_torch_model(model) -> bool:
    """Whether ``model`` is a :class:`~explainers.torch_model.TorchTabularModel` (without importing torch)."""
    import sys

    module = sys.modules.get("explainers.torch_model")
    return module is not None and isinstance(model, module.TorchTabularModel)


def check_numeric_columns(codec, data_name: str, model_name: str) -> None:
    """A tensor model takes floats: refuse string, category and datetime columns, naming them.

    Raises
    ------
    CandorError
        If any column of ``codec`` is not numeric.
    """
    bad = [c for c in codec.columns if c.kind != "numeric"]
    if bad:
        cols = ", ".join(f"{c.name!r} ({c.kind}, dtype {c.dtype})" for c in bad[:5])
        many = len(bad) > 1
        raise CandorError(f"{data_name}: the PyTorch model {model_name} takes numbers only, but column"
                          f"{'s' if many else ''} {cols} {'are' if many else 'is'} not numeric; encode "
                          f"{'them' if many else 'it'} in the table as the model was trained (e.g. one number "
                          "per category)")
