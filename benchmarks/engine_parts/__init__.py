"""Parts of :mod:`benchmarks.engine`: ``tree`` (exact Tree SHAP against brute force and shap, per family) and
``agnostic`` (LIME and permutation SHAP on Adult pipelines)."""
