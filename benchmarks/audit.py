"""Benchmark: an independent audit of every number issue 13 names.

Run ``python -m benchmarks.audit`` (``--quick``: tiny sizes for CI, its figures not the audited ones; ``--only shap,muse`` for some parts).
Each part in :mod:`benchmarks.audit_parts` recomputes one kind of figure twice: once with Candor's own
code (the product's figure) and once with code that shares nothing with it (a brute-force enumeration,
a closed form, or another library: shap, lime, scikit-learn, numpy on raw attention), and prints both
with their difference. Parts:

* ``shap`` - permutation SHAP against exact Tree SHAP; raw-column Shapley values of a pipeline against
  a brute-force enumeration with raw columns as players (Adult).
* ``heads`` - positional heads of MiniLM on UD English-EWT (Voita et al. 2019), recomputed in numpy.
* ``muse`` - MUSE against CART drawn as a decision set with a default rule, at 4, 7 and 10 predicates.
* ``lopardo`` - the LIME approximation of Lopardo et al. 2024 against the lime library.
* ``aopc`` - AOPC and deletion/insertion against a numpy recomputation on a real row.
* ``stability`` - LIME's standard errors against the spread over independent seeds; SHAP top-k stability.

A part whose data is missing (``../shared/data``) or that fails says so in the table; the others run.
The last line printed is one JSON object with every part's headline figures (at least
``perm_shap_rel_error``, ``raw_column_shap_rel_error``, ``positional_heads``, ``muse_vs_cart``,
``lopardo_lime_pearson``) and ``"failed"``: the parts that could not run, with the reason.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import time
import traceback

PARTS = ("shap", "heads", "muse", "lopardo", "aopc", "stability")


def _cell(value) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.4f}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    return str(value)


def _table(rows: list[dict]) -> str:
    cols = ("part", "item", "product", "independent", "difference", "note")
    cells = [[_cell(r.get(c, "")) for c in cols] for r in rows]
    widths = [min(60, max([len(c)] + [len(row[i]) for row in cells])) for i, c in enumerate(cols)]
    line = lambda items: "  ".join(str(v)[:w].ljust(w) for v, w in zip(items, widths))  # noqa: E731
    return "\n".join([line(cols), line("-" * w for w in widths)] + [line(row) for row in cells])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.audit", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes for CI (figures not asserted)")
    parser.add_argument("--only", default=",".join(PARTS), help=f"comma-separated parts of {', '.join(PARTS)}")
    args = parser.parse_args(argv)
    rows, headline, failed = [], {}, {}
    for name in [p.strip() for p in args.only.split(",") if p.strip()]:
        if name not in PARTS:
            parser.error(f"unknown part {name!r}; parts are {', '.join(PARTS)}")
        t0 = time.perf_counter()
        try:
            part = importlib.import_module(f"benchmarks.audit_parts.{name}")
            part_rows, figures = part.run(quick=args.quick)
        except Exception as exc:  # one part failing must not hide the others' figures
            failed[name] = f"{type(exc).__name__}: {exc}"
            rows.append({"part": name, "item": "(part failed)", "note": failed[name]})
            traceback.print_exc()
            continue
        rows += [{"part": name, **r} for r in part_rows]
        headline.update(figures)
        print(f"[{name}: {time.perf_counter() - t0:.0f} s]", flush=True)
    print()
    print(_table(rows))
    headline["failed"] = failed
    print(json.dumps(headline, default=float))
    return headline


if __name__ == "__main__":
    main()
