"""What a PyTorch model file does not say about itself: :class:`TorchOptions`, from flags, variables or a sidecar.

Kept apart from :mod:`workspace.torch_files` (which loads models) so that :mod:`workspace.settings` can
parse these options without importing the loader.
"""
from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, fields, replace

from .errors import CandorError

ENV = {"model_class": "CANDOR_TORCH_CLASS", "kwargs": "CANDOR_TORCH_KWARGS", "classes": "CANDOR_TORCH_CLASSES",
       "output": "CANDOR_TORCH_OUTPUT"}

@dataclass(frozen=True)
class TorchOptions:
    """What a PyTorch file does not say about itself. ``None`` everywhere means "not given".

    Parameters
    ----------
    model_class : str, optional
        ``package.module:ClassName`` of the module a state dict belongs to.
    kwargs : dict, optional
        Keyword arguments of the class's constructor.
    classes : tuple, optional
        Class labels in output order; ``None`` means regression.
    output : {"logits", "probabilities"}, optional
        Default "logits".
    feature_names : tuple of str, optional
        The model's input columns, in order.
    """

    model_class: str | None = None
    kwargs: dict | None = None
    classes: tuple | None = None
    output: str | None = None
    feature_names: tuple | None = None

    def given(self) -> list[str]:
        """Names of the options set (for "applies to PyTorch models only" messages)."""
        return [f.name for f in fields(self) if getattr(self, f.name) is not None]

    def over(self, base: TorchOptions) -> TorchOptions:
        """These options, with every unset one taken from ``base``."""
        return replace(base, **{k: getattr(self, k) for k in self.given()})

    @classmethod
    def from_strings(cls, model_class=None, kwargs=None, classes=None, output=None) -> TorchOptions:
        """Options from command-line / environment text (``kwargs`` JSON, ``classes`` comma-separated).

        Raises
        ------
        CandorError
            For kwargs that are not a JSON object or an unknown output.
        """
        kw = None
        if kwargs:
            try:
                kw = json.loads(kwargs)
            except json.JSONDecodeError as exc:
                raise CandorError(f"--torch-kwargs is not valid JSON ({exc.msg} at character {exc.pos})") from None
            if not isinstance(kw, dict):
                raise CandorError(f"--torch-kwargs must be a JSON object, got {type(kw).__name__}")
        names = tuple(c.strip() for c in classes.split(",")) if classes else None
        if output is not None and output not in ("logits", "probabilities"):
            raise CandorError(f"--torch-output must be 'logits' or 'probabilities', got {output!r}")
        return cls(model_class or None, kw, names, output or None)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TorchOptions:
        return cls.from_strings(args.torch_class, args.torch_kwargs, args.classes, args.torch_output)

    @classmethod
    def from_env(cls, environ=os.environ) -> TorchOptions:
        """From ``CANDOR_TORCH_CLASS``, ``CANDOR_TORCH_KWARGS``, ``CANDOR_TORCH_CLASSES``, ``CANDOR_TORCH_OUTPUT``."""
        return cls.from_strings(*(environ.get(ENV[k]) for k in ("model_class", "kwargs", "classes", "output")))

    def to_env(self) -> dict[str, str]:
        """The ``CANDOR_TORCH_*`` variables that :meth:`from_env` reads back (set options only)."""
        text = {"model_class": self.model_class, "output": self.output,
                "kwargs": json.dumps(self.kwargs) if self.kwargs is not None else None,
                "classes": ",".join(map(str, self.classes)) if self.classes is not None else None}
        return {ENV[k]: v for k, v in text.items() if v is not None}


def add_torch_arguments(parser: argparse.ArgumentParser) -> None:
    """The PyTorch options of ``python -m app`` and ``python -m app check``."""
    g = parser.add_argument_group("PyTorch models (.pt/.pth/.torchscript/.safetensors; see also <model>.json)")
    g.add_argument("--torch-class", metavar="PKG.MODULE:CLASS",
                   help="module class of a state dict (trusted code: it is imported and built)")
    g.add_argument("--torch-kwargs", metavar="JSON", help="constructor keyword arguments, a JSON object")
    g.add_argument("--classes", metavar="A,B,...",
                   help="class names in output order: a PyTorch model's (omit for a regressor), or the names "
                        "people read for a scikit-learn model's classes_, in their order")
    g.add_argument("--torch-output", choices=("logits", "probabilities"), help="what the module returns "
                                                                               "(default logits)")
