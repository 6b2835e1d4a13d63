"""``python -m sample_models [--force]``: build every bundled sample model that is missing."""
from __future__ import annotations

import argparse
import sys

from . import build_breast_cancer, build_tabular_transformer

BUILDERS = (
    (build_breast_cancer, (build_breast_cancer.MODEL_PATH, build_breast_cancer.META_PATH)),
    (build_tabular_transformer, (build_tabular_transformer.WEIGHTS_PATH, build_tabular_transformer.META_PATH)),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sample_models", description=__doc__)
    parser.add_argument("--force", action="store_true", help="rebuild even if the files exist")
    args = parser.parse_args(argv)
    for module, paths in BUILDERS:
        if args.force or not all(p.exists() for p in paths):
            print(f"building {module.__name__} ...", file=sys.stderr)
            module.build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
