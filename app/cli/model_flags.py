"""The command-line flags that name a model and its data: ``python -m app`` and ``python -m app build`` take the same."""
from __future__ import annotations

import argparse

from workspace.torch_options import add_torch_arguments


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--model``, ``--data``, ``--target``, ``--features-file``, ``--target-class``, ``--trust-model-code``
    and the ``--torch-*`` flags to ``p``."""
    p.add_argument("--model", help="fitted scikit-learn estimator or Pipeline (.skops; .joblib/.pkl with "
                                   "--trust-model-code) or PyTorch tabular model (a state dict .pt/.pth/.safetensors "
                                   "with --torch-class; TorchScript with --trust-model-code)")
    p.add_argument("--data", help="CSV/TSV or Parquet with the model's feature columns and the target column")
    p.add_argument("--target", help="name of the target column in --data")
    p.add_argument("--features-file", metavar="FILE", help="YAML/JSON of the features' display names, descriptions "
                   "and value formats (default: <data>.features.yaml beside --data, if present)")
    p.add_argument("--target-class", help="class the pages explain against the rest (a multiclass model; default "
                                          "the last class; the navbar's class picker switches it)")
    p.add_argument("--trust-model-code", "--trust-pickle", dest="trust_pickle", action="store_true",
                   help="the model file may RUN CODE: allow .joblib/.pkl, TorchScript, and skops types outside "
                        "Candor's reviewed list; only for files you trust (never for uploads)")
    add_torch_arguments(p)


STORE_HELP = ("serve from a store written by python -m app build for this model and data (checked: hashes, sizes); "
              "rows it lacks are explained live and added to it")


def add_serving_arguments(p: argparse.ArgumentParser) -> None:
    """:func:`add_model_arguments` and ``--store``: what ``python -m app`` loads its workspace from."""
    add_model_arguments(p)
    p.add_argument("--store", help=STORE_HELP)


def model_args_error(args) -> str | None:
    """The one-line refusal ``python -m app`` gives for flags that go together, or None when they fit."""
    from workspace.errors import CandorError
    from workspace.torch_options import TorchOptions

    given = [args.model, args.data, args.target]
    if any(given) and not all(given):
        missing = ", ".join(f"--{n}" for n, v in zip(("model", "data", "target"), given) if not v)
        return f"--model, --data and --target go together; missing {missing}"
    try:
        torch_given = TorchOptions.from_args(args).given()
    except CandorError as err:
        return str(err)
    if torch_given and not args.model:
        return "--torch-class, --torch-kwargs, --classes and --torch-output go with --model"
    if args.target_class and not args.model:
        return "--target-class goes with --model"
    if args.features_file and not args.model:
        return "--features-file goes with --model"
    return None


def load_workspace(args):
    """The workspace ``python -m app`` serves for these parsed flags (the bundled sample without ``--model``).

    The same path as the server's: :meth:`workspace.settings.Settings.from_args` (flags over the environment),
    :meth:`app.services.selection.Selection.from_settings`, its ``load``; a ``--store`` is checked as at start
    (:func:`store.read.open_for`), and every stored row's entry parsed and checked (a server checks each when its
    row is asked: :meth:`store.read.Store.check_entries`). ``study validate``, ``power``, ``prereg`` and
    ``simulate`` load with it.

    Raises
    ------
    CandorError
        As the server's start: flags that do not go together, files that cannot be loaded, a store that does
        not match.
    """
    from workspace.errors import CandorError
    from workspace.settings import Settings

    problem = model_args_error(args)
    if problem:
        raise CandorError(problem)
    if not hasattr(args, "text_model"):
        args.text_model = None
    settings = Settings.from_args(args)
    from ..services.selection import Selection

    ws = Selection.from_settings(settings).load()
    if settings.store:
        from store.read import open_for

        open_for(settings, ws).check_entries()
    return ws
